#!/usr/bin/env bash
# Runs one command inside the soft-RoCE guest and returns its exit status;
# with --nodes 2, two guests joined by a virtual wire.
#
#   run.sh [--kernel 6.1|6.12] [--numa] [--pin] [--timeout SECONDS] [--verbose] [--share DIR] -- CMD [ARG...]
#   run.sh --nodes 2 [--node-a SHELLCMD] [--node-b SHELLCMD] [OPTIONS] [-- CMD [ARG...]]
#
# The guest (qemu, TCG by default) boots Debian's stock kernel prepared by
# prepare.sh (--kernel or WHARF_VM_KERNEL: 6.1, Debian 12's, the default;
# 6.12 from bookworm-backports), sees the host's root read-only, creates rxe0 on a veth at
# 198.18.0.1/24 and runs CMD from the current directory with WHARF_GUEST=1.
# CMD's output is streamed here; the guest console goes to a log file
# ($WHARF_VM_LOGDIR/console.log, default out/vm/ under the current directory).
# qemu never outlives this script: on timeout (exit 124), Ctrl-C or any exit
# it is killed.
#
# --nodes 2 boots two guests in parallel, node a and node b, each its own
# kernel, joined by a virtio-net wire (qemu's -netdev dgram over two Unix
# sockets in a private temporary directory: no host network). rxe0 sits on
# that NIC (eth0): 198.18.0.1 on node a, 198.18.0.2 on node b. Each node
# runs CMD (or its own --node-a / --node-b shell command, run by bash -c)
# with WHARF_NODE=a|b, WHARF_ADDR, WHARF_PEER_ADDR, WHARF_NIC, and
# WHARF_PAIR_SHARE: a folder both nodes share, where tools/vm/rendezvous.sh
# lets them meet. Output lines are prefixed "a| " and "b| "; the consoles go
# to $WHARF_VM_LOGDIR/node-a/console.log and node-b/. The exit status is 0
# when both commands exit 0, else node a's non-zero status, else node b's;
# 125 when a node stops without one. A node whose rxe0 is not up within
# WHARF_VM_BOOT_TIMEOUT seconds (default 180) stops the run (exit 125).
# Each guest gets WHARF_VM_CPUS vCPUs (default 1 with two nodes).
# A node crashes on request (tools/vm/fault.sh crash SECS writes "crash" in
# its folder): its qemu is killed at once, SECS later it boots again and
# runs its command anew with WHARF_BOOT=2 (3...), while the other node
# runs on; the last boot's exit status counts, and its console follows
# the earlier boots' in console.log.
#
# --pin (or WHARF_VM_PIN=1) pins vCPU i's thread to host CPU i (modulo the
# host's CPUs; node b's after node a's), so that a guest CPU's caches stay
# on one host core; for benchmarks. qemu's other threads stay unpinned.
#
# Environment: WHARF_VM_ACCEL=tcg|kvm (default tcg), WHARF_VM_MEM (MiB per
# guest, default 3072), WHARF_VM_CPUS (default 2, 1 with two nodes),
# WHARF_VM_TIMEOUT (default 600), WHARF_VM_BOOT_TIMEOUT (default 180),
# WHARF_VM_TSC_KHZ (TCG: the TSC rate the guest is told, default the
# host's "cpu MHz" when its TSC is constant; 0: let the guest calibrate),
# WHARF_VM_CACHE (see prepare.sh), WHARF_VM_LOGDIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
numa=0
pin=${WHARF_VM_PIN:-0}
verbose=0
timeout=${WHARF_VM_TIMEOUT:-600}
boot_timeout=${WHARF_VM_BOOT_TIMEOUT:-180}
share=""
nodes=1
cmd_a=""
cmd_b=""

usage() {
	sed -n '2,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}
need_arg() {
	[ "$2" -ge 2 ] || {
		echo "run.sh: $1 needs a value" >&2
		exit 2
	}
}

while [ $# -gt 0 ]; do
	case "$1" in
	--numa) numa=1 ;;
	--pin) pin=1 ;;
	--verbose) verbose=1 ;;
	--timeout | --share | --nodes | --node-a | --node-b | --kernel)
		need_arg "$1" $#
		case "$1" in
		--kernel) export WHARF_VM_KERNEL=$2 ;;
		--timeout) timeout=$2 ;;
		--share) share=$2 ;;
		--nodes) nodes=$2 ;;
		--node-a) cmd_a=$2 ;;
		--node-b) cmd_b=$2 ;;
		esac
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
case "$nodes" in
1)
	[ -z "$cmd_a$cmd_b" ] || {
		echo "run.sh: --node-a and --node-b need --nodes 2" >&2
		exit 2
	}
	names=(solo)
	;;
2)
	[ "$numa" = 0 ] || {
		echo "run.sh: --numa is for one node" >&2
		exit 2
	}
	names=(a b)
	;;
*)
	echo "run.sh: --nodes takes 1 or 2" >&2
	exit 2
	;;
esac
[ $# -gt 0 ] || { [ -n "$cmd_a" ] && [ -n "$cmd_b" ]; } || {
	usage >&2
	exit 2
}
for t in "$timeout" "$boot_timeout"; do
	case "$t" in
	'' | *[!0-9]*)
		echo "run.sh: --timeout and WHARF_VM_BOOT_TIMEOUT take seconds" >&2
		exit 2
		;;
	esac
done

vmdir=$("$here/prepare.sh")
kver=$(cat "$vmdir/kver")
echo "vm: kernel $kver" >&2
mem=${WHARF_VM_MEM:-3072}
if [ "$nodes" = 2 ]; then cpus=${WHARF_VM_CPUS:-1}; else cpus=${WHARF_VM_CPUS:-2}; fi
logdir=${WHARF_VM_LOGDIR:-$PWD/out/vm}
mkdir -p "$logdir"

rundir=$(mktemp -d /tmp/wharf-vm.XXXXXX)
[ -n "$share" ] || share=$rundir/share
mkdir -p "$share"

# A node's own folder in the share: the share itself for one node.
node_dir() {
	if [ "$1" = solo ]; then echo "$share"; else echo "$share/node-$1"; fi
}
for n in "${names[@]}"; do
	d=$(node_dir "$n")
	mkdir -p "$d"
	rm -f "$d/rc" "$d/t_start" "$d/t_end"
	{
		printf 'WHARF_CWD=%q\n' "$PWD"
		printf 'WHARF_MODROOT=%q\n' "$vmdir/root"
		printf 'WHARF_KVER=%q\n' "$kver"
	} >"$d/env"
	{
		printf 'set -o pipefail\n'
		c=""
		[ "$n" != a ] || c=$cmd_a
		[ "$n" != b ] || c=$cmd_b
		if [ -n "$c" ]; then
			printf 'bash -c %q\n' "$c"
		else
			printf '%q ' "$@"
			printf '\n'
		fi
	} >"$d/cmd.sh"
	: >"$rundir/out-$n.log"
done
[ "$nodes" = 1 ] || rm -rf "$share/sync"

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
	# The guest calibrates the TSC against the emulated HPET; with two
	# guests booting at once on a loaded host that went wrong (a clock
	# five times too fast: every timer of wharf and the kernel off). The
	# TSC the guest reads is the host's: tell it the host's rate.
	khz=${WHARF_VM_TSC_KHZ:-$(awk -F: '/^cpu MHz/ { m = $2 }
		/^flags/ { if (m && / constant_tsc/) printf "%d", m * 1000
		exit }' /proc/cpuinfo)}
	[ -z "$khz" ] || [ "$khz" = 0 ] || kclock+=" tsc_early_khz=$khz"
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

declare -A qpid=() boots=() bstart=() reboot_at=() tail_of=()
tpids=()
cleanup() {
	set +e
	local n
	for n in "${!qpid[@]}"; do
		kill -KILL "${qpid[$n]}" 2>/dev/null
		wait "${qpid[$n]}" 2>/dev/null
	done
	for n in "${tpids[@]}"; do kill "$n" 2>/dev/null; done
	for n in "${names[@]}"; do
		[ -f "$rundir/console-$n.log" ] || continue
		if [ "$n" = solo ]; then
			cp "$rundir/console-$n.log" "$logdir/console.log"
		else
			mkdir -p "$logdir/node-$n"
			cat "$rundir/console-$n".boot*.log \
				"$rundir/console-$n.log" \
				>"$logdir/node-$n/console.log" 2>/dev/null
		fi
	done
	rm -rf "$rundir"
	return 0
}
trap cleanup EXIT
trap 'echo "run.sh: interrupted" >&2; exit 130' INT TERM HUP

# Node a and node b: one virtio-net NIC each, the two joined by datagram
# Unix sockets (each binds its own path and sends to the other's).
boot() {
	local n=$1 net=(-nic none) node_arg=""
	if [ "$n" != solo ]; then
		local peer=b mac=52:54:00:77:00:01
		[ "$n" = a ] || {
			peer=a
			mac=52:54:00:77:00:02
		}
		net=(-netdev "dgram,id=wire,local.type=unix,local.path=$rundir/wire-$n,remote.type=unix,remote.path=$rundir/wire-$peer"
			-device "virtio-net-pci,netdev=wire,mac=$mac,romfile=")
		node_arg="wharf.node=$n wharf.boot=${boots[$n]}"
	fi
	bstart[$n]=$SECONDS
	qemu-system-x86_64 "${accel[@]}" -smp "$cpus" -m "$mem" "${numa_args[@]}" \
		-name "wharf-$n,debug-threads=on" -nodefaults -display none -monitor none -no-reboot "${net[@]}" \
		-kernel "$vmdir/vmlinuz" -initrd "$vmdir/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 $kclock wharf.init=$here/guest-init.sh $node_arg" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$share,mount_tag=work,security_model=none" \
		-serial "file:$rundir/console-$n.log" -serial "file:$rundir/out-$n.log" \
		</dev/null >"$rundir/qemu-$n.log" 2>&1 &
	qpid[$n]=$!
}

# vCPU threads are named "CPU N/TCG" (or "CPU N/KVM") with debug-threads;
# qemu creates them before the guest runs. Bounded wait: 10 s. Node b's
# vCPUs go to the host CPUs after node a's.
pin_vcpus() {
	local pid=$1 off=$2 ncpu tries=0 pinned t name n
	ncpu=$(nproc)
	while [ "$tries" -lt 100 ]; do
		pinned=0
		for t in /proc/"$pid"/task/*; do
			name=$(cat "$t/comm" 2>/dev/null) || continue
			case "$name" in
			"CPU "*/*)
				n=${name#CPU }
				n=${n%%/*}
				taskset -p -c $(((n + off) % ncpu)) "${t##*/}" >/dev/null &&
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

# Streams a node's command output (and with --verbose its console), each
# line prefixed with the node's name when there are two.
stream() {
	local n=$1 files=("$rundir/out-$n.log")
	[ "$verbose" = 0 ] || files+=("$rundir/console-$n.log")
	if [ "$n" = solo ]; then
		tail -n +1 -F --pid="${qpid[$n]}" "${files[@]}" 2>/dev/null &
	else
		tail -q -n +1 -F --pid="${qpid[$n]}" "${files[@]}" 2>/dev/null \
			> >(sed -u "s/^/$n| /") &
	fi
	tpids+=($!)
	tail_of[$n]=$!
}

start=$SECONDS
off=0
for n in "${names[@]}"; do
	boots[$n]=1
	boot "$n"
	[ "$pin" != 1 ] || pin_vcpus "${qpid[$n]}" "$off" || exit 1
	off=$((off + cpus))
	stream "$n"
done

kill_all() {
	local n
	for n in "${!qpid[@]}"; do
		kill -KILL "${qpid[$n]}" 2>/dev/null || true
		wait "${qpid[$n]}" 2>/dev/null || true
		unset "qpid[$n]"
	done
	sleep 0.3
}

alive() {
	local n
	[ "${#reboot_at[@]}" = 0 ] || return 0
	for n in "${!qpid[@]}"; do
		kill -0 "${qpid[$n]}" 2>/dev/null && return 0
	done
	return 1
}

# A node asked to crash: qemu killed now (no shutdown, nothing flushed),
# booted again at reboot_at; its earlier boot's logs are kept aside.
crash_node() {
	local n=$1 d secs
	d=$(node_dir "$n")
	secs=$(cat "$d/crash" 2>/dev/null || true)
	case "$secs" in '' | *[!0-9]*) secs=0 ;; esac
	kill -KILL "${qpid[$n]}" 2>/dev/null || true
	wait "${qpid[$n]}" 2>/dev/null || true
	unset "qpid[$n]"
	rm -f "$d/crash" "$d/t_start" "$d/t_end" "$d/rc"
	echo "vm: node $n crashed (qemu killed); booting again in ${secs}s" >&2
	sleep 1
	kill "${tail_of[$n]}" 2>/dev/null || true
	mv "$rundir/console-$n.log" "$rundir/console-$n.boot${boots[$n]}.log"
	mv "$rundir/out-$n.log" "$rundir/out-$n.boot${boots[$n]}.log"
	: >"$rundir/out-$n.log"
	boots[$n]=$((boots[$n] + 1))
	reboot_at[$n]=$((SECONDS + secs))
}

while alive; do
	for n in "${names[@]}"; do
		[ "$n" != solo ] || break
		if [ -n "${qpid[$n]:-}" ] && [ -f "$(node_dir "$n")/crash" ]; then
			crash_node "$n"
		elif [ -n "${reboot_at[$n]:-}" ] &&
			[ "$SECONDS" -ge "${reboot_at[$n]}" ]; then
			unset "reboot_at[$n]"
			boot "$n"
			stream "$n"
		fi
	done
	if [ $((SECONDS - start)) -ge "$timeout" ]; then
		kill_all
		echo "run.sh: guest timed out after ${timeout}s (killed)" >&2
		exit 124
	fi
	if [ "$nodes" = 2 ]; then
		for n in "${names[@]}"; do
			[ -n "${qpid[$n]:-}" ] || continue
			[ $((SECONDS - bstart[$n])) -ge "$boot_timeout" ] || continue
			[ ! -f "$(node_dir "$n")/t_start" ] || continue
			kill_all
			echo "run.sh: node $n did not come up within" \
				"${boot_timeout}s (both killed); its console" \
				"($logdir/node-$n/console.log) ends:" >&2
			tail -n 20 "$rundir/console-$n.log" >&2 || true
			cat "$rundir/qemu-$n.log" >&2 || true
			exit 125
		done
	fi
	sleep 0.2
done
for n in "${!qpid[@]}"; do
	wait "${qpid[$n]}" 2>/dev/null || true
	unset "qpid[$n]"
done
for n in "${tpids[@]}"; do wait "$n" 2>/dev/null || true; done
tpids=()
sleep 0.1

status=0
for n in "${names[@]}"; do
	d=$(node_dir "$n")
	who=""
	[ "$n" = solo ] || who="node $n: "
	label="vm: $who"
	if [ -f "$d/rc" ]; then
		# Boot = guest uptime when the command started (kernel + rxe0).
		if [ -f "$d/t_start" ] && [ -f "$d/t_end" ]; then
			awk -v b="$(cat "$d/t_start")" -v e="$(cat "$d/t_end")" \
				-v w="$((SECONDS - start))" -v l="$label" \
				-v rc="$(cat "$d/rc")" -v two="$nodes" 'BEGIN {
				printf "%sboot %.1f s, command %.1f s, wall %d s", l,
					b, e - b, w
				if (two == 2) printf ", exit %d", rc
				printf "\n" }' >&2
		fi
		rc=$(cat "$d/rc")
	else
		echo "run.sh: ${who}the guest stopped without an exit status; console tail:" >&2
		tail -n 20 "$rundir/console-$n.log" >&2 || true
		cat "$rundir/qemu-$n.log" >&2 || true
		rc=125
	fi
	[ "$status" != 0 ] || status=$rc
done
exit "$status"
