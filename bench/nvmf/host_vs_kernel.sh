#!/usr/bin/env bash
# bench/nvmf/host_vs_kernel.sh - the host side of NVMe-oF: wharf-nvmf-perf
# (<wharf/nvmf_host.h>, one I/O queue) against the guest kernel's
# nvme-rdma host (one I/O queue) driven by fio (io_uring, O_DIRECT), 4k
# randread and randwrite at QD 1, 16 and 64, against the kernel's
# nvmet-rdma (brd /dev/ram0) and wharf-nvmf-tgt (a ram: namespace), all in
# one guest boot.  The initiators run on CPU 1 (fio under taskset,
# wharf-nvmf-perf with --cpus 1), wharf-nvmf-tgt's one shard on CPU 0
# (nvmet runs in kernel context wherever the kernel puts it).  Each case
# runs the kernel host, then wharf-nvmf-perf, back to back.
# Prints per case both hosts' IOPS, average and p99 latency, the wharf /
# kernel IOPS ratio and the average-latency ratio; a summary line per
# target.  With -n ROUNDS each case runs ROUNDS times (kernel host, then
# wharf-nvmf-perf, then again), the table shows each value's median over
# the rounds and the lowest and highest per-round IOPS ratio: a shared
# 2-core machine makes single runs swing by tens of percent.
#
# Run it in the soft-RoCE guest:
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt \
#       //initiators/nvmf:wharf-nvmf-perf
#   ./wharf vm --timeout 1500 -- bench/nvmf/host_vs_kernel.sh
# Options: -r SECONDS (per run, default 10; fio ramps 2 s more),
#          -p event|busy|adaptive (wharf-nvmf-perf's idle shards, default
#             busy: the initiator owns its CPU, as SPDK's hosts poll),
#          -q 'QD ...' (default '1 16 64'),
#          -n ROUNDS (default 1; medians over the rounds),
#          -t 'TARGET ...' (nvmet, wharf; default both),
#          -j FILE (also write every row as JSON lines, each round's
#             values included)
# Progress on stderr; the table and the summary lines on stdout.
set -euo pipefail

runtime=10
poll=busy
qds="1 16 64"
json=
rounds=1
targets="nvmet wharf"
while getopts "r:p:q:j:n:t:h" o; do
	case $o in
	r) runtime=$OPTARG ;;
	p) poll=$OPTARG ;;
	q) qds=$OPTARG ;;
	j) json=$OPTARG ;;
	n) rounds=$OPTARG ;;
	t) targets=$OPTARG ;;
	h)
		sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
case $rounds in
'' | *[!0-9]* | 0)
	echo "host_vs_kernel: -n wants a positive number of rounds" >&2
	exit 2
	;;
esac
for t in $targets; do
	case $t in
	nvmet | wharf) ;;
	*)
		echo "host_vs_kernel: unknown target '$t' (nvmet, wharf)" >&2
		exit 2
		;;
	esac
done
prog=host_vs_kernel
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
nvmf_find_tgt
perf=$nvmf_top/bazel-out/k8-opt/bin/initiators/nvmf/wharf-nvmf-perf
[ -x "$perf" ] || perf=$nvmf_top/bazel-bin/initiators/nvmf/wharf-nvmf-perf
[ -x "$perf" ] || {
	nvmf_log "build //initiators/nvmf:wharf-nvmf-perf first"
	exit 2
}
log() { nvmf_log "$@"; }

addr=$nvmf_addr
knqn=nqn.2024-01.io.wharf:hostbench-nvmet
wnqn=nqn.2024-01.io.wharf:hostbench-wharf
hostnqn=$(cat /etc/nvme/hostnqn)
work=$(mktemp -d)
tgt_pid=
cleanup() {
	set +e
	nvme disconnect -n "$knqn" >/dev/null 2>&1
	nvme disconnect -n "$wnqn" >/dev/null 2>&1
	[ -n "$tgt_pid" ] && kill -TERM "$tgt_pid" 2>/dev/null && wait "$tgt_pid"
	nvmet_teardown "$knqn" 1
}
trap cleanup EXIT

nvmf_modules ram
log "wharf-nvmf-tgt $tgt, wharf-nvmf-perf $perf (poll $poll), ${runtime}s runs"

# wharf-nvmf-perf on NQN at PORT, RW, QD -> "IOPS AVG_US P99_US".
wharf_run() { # nqn port rw qd
	"$perf" --traddr "$addr" --trsvcid "$2" --subnqn "$1" --queues 1 \
		--cpus 1 --poll "$poll" --qd "$4" --io-size 4k --pattern "$3" \
		--time "$runtime" --json --quiet >"$work/perf" 2>"$work/perf.err" || {
		cat "$work/perf.err" "$work/perf" >&2
		return 1
	}
	nvmf_perf_iops_lat <"$work/perf"
}

printf '%-7s %-10s %4s %11s %11s %6s %13s %10s %10s %7s %10s %10s\n' target \
	"fio 4k" QD "kernel IOPS" "wharf IOPS" ratio "ratio range" "k avg us" \
	"w avg us" "lat" "k p99 us" "w p99 us"
measure() { # label nqn port
	local dev rw qd r k w min='' lat1='' rounds_json
	for rw in randread randwrite; do
		for qd in $qds; do
			: >"$work/k.rounds"
			: >"$work/w.rounds"
			rounds_json=
			for r in $(seq 1 "$rounds"); do
				log "$1 $rw QD$qd round $r/$rounds: kernel nvme-rdma + fio io_uring"
				dev=$(nvmf_kconnect "$2" "$3" "$hostnqn")
				k=$(nvmf_fio "$dev" $rw "$qd" "$runtime" "$work")
				nvme disconnect -n "$2" >/dev/null
				log "$1 $rw QD$qd round $r/$rounds: wharf-nvmf-perf"
				w=$(wharf_run "$2" "$3" $rw "$qd")
				echo "$k" >>"$work/k.rounds"
				echo "$w" >>"$work/w.rounds"
				read -r ki ka kp <<<"$k"
				read -r wi wa wp <<<"$w"
				rounds_json="$rounds_json${rounds_json:+,}{\"kernel\":{\"iops\":$ki,\"avg_us\":$ka,\"p99_us\":$kp},\"wharf\":{\"iops\":$wi,\"avg_us\":$wa,\"p99_us\":$wp}}"
			done
			ki=$(cut -d' ' -f1 "$work/k.rounds" | nvmf_median)
			ka=$(cut -d' ' -f2 "$work/k.rounds" | nvmf_median)
			kp=$(cut -d' ' -f3 "$work/k.rounds" | nvmf_median)
			wi=$(cut -d' ' -f1 "$work/w.rounds" | nvmf_median)
			wa=$(cut -d' ' -f2 "$work/w.rounds" | nvmf_median)
			wp=$(cut -d' ' -f3 "$work/w.rounds" | nvmf_median)
			range=$(paste -d' ' "$work/k.rounds" "$work/w.rounds" | awk '
				{ r = $1 ? $4 / $1 : 0; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r }
				END { printf "%.2f-%.2fx", lo, hi }')
			ratio=$(awk -v a="$wi" -v b="$ki" 'BEGIN {printf "%.2f", b ? a / b : 0}')
			lr=$(awk -v a="$wa" -v b="$ka" 'BEGIN {printf "%.2f", b ? a / b : 0}')
			printf '%-7s %-10s %4s %11.0f %11.0f %5sx %13s %10.1f %10.1f %6sx %10.1f %10.1f\n' \
				"$1" $rw "$qd" "$ki" "$wi" "$ratio" "$range" "$ka" "$wa" \
				"$lr" "$kp" "$wp"
			[ -z "$json" ] || echo "{\"target\":\"$1\",\"rw\":\"$rw\",\"qd\":$qd,\"rounds\":$rounds,\"kernel\":{\"iops\":$ki,\"avg_us\":$ka,\"p99_us\":$kp},\"wharf\":{\"iops\":$wi,\"avg_us\":$wa,\"p99_us\":$wp},\"each_round\":[$rounds_json]}" >>"$json"
			if [ "$qd" -gt 1 ]; then
				min=$(awk -v a="$ratio" -v b="${min:-1e9}" 'BEGIN {print a < b ? a : b}')
			else
				lat1="$lat1 $rw ${lr}x"
			fi
		done
	done
	echo "summary: $1: wharf-nvmf-perf / kernel host (fio io_uring), medians of $rounds round(s):" \
		"lowest IOPS ratio at QD>1 ${min:-(none run)}${min:+x} (goal 1.4x), QD1 average" \
		"latency ratio:$lat1 (goal 0.85x or less)"
}

run_nvmet() {
	log "nvmet-rdma: $knqn on /dev/ram0, port 4420"
	nvmet_setup "$knqn" /dev/ram0 4420 1
	measure nvmet "$knqn" 4420
	nvmet_teardown "$knqn" 1
}

run_wharf() {
	log "wharf-nvmf-tgt: $wnqn on ram:64M, port 4421, one shard on CPU 0"
	nvmf_tgt_start "$work/tgt.log" "$tgt" -l "$addr:4421" -s "$wnqn" \
		-n "1 ram:64M" -A -t 1 --cpus 0 || exit 1
	measure wharf "$wnqn" 4421
	kill -TERM "$tgt_pid"
	wait "$tgt_pid" || true
	tgt_pid=
	grep "stats at exit" "$work/tgt.log" >&2 || true
}

for t in $targets; do
	"run_$t"
done
