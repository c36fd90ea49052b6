#!/usr/bin/env bash
# bench/nvmf/two_node.sh - the NVMe-oF host benchmark (host_vs_kernel.sh)
# with the target and the host on separate nodes: two guests joined by a
# wire (tools/vm/run.sh --nodes 2).  Node a serves nvmet-rdma (brd
# /dev/ram0), then wharf-nvmf-tgt (a ram: namespace, one shard); node b
# drives each with the kernel's nvme-rdma host (one I/O queue) under fio
# (io_uring, O_DIRECT) and with wharf-nvmf-perf (one I/O queue), 4k
# randread and randwrite at each QD, back to back; the nodes take turns
# through tools/vm/rendezvous.sh ("TARGET.up", "TARGET.done").  Each node
# has one vCPU: fio and wharf-nvmf-perf run on node b's CPU 0 (and the
# kernel's rxe work with them), wharf-nvmf-perf sleeping when idle (-p
# event) unless -p says otherwise.  Run it on the machine, not in a
# guest, one guest boot at a time machine-wide:
#
#   flock -o /tmp/wharf-vm.lock bench/nvmf/two_node.sh [OPTIONS]
#
# Options: -r SECONDS (per run, default 8; fio ramps 2 s more),
#          -q 'QD ...' (default '1 16'),
#          -p event|busy|adaptive (wharf-nvmf-perf's idle shards,
#             default event),
#          -o DIR (default out/bench): DIR/two_node.txt (node b's
#             table), DIR/two_node.json (every row),
#             DIR/two_node.log (both nodes' whole output)
#          -T SECONDS (the guests' hard timeout, default 1500)
# Builds wharf-nvmf-tgt and wharf-nvmf-perf with -c opt first.  Exit
# status: run.sh's (0 when both nodes finished), 1 without rows.
# (Inside the guests run.sh starts it again with --node; not by hand.)
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
runtime=8
qds="1 16"
poll=event
outdir=out/bench
limit=1500
guest=0
usage() {
	sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}
if [ "${1:-}" = --node ]; then
	guest=1
	shift
fi
while getopts "r:q:p:o:T:h" o; do
	case $o in
	r) runtime=$OPTARG ;;
	q) qds=$OPTARG ;;
	p) poll=$OPTARG ;;
	o) outdir=$OPTARG ;;
	T) limit=$OPTARG ;;
	h)
		usage
		exit 0
		;;
	*)
		usage >&2
		exit 2
		;;
	esac
done

# --- in the guests --------------------------------------------------------
knqn=nqn.2024-01.io.wharf:twonode-nvmet
wnqn=nqn.2024-01.io.wharf:twonode-wharf
rv=$top/tools/vm/rendezvous.sh
# Node b waits for each target this long: node a's set-up, and node b's
# whole measurement of the target before.
up_limit=$((120 + 4 * (runtime + 20) * $(wc -w <<<"$qds")))

nqn_of() { if [ "$1" = nvmet ]; then echo "$knqn"; else echo "$wnqn"; fi; }
port_of() { if [ "$1" = nvmet ]; then echo 4420; else echo 4421; fi; }

# Node a: each target up, node b's turn, down again.
serve() {
	local t
	for t in nvmet wharf; do
		if [ $t = nvmet ]; then
			nvmf_log "nvmet-rdma: $knqn on /dev/ram0, port 4420"
			nvmet_setup "$knqn" /dev/ram0 4420 1
		else
			nvmf_log "wharf-nvmf-tgt: $wnqn on ram:64M, port 4421, one shard"
			nvmf_tgt_start "$work/tgt.log" "$tgt" -l "$nvmf_addr:4421" \
				-s "$wnqn" -n "1 ram:64M" -A -t 1 --cpus 0 || return 1
		fi
		"$rv" post "$t.up"
		"$rv" wait "$t.done" "$up_limit" >/dev/null ||
			nvmf_log "node b never finished with $t"
		if [ $t = nvmet ]; then
			nvmet_teardown "$knqn" 1
		else
			kill -TERM "$tgt_pid"
			wait "$tgt_pid"
			tgt_pid=
			grep "stats at exit" "$work/tgt.log" >&2
		fi
	done
}

# Node b: one row, kernel host then wharf-nvmf-perf.
row() { # target rw qd
	local nqn port dev k w ki ka kp wi wa wp ratio lr
	nqn=$(nqn_of "$1")
	port=$(port_of "$1")
	nvmf_log "$1 $2 QD$3: kernel nvme-rdma + fio io_uring"
	dev=$(nvmf_kconnect "$nqn" "$port" "$hostnqn") || return 1
	k=$(nvmf_fio "$dev" "$2" "$3" "$runtime" "$work")
	nvme disconnect -n "$nqn" >/dev/null
	[ -n "$k" ] || return 1
	nvmf_log "$1 $2 QD$3: wharf-nvmf-perf"
	w=$(nvmf_perf_run "$perf" "$nqn" "$port" "$2" "$3" "$runtime" 0 \
		"$poll" "$work") || return 1
	read -r ki ka kp <<<"$k"
	read -r wi wa wp <<<"$w"
	ratio=$(awk -v a="$wi" -v b="$ki" 'BEGIN {printf "%.2f", b ? a / b : 0}')
	lr=$(awk -v a="$wa" -v b="$ka" 'BEGIN {printf "%.2f", b ? a / b : 0}')
	printf '%-7s %-10s %4s %11.0f %11.0f %5sx %10.1f %10.1f %6sx %10.1f %10.1f\n' \
		"$1" "$2" "$3" "$ki" "$wi" "$ratio" "$ka" "$wa" "$lr" "$kp" "$wp"
	echo "{\"nodes\":2,\"target\":\"$1\",\"rw\":\"$2\",\"qd\":$3,\"runtime_s\":$runtime,\"poll\":\"$poll\",\"kernel\":{\"iops\":$ki,\"avg_us\":$ka,\"p99_us\":$kp},\"wharf\":{\"iops\":$wi,\"avg_us\":$wa,\"p99_us\":$wp}}" \
		>>"$WHARF_GUEST_SHARE/rows.json"
}

# Node b: every row against each target node a serves.
drive() {
	local t rw qd bad=0
	printf '%-7s %-10s %4s %11s %11s %6s %10s %10s %7s %10s %10s\n' \
		target "fio 4k" QD "kernel IOPS" "wharf IOPS" ratio "k avg us" \
		"w avg us" lat "k p99 us" "w p99 us"
	for t in nvmet wharf; do
		"$rv" wait "$t.up" "$up_limit" >/dev/null || {
			nvmf_log "node a never served $t"
			return 1
		}
		for rw in randread randwrite; do
			for qd in $qds; do
				row "$t" "$rw" "$qd" || {
					nvmf_log "$t $rw QD$qd failed"
					bad=1
				}
			done
		done
		"$rv" post "$t.done"
	done
	return "$bad"
}

in_guest() {
	prog=two_node
	# shellcheck source=tools/lib/nvmf.sh
	. "$top/tools/lib/nvmf.sh"
	nvmf_find_tgt
	perf=$nvmf_top/bazel-out/k8-opt/bin/initiators/nvmf/wharf-nvmf-perf
	[ -x "$perf" ] || perf=$nvmf_top/bazel-bin/initiators/nvmf/wharf-nvmf-perf
	hostnqn=$(cat /etc/nvme/hostnqn)
	work=$(mktemp -d)
	tgt_pid=
	# fio on node b's one CPU (tools/lib/nvmf.sh's nvmf_fio).
	nvmf_fio_cpu=0
	trap guest_cleanup EXIT
	nvmf_modules ram
	nvmf_log "node $WHARF_NODE: ${runtime}s runs, QD $qds, perf poll $poll"
	case "$WHARF_NODE" in
	a) serve ;;
	b) drive ;;
	*) return 2 ;;
	esac
}
# shellcheck disable=SC2317 # the EXIT trap runs it
guest_cleanup() {
	local t
	nvme disconnect -n "$knqn" >/dev/null 2>&1
	nvme disconnect -n "$wnqn" >/dev/null 2>&1
	[ -z "$tgt_pid" ] || { kill -TERM "$tgt_pid" 2>/dev/null && wait "$tgt_pid"; }
	nvmet_teardown "$knqn" 1
	# Node b stopped early: node a need not wait out its deadline.
	[ "$WHARF_NODE" = b ] || return 0
	for t in nvmet wharf; do
		[ -f "$WHARF_PAIR_SHARE/sync/$t.done.b" ] || "$rv" post "$t.done" aborted
	done
}

if [ "$guest" = 1 ]; then
	in_guest
	exit $?
fi

# --- on the machine ---------------------------------------------------------
[ "${WHARF_GUEST:-}" != 1 ] || {
	echo "two_node: run me on the machine; I boot the guests" >&2
	exit 2
}
cd "$top" || exit 2
echo "two_node: bazel build -c opt wharf-nvmf-tgt wharf-nvmf-perf" >&2
bazel build --color=no --curses=no -c opt //targets/nvmf:wharf-nvmf-tgt \
	//initiators/nvmf:wharf-nvmf-perf >&2 || exit 1
mkdir -p "$outdir"
share=$(mktemp -d /tmp/wharf-two-node.XXXXXX)
trap 'rm -rf "$share"' EXIT
echo "two_node: two guests, ${runtime}s runs, QD $qds, perf poll $poll" >&2
rc=0
WHARF_VM_TIMEOUT=$limit tools/vm/run.sh --nodes 2 --share "$share" -- \
	bench/nvmf/two_node.sh --node -r "$runtime" -q "$qds" -p "$poll" \
	>"$outdir/two_node.log" 2>&1 || rc=$?
# Node b's stdout: the table; its progress (stderr) comes interleaved,
# each line prefixed "two_node: ".
grep '^b| ' "$outdir/two_node.log" | sed 's/^b| //' |
	grep -v '^two_node: ' >"$outdir/two_node.txt"
cat "$outdir/two_node.txt"
if [ -s "$share/node-b/rows.json" ]; then
	{
		echo "["
		sed '$!s/$/,/' "$share/node-b/rows.json"
		echo "]"
	} >"$outdir/two_node.json"
	echo "two_node: wrote $outdir/two_node.txt, $outdir/two_node.json" >&2
else
	echo "two_node: no rows (run.sh exit $rc; log: $outdir/two_node.log)" >&2
	[ "$rc" != 0 ] || rc=1
fi
exit "$rc"
