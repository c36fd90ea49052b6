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
# target.
#
# Run it in the soft-RoCE guest:
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt \
#       //initiators/nvmf:wharf-nvmf-perf
#   ./wharf vm --timeout 1500 -- bench/nvmf/host_vs_kernel.sh
# Options: -r SECONDS (per run, default 10; fio ramps 2 s more),
#          -p event|busy|adaptive (wharf-nvmf-perf's idle shards, default
#             busy: the initiator owns its CPU, as SPDK's hosts poll),
#          -q 'QD ...' (default '1 16 64'),
#          -j FILE (also write every row as JSON lines)
# Progress on stderr; the table and the summary lines on stdout.
set -euo pipefail

runtime=10
poll=busy
qds="1 16 64"
json=
while getopts "r:p:q:j:h" o; do
	case $o in
	r) runtime=$OPTARG ;;
	p) poll=$OPTARG ;;
	q) qds=$OPTARG ;;
	j) json=$OPTARG ;;
	h)
		sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
prog=host_vs_kernel
# shellcheck source=bench/nvmf/lib.sh
. "$(dirname "$0")/lib.sh"
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
	sed -e 's/.*"iops":\([0-9.]*\).*"avg":\([0-9.]*\),"p50":[0-9.]*,"p99":\([0-9.]*\).*/\1 \2 \3/' \
		"$work/perf"
}

printf '%-7s %-10s %4s %11s %11s %6s %10s %10s %7s %10s %10s\n' target \
	"fio 4k" QD "kernel IOPS" "wharf IOPS" ratio "k avg us" "w avg us" \
	"lat" "k p99 us" "w p99 us"
measure() { # label nqn port
	local dev rw qd k w min='' lat1=''
	for rw in randread randwrite; do
		for qd in $qds; do
			log "$1 $rw QD$qd: kernel nvme-rdma + fio io_uring"
			dev=$(nvmf_kconnect "$2" "$3" "$hostnqn")
			k=$(nvmf_fio "$dev" $rw "$qd" "$runtime" "$work")
			nvme disconnect -n "$2" >/dev/null
			log "$1 $rw QD$qd: wharf-nvmf-perf"
			w=$(wharf_run "$2" "$3" $rw "$qd")
			read -r ki ka kp <<<"$k"
			read -r wi wa wp <<<"$w"
			ratio=$(awk -v a="$wi" -v b="$ki" 'BEGIN {printf "%.2f", b ? a / b : 0}')
			lr=$(awk -v a="$wa" -v b="$ka" 'BEGIN {printf "%.2f", b ? a / b : 0}')
			printf '%-7s %-10s %4s %11.0f %11.0f %5sx %10.1f %10.1f %6sx %10.1f %10.1f\n' \
				"$1" $rw "$qd" "$ki" "$wi" "$ratio" "$ka" "$wa" \
				"$lr" "$kp" "$wp"
			[ -z "$json" ] || echo "{\"target\":\"$1\",\"rw\":\"$rw\",\"qd\":$qd,\"kernel\":{\"iops\":$ki,\"avg_us\":$ka,\"p99_us\":$kp},\"wharf\":{\"iops\":$wi,\"avg_us\":$wa,\"p99_us\":$wp}}" >>"$json"
			if [ "$qd" -gt 1 ]; then
				min=$(awk -v a="$ratio" -v b="${min:-1e9}" 'BEGIN {print a < b ? a : b}')
			else
				lat1="$lat1 $rw ${lr}x"
			fi
		done
	done
	echo "summary: $1: wharf-nvmf-perf / kernel host (fio io_uring):" \
		"lowest IOPS ratio at QD>1 ${min:-(none run)}${min:+x} (goal 1.4x), QD1 average" \
		"latency ratio:$lat1 (goal 0.85x or less)"
}

log "nvmet-rdma: $knqn on /dev/ram0, port 4420"
nvmet_setup "$knqn" /dev/ram0 4420 1
measure nvmet "$knqn" 4420
nvmet_teardown "$knqn" 1

log "wharf-nvmf-tgt: $wnqn on ram:64M, port 4421, one shard on CPU 0"
nvmf_tgt_start "$work/tgt.log" "$tgt" -l "$addr:4421" -s "$wnqn" \
	-n "1 ram:64M" -A -t 1 --cpus 0 || exit 1
measure wharf "$wnqn" 4421
kill -TERM "$tgt_pid"
wait "$tgt_pid" || true
tgt_pid=
grep "stats at exit" "$work/tgt.log" >&2 || true
