#!/usr/bin/env bash
# bench/nvmf/ublk_profile.sh - where wharf-ublk's time goes: one case of
# ublk_vs_kernel (4k, QD 1 by default, one I/O queue, against nvmet-rdma on
# brd) run twice under fio (io_uring, O_DIRECT, taskset -c 1): on the
# kernel's nvme-rdma host, then on wharf-ublk's /dev/ublkbN (one shard),
# each with a system-wide cpu-clock profile (perf record -a -g) of 8 s
# taken from 4 s into a 14 s run.  Writes to OUTDIR, per device (NAME
# kernel or ublk): the share of CPU samples (both CPUs) by command and
# object (NAME_comm.txt) and by command and symbol (NAME_sym.txt), and
# fio's output (NAME_fio.txt).  Idle time shows as the swapper command.
#
# Run it in the 6.12 guest (perf from the host's linux-perf):
#   bazel build -c opt //initiators/ublk:wharf-ublk
#   ./wharf vm --kernel 6.12 --share "$PWD/out/share" -- \
#       bench/nvmf/ublk_profile.sh -o /run/wharf
# Options: -p randread|randwrite (default randwrite), -q QD (default 1),
#          -u 'OPTIONS' (more wharf-ublk options), -o OUTDIR (default
#          out/profile, which must be writable)
set -uo pipefail
pattern=randwrite
qd=1
out=out/profile
uopts=""
while getopts "p:q:u:o:h" o; do
	case $o in
	p) pattern=$OPTARG ;;
	q) qd=$OPTARG ;;
	u) uopts=$OPTARG ;;
	o) out=$OPTARG ;;
	h)
		sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
command -v perf >/dev/null || {
	echo "ublk_profile: no perf (Debian: linux-perf)" >&2
	exit 2
}
prog=ublk_profile
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
mkdir -p "$out"
nqn=nqn.2024-01.io.wharf:ublkprofile
ublk=$nvmf_top/bazel-out/k8-opt/bin/initiators/ublk/wharf-ublk
[ -x "$ublk" ] || ublk=$nvmf_top/bazel-bin/initiators/ublk/wharf-ublk
# perf's data stays in the guest's tmpfs (on the 9p share perf's own
# writes took a fifth of the samples).
data=$(mktemp -d)
up=""
trap '[ -z "$up" ] || kill -TERM "$up" 2>/dev/null; wait; nvme disconnect -n "$nqn" >/dev/null 2>&1; nvmet_teardown "$nqn" 1; rm -rf "$data"' EXIT
report() { # name
	perf report -i "$data/$1.data" --stdio --no-children --sort comm,dso \
		-g none --percent-limit 0.5 2>/dev/null | grep "%" >"$out/$1_comm.txt"
	perf report -i "$data/$1.data" --stdio --no-children --sort comm,sym \
		-g none --percent-limit 0.5 2>/dev/null | grep "%" | head -60 >"$out/$1_sym.txt"
}
# fio on DEV for 14 s, profiled from 4 s to 12 s as NAME.
profile() { # name dev
	taskset -c 1 fio --name=p --filename="$2" --rw="$pattern" --bs=4k \
		--iodepth="$qd" --ioengine=io_uring --direct=1 --time_based \
		--runtime=14 --eta=never --output="$out/$1_fio.txt" &
	local fp=$!
	sleep 4
	perf record -a -g -e cpu-clock -o "$data/$1.data" -- sleep 8 2>/dev/null
	wait $fp
	report "$1"
}
nvmf_modules ram
modprobe ublk_drv || exit 2
nvmet_setup "$nqn" /dev/ram0 4420 1
hostnqn=$(cat /etc/nvme/hostnqn)
dev=$(nvmf_kconnect "$nqn" 4420 "$hostnqn")
profile kernel "$dev"
nvme disconnect -n "$nqn" >/dev/null
# shellcheck disable=SC2086 # the options are words
"$ublk" add --traddr "$nvmf_addr" --trsvcid 4420 --subnqn "$nqn" \
	--hostnqn "$hostnqn" --queues 1 --shards 1 $uopts >"$out/ublk.log" 2>&1 &
up=$!
for _ in $(seq 1 300); do
	grep -q serving "$out/ublk.log" && break
	sleep 0.1
done
dev=$(grep -o '/dev/ublkb[0-9]*' "$out/ublk.log" | head -n 1)
[ -b "${dev:-/nonexistent}" ] || {
	cat "$out/ublk.log" >&2
	exit 1
}
profile ublk "$dev"
kill -TERM "$up"
wait "$up"
up=""
echo "ublk_profile: wrote $out" >&2
