#!/usr/bin/env bash
# Runs one command inside the soft-RoCE guest and returns its exit status.
#
#   run.sh [--numa] [--pin] [--timeout SECONDS] [--verbose] [--share DIR] -- CMD [ARG...]
#
# The guest (qemu, TCG by default) boots Debian's stock kernel prepared by
# prepare.sh, sees the host's root read-only, creates rxe0 on a veth at
# 198.18.0.1/24 and runs CMD from the current directory with WHARF_GUEST=1.
# CMD's output is streamed here; the guest console goes to a log file
# ($WHARF_VM_LOGDIR/console.log, default out/vm/ under the current directory).
# qemu never outlives this script: on timeout (exit 124), Ctrl-C or any exit
# it is killed.
#
# --pin (or WHARF_VM_PIN=1) pins vCPU i's thread to host CPU i (modulo the
# host's CPUs), so that a guest CPU's caches stay on one host core; for
# benchmarks. qemu's other threads stay unpinned.
#
# Environment: WHARF_VM_ACCEL=tcg|kvm (default tcg), WHARF_VM_MEM (MiB,
# default 3072), WHARF_VM_CPUS (default 2), WHARF_VM_TIMEOUT (default 600),
# WHARF_VM_CACHE (see prepare.sh), WHARF_VM_LOGDIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
numa=0
pin=${WHARF_VM_PIN:-0}
verbose=0
timeout=${WHARF_VM_TIMEOUT:-600}
share=""

usage() {
	sed -n '2,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case "$1" in
	--numa) numa=1 ;;
	--pin) pin=1 ;;
	--verbose) verbose=1 ;;
	--timeout)
		timeout=$2
		shift
		;;
	--share)
		share=$2
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		break
		;;
	-*)
		echo "run.sh: unknown option $1" >&2
		exit 2
		;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || {
	usage >&2
	exit 2
}
case "$timeout" in
'' | *[!0-9]*)
	echo "run.sh: --timeout takes seconds" >&2
	exit 2
	;;
esac

vmdir=$("$here/prepare.sh")
kver=$(cat "$vmdir/kver")
mem=${WHARF_VM_MEM:-3072}
cpus=${WHARF_VM_CPUS:-2}
logdir=${WHARF_VM_LOGDIR:-$PWD/out/vm}
mkdir -p "$logdir"

rundir=$(mktemp -d /tmp/wharf-vm.XXXXXX)
[ -n "$share" ] || share=$rundir/share
mkdir -p "$share"
rm -f "$share/rc" "$share/t_start" "$share/t_end"
out=$rundir/out.log
console=$logdir/console.log
: >"$out"

{
	printf 'WHARF_CWD=%q\n' "$PWD"
	printf 'WHARF_MODROOT=%q\n' "$vmdir/root"
	printf 'WHARF_KVER=%q\n' "$kver"
} >"$share/env"
{
	printf 'set -o pipefail\n'
	printf '%q ' "$@"
	printf '\n'
} >"$share/cmd.sh"

case "${WHARF_VM_ACCEL:-tcg}" in
kvm)
	accel=(-accel kvm -cpu host)
	kclock=""
	;;
tcg)
	accel=(-accel tcg,thread=multi -cpu max)
	# TCG's vCPU TSCs all read the host's TSC, but the guest kernel's
	# boot-time sync check calls them unsynchronized and falls back to
	# HPET: every clock_gettime() becomes a syscall plus an emulated MMIO
	# read (the storm's timestamps, the kernel's own timekeeping).
	# tests/guest/vm_clock_test checks the clock stays monotonic.
	kclock="tsc=reliable"
	;;
*)
	echo "run.sh: WHARF_VM_ACCEL must be tcg or kvm" >&2
	exit 2
	;;
esac

numa_args=()
if [ "$numa" = 1 ]; then
	half=$((mem / 2))
	last=$((cpus - 1))
	split=$((cpus / 2))
	[ "$split" -ge 1 ] || split=1
	numa_args=(
		-object "memory-backend-ram,id=mem0,size=${half}M"
		-object "memory-backend-ram,id=mem1,size=$((mem - half))M"
		-numa "node,nodeid=0,cpus=0-$((split - 1)),memdev=mem0"
		-numa "node,nodeid=1,cpus=$split-$last,memdev=mem1"
	)
fi

qpid=""
tpid=""
cleanup() {
	set +e
	if [ -n "$qpid" ]; then
		kill -KILL "$qpid" 2>/dev/null
		wait "$qpid" 2>/dev/null
	fi
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	[ -f "$rundir/console.log" ] && cp "$rundir/console.log" "$console"
	rm -rf "$rundir"
	return 0
}
trap cleanup EXIT
trap 'echo "run.sh: interrupted" >&2; exit 130' INT TERM HUP

qemu-system-x86_64 "${accel[@]}" -smp "$cpus" -m "$mem" "${numa_args[@]}" \
	-name wharf,debug-threads=on -nodefaults -display none -monitor none -no-reboot -nic none \
	-kernel "$vmdir/vmlinuz" -initrd "$vmdir/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 $kclock wharf.init=$here/guest-init.sh" \
	-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$share,mount_tag=work,security_model=none" \
	-serial "file:$rundir/console.log" -serial "file:$out" \
	</dev/null >"$rundir/qemu.log" 2>&1 &
qpid=$!

# vCPU threads are named "CPU N/TCG" (or "CPU N/KVM") with debug-threads;
# qemu creates them before the guest runs. Bounded wait: 10 s.
pin_vcpus() {
	local ncpu tries=0 pinned t name n
	ncpu=$(nproc)
	while [ "$tries" -lt 100 ]; do
		pinned=0
		for t in /proc/"$qpid"/task/*; do
			name=$(cat "$t/comm" 2>/dev/null) || continue
			case "$name" in
			"CPU "*/*)
				n=${name#CPU }
				n=${n%%/*}
				taskset -p -c $((n % ncpu)) "${t##*/}" >/dev/null &&
					pinned=$((pinned + 1))
				;;
			esac
		done
		if [ "$pinned" -ge "$cpus" ]; then
			echo "vm: $pinned vCPU threads pinned to host CPUs" >&2
			return 0
		fi
		tries=$((tries + 1))
		sleep 0.1
	done
	echo "run.sh: --pin: found $pinned of $cpus vCPU threads" >&2
	return 1
}
[ "$pin" != 1 ] || pin_vcpus || exit 1

if [ "$verbose" = 1 ]; then
	tail -n +1 -F --pid="$qpid" "$out" "$rundir/console.log" 2>/dev/null &
else
	tail -n +1 -f --pid="$qpid" "$out" 2>/dev/null &
fi
tpid=$!

start=$SECONDS
while kill -0 "$qpid" 2>/dev/null; do
	if [ $((SECONDS - start)) -ge "$timeout" ]; then
		kill -KILL "$qpid" 2>/dev/null || true
		wait "$qpid" 2>/dev/null || true
		qpid=""
		sleep 0.3
		echo "run.sh: guest timed out after ${timeout}s (killed)" >&2
		exit 124
	fi
	sleep 0.2
done
wait "$qpid" 2>/dev/null || true
qpid=""
wait "$tpid" 2>/dev/null || true
tpid=""

if [ -f "$share/rc" ]; then
	# Boot = guest uptime when the command started (kernel + setup of rxe0).
	if [ -f "$share/t_start" ] && [ -f "$share/t_end" ]; then
		awk -v b="$(cat "$share/t_start")" -v e="$(cat "$share/t_end")" \
			-v w="$((SECONDS - start))" 'BEGIN {
			printf "vm: boot %.1f s, command %.1f s, wall %d s\n",
				b, e - b, w }' >&2
	fi
	exit "$(cat "$share/rc")"
fi
echo "run.sh: the guest stopped without an exit status; console tail:" >&2
tail -n 20 "$rundir/console.log" >&2 || true
cat "$rundir/qemu.log" >&2 || true
exit 125
