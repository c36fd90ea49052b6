#!/usr/bin/env bash
# bench/nvmf/host_profile.sh - where the time goes: one host_vs_kernel case
# (4k, one I/O queue, against nvmet-rdma on brd) run twice, wharf-nvmf-perf
# (busy polling on CPU 1) and then the kernel's nvme-rdma host under fio
# (io_uring, O_DIRECT, taskset -c 1), each with a system-wide cpu-clock
# profile (perf record -a -g) of 8 s taken from 4 s into a 14 s run.
# Writes to OUTDIR: per host (NAME wharf or kernel) the share of CPU
# samples (both CPUs) by command and object (NAME_comm.txt) and by
# command and symbol (NAME_sym.txt), wharf-nvmf-perf's and fio's own
# output (perf.txt, fio.txt).
#
# Run it in the soft-RoCE guest (perf from the host's linux-perf):
#   bazel build -c opt //initiators/nvmf:wharf-nvmf-perf
#   ./wharf vm --share "$PWD/out/share" -- bench/nvmf/host_profile.sh -o /run/wharf
# Options: -p randread|randwrite (default randread), -q QD (default 16),
#          -o OUTDIR (default out/profile, which must be writable)
set -uo pipefail
pattern=randread
qd=16
out=out/profile
while getopts "p:q:o:h" o; do
	case $o in
	p) pattern=$OPTARG ;;
	q) qd=$OPTARG ;;
	o) out=$OPTARG ;;
	h)
		sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
command -v perf >/dev/null || {
	echo "host_profile: no perf (Debian: linux-perf)" >&2
	exit 2
}
prog=host_profile
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
mkdir -p "$out"
nqn=nqn.2024-01.io.wharf:profile
# perf's data stays in the guest's tmpfs: written to the 9p share, perf's
# own writes took 17-19 % of the samples.
data=$(mktemp -d)
trap 'nvme disconnect -n "$nqn" >/dev/null 2>&1; nvmet_teardown "$nqn" 1; rm -rf "$data"' EXIT
# The share of samples by command, then by symbol, of profile NAME.
report() { # name
	perf report -i "$data/$1.data" --stdio --no-children --sort comm,dso \
		-g none --percent-limit 0.5 2>/dev/null | grep "%" >"$out/$1_comm.txt"
	perf report -i "$data/$1.data" --stdio --no-children --sort comm,sym \
		-g none --percent-limit 0.5 2>/dev/null | grep "%" | head -60 >"$out/$1_sym.txt"
}
nvmf_modules ram
nvmet_setup "$nqn" /dev/ram0 4420 1
perf=$nvmf_top/bazel-out/k8-opt/bin/initiators/nvmf/wharf-nvmf-perf
[ -x "$perf" ] || perf=$nvmf_top/bazel-bin/initiators/nvmf/wharf-nvmf-perf
"$perf" --traddr "$nvmf_addr" --trsvcid 4420 --subnqn "$nqn" --queues 1 --cpus 1 \
	--poll busy --qd "$qd" --io-size 4k --pattern "$pattern" --time 14 --quiet >"$out/perf.txt" 2>&1 &
pp=$!
sleep 4
perf record -a -g -e cpu-clock -o "$data/wharf.data" -- sleep 8 2>/dev/null
wait $pp
report wharf
hostnqn=$(cat /etc/nvme/hostnqn)
dev=$(nvmf_kconnect "$nqn" 4420 "$hostnqn")
taskset -c 1 fio --name=k --filename="$dev" --rw="$pattern" --bs=4k --iodepth="$qd" --ioengine=io_uring \
	--direct=1 --time_based --runtime=14 --eta=never --output="$out/fio.txt" &
fp=$!
sleep 4
perf record -a -g -e cpu-clock -o "$data/kernel.data" -- sleep 8 2>/dev/null
wait $fp
nvme disconnect -n "$nqn" >/dev/null
report kernel
echo "host_profile: wrote $out" >&2
