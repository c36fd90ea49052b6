#!/usr/bin/env bash
# bench/nvmf/ublk_vs_kernel.sh - the same fio on three block devices of one
# NVMe-oF namespace: the guest kernel's nvme-rdma host (/dev/nvmeXnY, one
# I/O queue), wharf-ublk's /dev/ublkbN (one queue, one shard) and
# wharf-nbd's /dev/nbd0 (one queue, one connection, one shard), 4k
# randread and randwrite at QD 1, 16 and 64 (fio io_uring, O_DIRECT, on
# CPU 1), against wharf-nvmf-tgt (a ram: namespace, one shard on CPU 0)
# and nvmet-rdma (brd /dev/ram0), in one guest boot of the 6.12 kernel
# (ublk_drv).  Each case runs ROUNDS times, the three devices interleaved
# in each round; the table has the medians: IOPS and average latency of
# each, ublk / kernel IOPS and latency ratios, ublk / nbd IOPS.  JSON of
# every round and the medians to -j FILE.
#
# Run it in the 6.12 guest:
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt \
#       //initiators/ublk:wharf-ublk //initiators/nbd:wharf-nbd
#   ./wharf vm --kernel 6.12 --timeout 3600 -- bench/nvmf/ublk_vs_kernel.sh
# Options: -r SECONDS (per run, default 10; fio ramps 2 s more),
#          -n ROUNDS (default 3), -q 'QD ...' (default '1 16 64'),
#          -t 'TARGET ...' (wharf, nvmet; default both),
#          -u 'OPTIONS' (more wharf-ublk options, e.g. '--cpus 1
#          --poll busy'),
#          -j FILE (JSON of every round and the medians, e.g.
#          /run/wharf/ublk_vs_kernel.json: the guest's shared folder)
# WHARF_UBLK=PATH runs another wharf-ublk binary (an A/B of two builds).
# Progress on stderr; the table and the summary lines on stdout.
set -euo pipefail

runtime=10
rounds=3
qds="1 16 64"
targets="wharf nvmet"
json=""
uopts=""
while getopts "r:n:q:t:j:u:h" o; do
	case $o in
	r) runtime=$OPTARG ;;
	n) rounds=$OPTARG ;;
	q) qds=$OPTARG ;;
	t) targets=$OPTARG ;;
	j) json=$OPTARG ;;
	u) uopts=$OPTARG ;;
	h)
		sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
prog=ublk_vs_kernel
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
nvmf_find_tgt
bin() { # path under bazel-bin
	local b=$nvmf_top/bazel-out/k8-opt/bin/$1
	[ -x "$b" ] || b=$nvmf_top/bazel-bin/$1
	[ -x "$b" ] || {
		nvmf_log "build //${1%/*}:${1##*/} first"
		exit 2
	}
	echo "$b"
}
ublk=${WHARF_UBLK:-$(bin initiators/ublk/wharf-ublk)}
nbd=$(bin initiators/nbd/wharf-nbd)
log() { nvmf_log "$@"; }

knqn=nqn.2024-01.io.wharf:ublkbench-nvmet
wnqn=nqn.2024-01.io.wharf:ublkbench-wharf
hostnqn=$(cat /etc/nvme/hostnqn)
work=$(mktemp -d)
tgt_pid=
dev_pid=
cleanup() {
	set +e
	[ -n "$dev_pid" ] && kill -TERM "$dev_pid" 2>/dev/null && wait "$dev_pid"
	"$ublk" del --all --quiet >/dev/null 2>&1
	nvme disconnect -n "$knqn" >/dev/null 2>&1
	nvme disconnect -n "$wnqn" >/dev/null 2>&1
	[ -n "$tgt_pid" ] && kill -TERM "$tgt_pid" 2>/dev/null && wait "$tgt_pid"
	nvmet_teardown "$knqn" 1
}
trap cleanup EXIT

nvmf_modules ram
modprobe nbd
modprobe ublk_drv || {
	log "no ublk_drv in kernel $(uname -r) (Linux 6.0+; ./wharf vm --kernel 6.12)"
	exit 2
}
log "kernel $(uname -r); wharf-nvmf-tgt $tgt; ${rounds} rounds of ${runtime}s"

# A block device of wharf-ublk or wharf-nbd for NQN at PORT, fio RW QD on
# it, the device stopped -> fio's "IOPS AVG_US P99_US".
dev_run() { # kind nqn port rw qd
	local kind=$1 nqn=$2 port=$3 dev r
	if [ "$kind" = ublk ]; then
		"$ublk" add --traddr "$nvmf_addr" --trsvcid "$port" \
			--subnqn "$nqn" --hostnqn "$hostnqn" --queues 1 \
			--shards 1 $uopts >"$work/dev.log" 2>&1 &
	else
		"$nbd" --traddr "$nvmf_addr" --trsvcid "$port" --subnqn "$nqn" \
			--hostnqn "$hostnqn" --device /dev/nbd0 --queues 1 \
			--shards 1 >"$work/dev.log" 2>&1 &
	fi
	dev_pid=$!
	for _ in $(seq 1 300); do
		grep -q "serving" "$work/dev.log" && break
		kill -0 "$dev_pid" 2>/dev/null || break
		sleep 0.1
	done
	dev=$(grep -o '/dev/[a-z]*[0-9]*' "$work/dev.log" | head -n 1)
	[ -b "${dev:-/nonexistent}" ] || {
		cat "$work/dev.log" >&2
		return 1
	}
	r=$(nvmf_fio "$dev" "$4" "$5" "$runtime" "$work")
	kill -TERM "$dev_pid"
	wait "$dev_pid" || {
		cat "$work/dev.log" >&2
		return 1
	}
	dev_pid=
	echo "$r"
}

med() { tr ' ' '\n' | grep -v '^$' | nvmf_median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b ? a / b : 0}'; }

rows=()
printf '%-6s %-10s %3s %9s %9s %9s %6s %8s %8s %8s %6s %6s\n' target \
	"fio 4k" QD "kern IOPS" "ublk IOPS" "nbd IOPS" "u/k" "k avg" \
	"ublk avg" "nbd avg" "lat" "u/nbd"
measure() { # label nqn port
	local rw qd i k u n ki ka ui ua ni na
	for rw in randread randwrite; do
		for qd in $qds; do
			local kis="" kas="" uis="" uas="" nis="" nas=""
			for i in $(seq 1 "$rounds"); do
				log "$1 $rw QD$qd round $i: kernel, ublk, nbd"
				dev=$(nvmf_kconnect "$2" "$3" "$hostnqn")
				k=$(nvmf_fio "$dev" "$rw" "$qd" "$runtime" "$work")
				nvme disconnect -n "$2" >/dev/null
				u=$(dev_run ublk "$2" "$3" "$rw" "$qd")
				n=$(dev_run nbd "$2" "$3" "$rw" "$qd")
				read -r ki ka _ <<<"$k"
				read -r ui ua _ <<<"$u"
				read -r ni na _ <<<"$n"
				kis+=" $ki" kas+=" $ka" uis+=" $ui" uas+=" $ua"
				nis+=" $ni" nas+=" $na"
				rows+=("{\"target\": \"$1\", \"rw\": \"$rw\", \"qd\": $qd, \"round\": $i, \"kernel_iops\": $ki, \"kernel_avg_us\": $ka, \"ublk_iops\": $ui, \"ublk_avg_us\": $ua, \"nbd_iops\": $ni, \"nbd_avg_us\": $na}")
			done
			ki=$(med <<<"$kis") ka=$(med <<<"$kas")
			ui=$(med <<<"$uis") ua=$(med <<<"$uas")
			ni=$(med <<<"$nis") na=$(med <<<"$nas")
			printf '%-6s %-10s %3s %9.0f %9.0f %9.0f %5sx %8.1f %8.1f %8.1f %5sx %5sx\n' \
				"$1" "$rw" "$qd" "$ki" "$ui" "$ni" \
				"$(ratio "$ui" "$ki")" "$ka" "$ua" "$na" \
				"$(ratio "$ua" "$ka")" "$(ratio "$ui" "$ni")"
			rows+=("{\"target\": \"$1\", \"rw\": \"$rw\", \"qd\": $qd, \"round\": \"median\", \"kernel_iops\": $ki, \"kernel_avg_us\": $ka, \"ublk_iops\": $ui, \"ublk_avg_us\": $ua, \"nbd_iops\": $ni, \"nbd_avg_us\": $na}")
		done
	done
}

for t in $targets; do
	case $t in
	nvmet)
		log "nvmet-rdma: $knqn on /dev/ram0, port 4420"
		nvmet_setup "$knqn" /dev/ram0 4420 1
		measure nvmet "$knqn" 4420
		nvmet_teardown "$knqn" 1
		;;
	wharf)
		log "wharf-nvmf-tgt: $wnqn on ram:64M, port 4421, one shard on CPU 0"
		nvmf_tgt_start "$work/tgt.log" "$tgt" -l "$nvmf_addr:4421" \
			-s "$wnqn" -n "1 ram:64M" -A -t 1 --cpus 0
		measure wharf "$wnqn" 4421
		kill -TERM "$tgt_pid"
		wait "$tgt_pid" || true
		tgt_pid=
		;;
	*)
		log "unknown target $t"
		exit 2
		;;
	esac
done
if [ -n "$json" ]; then
	{
		echo "{\"kernel\": \"$(uname -r)\", \"runtime_s\": $runtime, \"rounds\": $rounds, \"ublk_options\": \"$uopts\", \"runs\": ["
		for i in "${!rows[@]}"; do
			printf '  %s%s\n' "${rows[$i]}" "$([ "$i" -lt $((${#rows[@]} - 1)) ] && echo ,)"
		done
		echo "]}"
	} >"$json" && log "JSON: $json"
fi
