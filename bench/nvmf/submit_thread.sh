#!/usr/bin/env bash
# bench/nvmf/submit_thread.sh - what submitting from an application thread
# costs the NVMe-oF host: wharf-nvmf-perf with its completion callbacks
# resubmitting on the queue's owner shard ("callback") against the same
# run with --submit-thread (every I/O call made by one application thread,
# which the library hands to the owner through that thread's submission
# ring), against wharf-nvmf-tgt (a ram: namespace, one shard on CPU 0),
# one I/O queue, 4k randread and randwrite, all in one guest boot.  Each
# round runs both modes back to back; the table shows the medians over
# the rounds, the submit-thread / callback IOPS ratio, its range over the
# rounds and the average latency of both.
#
# Run it in the soft-RoCE guest:
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt \
#       //initiators/nvmf:wharf-nvmf-perf
#   ./wharf vm --timeout 1500 -- bench/nvmf/submit_thread.sh
# Options: -r SECONDS (per run, default 10),
#          -p event|busy|adaptive (wharf-nvmf-perf's shards, default event:
#             on a 2-CPU guest the submit thread shares CPU 1 with the
#             perf shard, and a busy shard would take its time),
#          -q 'QD ...' (default '16 64'),
#          -n ROUNDS (default 3; medians over the rounds),
#          -j FILE (also write every row as JSON lines, each round's
#             values included),
#          -P PATH (the wharf-nvmf-perf binary; default the -c opt build,
#             else bazel-bin: another build's, to compare two in one boot)
# Progress on stderr; the table and a summary line on stdout.
set -euo pipefail

runtime=10
poll=event
qds="16 64"
json=
rounds=3
perf=
while getopts "r:p:q:j:n:P:h" o; do
	case $o in
	r) runtime=$OPTARG ;;
	p) poll=$OPTARG ;;
	q) qds=$OPTARG ;;
	j) json=$OPTARG ;;
	n) rounds=$OPTARG ;;
	P) perf=$OPTARG ;;
	h)
		sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
case $rounds in
'' | *[!0-9]* | 0)
	echo "submit_thread: -n wants a positive number of rounds" >&2
	exit 2
	;;
esac
prog=submit_thread
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
nvmf_find_tgt
if [ -z "$perf" ]; then
	perf=$nvmf_top/bazel-out/k8-opt/bin/initiators/nvmf/wharf-nvmf-perf
	[ -x "$perf" ] || perf=$nvmf_top/bazel-bin/initiators/nvmf/wharf-nvmf-perf
fi
[ -x "$perf" ] || {
	nvmf_log "no wharf-nvmf-perf at $perf: build //initiators/nvmf:wharf-nvmf-perf first"
	exit 2
}
log() { nvmf_log "$@"; }

addr=$nvmf_addr
nqn=nqn.2024-01.io.wharf:submit-bench
work=$(mktemp -d)
tgt_pid=
cleanup() {
	set +e
	[ -n "$tgt_pid" ] && kill -TERM "$tgt_pid" 2>/dev/null && wait "$tgt_pid"
}
trap cleanup EXIT

nvmf_modules ram
log "wharf-nvmf-tgt $tgt, wharf-nvmf-perf $perf (poll $poll), ${runtime}s runs"
nvmf_tgt_start "$work/tgt.log" "$tgt" -l "$addr:4421" -s "$nqn" \
	-n "1 ram:64M" -A -t 1 --cpus 0 || exit 1

# wharf-nvmf-perf, RW at QD, extra options -> "IOPS AVG_US P99_US".
perf_run() { # rw qd [opts]
	"$perf" --traddr "$addr" --trsvcid 4421 --subnqn "$nqn" --queues 1 \
		--cpus 1 --poll "$poll" --qd "$2" --io-size 4k --pattern "$1" \
		--time "$runtime" --json --quiet ${3:+$3} >"$work/perf" \
		2>"$work/perf.err" || {
		cat "$work/perf.err" "$work/perf" >&2
		return 1
	}
	nvmf_perf_iops_lat <"$work/perf"
}


printf '%-10s %4s %14s %14s %6s %13s %11s %11s\n' "4k" QD "callback IOPS" \
	"thread IOPS" ratio "ratio range" "cb avg us" "thr avg us"
lowest=
for rw in randread randwrite; do
	for qd in $qds; do
		: >"$work/c.rounds"
		: >"$work/t.rounds"
		each=
		for r in $(seq 1 "$rounds"); do
			log "$rw QD$qd round $r/$rounds: callback"
			c=$(perf_run $rw "$qd")
			log "$rw QD$qd round $r/$rounds: --submit-thread"
			t=$(perf_run $rw "$qd" --submit-thread)
			echo "$c" >>"$work/c.rounds"
			echo "$t" >>"$work/t.rounds"
			read -r ci ca cp <<<"$c"
			read -r ti ta tp <<<"$t"
			each="$each${each:+,}{\"callback\":{\"iops\":$ci,\"avg_us\":$ca,\"p99_us\":$cp},\"submit_thread\":{\"iops\":$ti,\"avg_us\":$ta,\"p99_us\":$tp}}"
		done
		ci=$(cut -d' ' -f1 "$work/c.rounds" | nvmf_median)
		ca=$(cut -d' ' -f2 "$work/c.rounds" | nvmf_median)
		ti=$(cut -d' ' -f1 "$work/t.rounds" | nvmf_median)
		ta=$(cut -d' ' -f2 "$work/t.rounds" | nvmf_median)
		range=$(paste -d' ' "$work/c.rounds" "$work/t.rounds" | awk '
			{ r = $1 ? $4 / $1 : 0; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r }
			END { printf "%.2f-%.2fx", lo, hi }')
		ratio=$(awk -v a="$ti" -v b="$ci" 'BEGIN {printf "%.2f", b ? a / b : 0}')
		printf '%-10s %4s %14.0f %14.0f %5sx %13s %11.1f %11.1f\n' $rw "$qd" \
			"$ci" "$ti" "$ratio" "$range" "$ca" "$ta"
		[ -z "$json" ] || echo "{\"rw\":\"$rw\",\"qd\":$qd,\"rounds\":$rounds,\"poll\":\"$poll\",\"callback\":{\"iops\":$ci,\"avg_us\":$ca},\"submit_thread\":{\"iops\":$ti,\"avg_us\":$ta},\"ratio\":$ratio,\"each_round\":[$each]}" >>"$json"
		lowest=$(awk -v a="$ratio" -v b="${lowest:-1e9}" 'BEGIN {print a < b ? a : b}')
	done
done
echo "summary: --submit-thread / callback IOPS, medians of $rounds round(s)," \
	"poll $poll: lowest ratio ${lowest}x (goal 0.95x or more)"
