#!/usr/bin/env bash
# bench/nvmf/nbd_vs_kernel.sh - the same fio on two block devices of one
# NVMe-oF namespace: the guest kernel's nvme-rdma host (/dev/nvmeXnY, one
# I/O queue) and wharf-nbd's /dev/nbd0 (one I/O queue, one NBD
# connection, one shard), 4k randread and randwrite at QD 1, 16 and 64
# (fio io_uring, O_DIRECT, on CPU 1), against wharf-nvmf-tgt (a ram:
# namespace, one shard on CPU 0) and nvmet-rdma (brd /dev/ram0), all in
# one guest boot.  A third run per case puts wharf-nbd in --null-io mode
# (every request answered without an NVMe command): the NBD path alone.
# wharf-nbd starts afresh for each run; its CPU time (user + system)
# between two SIGUSR1 stats lines around the fio run, divided by the
# requests served in between, is the CPU it spent per request.
# Prints per case IOPS and average latency of the three, the nbd / kernel
# IOPS and latency ratios and wharf-nbd's CPU us per request (with and
# without NVMe); a summary line per target.
#
# Run it in the soft-RoCE guest:
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt //initiators/nbd:wharf-nbd
#   ./wharf vm --timeout 1800 -- bench/nvmf/nbd_vs_kernel.sh
# Options: -r SECONDS (per run, default 10; fio ramps 2 s more),
#          -q 'QD ...' (default '1 16 64'),
#          -t 'TARGET ...' (wharf, nvmet; default both)
# Progress on stderr; the table and the summary lines on stdout.
set -euo pipefail

runtime=10
qds="1 16 64"
targets="wharf nvmet"
while getopts "r:q:t:h" o; do
	case $o in
	r) runtime=$OPTARG ;;
	q) qds=$OPTARG ;;
	t) targets=$OPTARG ;;
	h)
		sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
prog=nbd_vs_kernel
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
nvmf_find_tgt
nbd=$nvmf_top/bazel-out/k8-opt/bin/initiators/nbd/wharf-nbd
[ -x "$nbd" ] || nbd=$nvmf_top/bazel-bin/initiators/nbd/wharf-nbd
[ -x "$nbd" ] || {
	nvmf_log "build //initiators/nbd:wharf-nbd first"
	exit 2
}
log() { nvmf_log "$@"; }

knqn=nqn.2024-01.io.wharf:nbdbench-nvmet
wnqn=nqn.2024-01.io.wharf:nbdbench-wharf
hostnqn=$(cat /etc/nvme/hostnqn)
work=$(mktemp -d)
tgt_pid=
nbd_pid=
cleanup() {
	set +e
	[ -n "$nbd_pid" ] && kill -TERM "$nbd_pid" 2>/dev/null && wait "$nbd_pid"
	nvme disconnect -n "$knqn" >/dev/null 2>&1
	nvme disconnect -n "$wnqn" >/dev/null 2>&1
	[ -n "$tgt_pid" ] && kill -TERM "$tgt_pid" 2>/dev/null && wait "$tgt_pid"
	nvmet_teardown "$knqn" 1
}
trap cleanup EXIT

nvmf_modules ram
modprobe nbd
log "wharf-nvmf-tgt $tgt, wharf-nbd $nbd, ${runtime}s runs"

# SIGUSR1 to wharf-nbd and its stats line (the Nth one) once printed.
nbd_stats() { # n
	kill -USR1 "$nbd_pid"
	for _ in $(seq 1 100); do
		[ "$(grep -c "stats: " "$work/nbd.log")" -ge "$1" ] && break
		sleep 0.1
	done
	grep "stats: " "$work/nbd.log" | sed -n "$1p"
}

# wharf-nbd on /dev/nbd0 for NQN at PORT (extra options after), fio RW QD
# on it, wharf-nbd stopped -> "IOPS AVG_US P99_US CPU_US_PER_REQ": the
# CPU time between two SIGUSR1 stats lines around the fio run (the
# connect and disconnect left out) over the requests served between them.
nbd_run() { # nqn port rw qd [wharf-nbd options]
	local nqn=$1 port=$2 rw=$3 qd=$4 r s0 s1
	shift 4
	"$nbd" --traddr "$nvmf_addr" --trsvcid "$port" --subnqn "$nqn" \
		--hostnqn "$hostnqn" --device /dev/nbd0 --queues 1 --shards 1 \
		"$@" >"$work/nbd.log" 2>&1 &
	nbd_pid=$!
	for _ in $(seq 1 300); do
		grep -q "serving" "$work/nbd.log" && break
		kill -0 "$nbd_pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "serving" "$work/nbd.log" || {
		cat "$work/nbd.log" >&2
		return 1
	}
	sleep 1 # the kernel's partition scan
	s0=$(nbd_stats 1)
	r=$(nvmf_fio /dev/nbd0 "$rw" "$qd" "$runtime" "$work")
	s1=$(nbd_stats 2)
	kill -TERM "$nbd_pid"
	wait "$nbd_pid" || {
		cat "$work/nbd.log" >&2
		return 1
	}
	nbd_pid=
	printf '%s\n%s\n' "$s0" "$s1" | awk -v r="$r" '{
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			v[NR, kv[1]] = kv[2]
		}
	} END {
		n = v[2, "reads"] + v[2, "writes"] - v[1, "reads"] - v[1, "writes"]
		c = v[2, "cpu_user_s"] + v[2, "cpu_sys_s"] - v[1, "cpu_user_s"] - v[1, "cpu_sys_s"]
		printf "%s %.1f\n", r, n ? c * 1e6 / n : 0
	}'
}

printf '%-6s %-10s %3s %9s %9s %6s %8s %8s %6s %9s %9s %8s %8s\n' target \
	"fio 4k" QD "kern IOPS" "nbd IOPS" ratio "k avg" "nbd avg" lat \
	"null IOPS" "null avg" "cpu/req" "null cpu"
measure() { # label nqn port
	local dev rw qd k n z min='' max=''
	for rw in randread randwrite; do
		for qd in $qds; do
			log "$1 $rw QD$qd: kernel nvme-rdma"
			dev=$(nvmf_kconnect "$2" "$3" "$hostnqn")
			k=$(nvmf_fio "$dev" $rw "$qd" "$runtime" "$work")
			nvme disconnect -n "$2" >/dev/null
			log "$1 $rw QD$qd: wharf-nbd"
			n=$(nbd_run "$2" "$3" $rw "$qd")
			log "$1 $rw QD$qd: wharf-nbd --null-io"
			z=$(nbd_run "$2" "$3" $rw "$qd" --null-io)
			read -r ki ka _ <<<"$k"
			read -r ni na _ nc <<<"$n"
			read -r zi za _ zc <<<"$z"
			ratio=$(awk -v a="$ni" -v b="$ki" 'BEGIN {printf "%.2f", b ? a / b : 0}')
			lr=$(awk -v a="$na" -v b="$ka" 'BEGIN {printf "%.2f", b ? a / b : 0}')
			printf '%-6s %-10s %3s %9.0f %9.0f %5sx %8.1f %8.1f %5sx %9.0f %9.1f %8s %8s\n' \
				"$1" $rw "$qd" "$ki" "$ni" "$ratio" "$ka" "$na" \
				"$lr" "$zi" "$za" "$nc" "$zc"
			min=$(awk -v a="$ratio" -v b="${min:-1e9}" 'BEGIN {print (a < b) ? a : b}')
			max=$(awk -v a="$ratio" -v b="${max:-0}" 'BEGIN {print (a > b) ? a : b}')
		done
	done
	echo "summary: $1: wharf-nbd /dev/nbd0 / kernel nvme-rdma (fio io_uring 4k):" \
		"IOPS ratio ${min}x .. ${max}x"
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
