#!/usr/bin/env bash
# bench/nvmf/backing.sh - wharf-nvmf-tgt and the kernel's nvmet-rdma on
# the same slow device, through the guest kernel's nvme-rdma host and fio.
#
# The device: null_blk, memory backed, completing every request after a
# timer (irqmode=2, completion_nsec; 1 ms by default), so that the device
# and not the guest is the limit. Two of them: nullb0 is exported raw
# (nvmet's bio path; wharf's file:/dev/nullb0, O_DIRECT through its
# io_uring), nullb1 carries ext4 with a 256 MiB file written in full
# (nvmet's file path with buffered_io=0; wharf's file:IMG io=direct).
# Cases: 4k randread and randwrite at QD 1, 16 and 64, 128k sequential
# read and write at QD 16 (fio, io_uring, O_DIRECT, pinned to CPU 1;
# wharf has one shard on CPU 0).
#
# Head of line, on each target: a fast namespace (wharf: ram:, served by
# the same single shard; nvmet: brd) and a slow one (a third null_blk,
# made through configfs so that its completion time is its own, -H),
# each connected by its own host NQN: the QD1 randread p99 on the fast
# namespace alone, then while the other host runs randwrite at QD 64 on
# the slow one. nvmet under the same load is the guest's baseline: both
# hosts and both fio jobs share the guest's two vCPUs with the target.
#
# Run it in the soft-RoCE guest:
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt
#   ./wharf vm --timeout 2400 -- bench/nvmf/backing.sh
# Options: -r SECONDS (per fio run, default 10),
#          -c NSEC (the device's completion time, default 1000000),
#          -n ROUNDS (default 1; the table shows medians),
#          -H NSEC (the head-of-line slow device's completion time,
#             default the same as -c),
#          -O (head of line only: skip the table),
#          -j FILE (every row as a JSON line, each round's values too;
#             FILE must be writable in the guest, e.g. /run/wharf/...)
#          -b PATH (wharf-nvmf-tgt; default the -c opt build, else
#             bazel-bin)
# Progress on stderr; the table and the summary lines on stdout.
set -euo pipefail

runtime=10
cnsec=1000000
rounds=1
json=
tgt=
hnsec=
hol_only=0
while getopts "r:c:n:j:b:H:Oh" o; do
	case $o in
	r) runtime=$OPTARG ;;
	c) cnsec=$OPTARG ;;
	n) rounds=$OPTARG ;;
	j) json=$OPTARG ;;
	b) tgt=$OPTARG ;;
	H) hnsec=$OPTARG ;;
	O) hol_only=1 ;;
	h)
		sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
hnsec=${hnsec:-$cnsec}
for v in "$runtime" "$cnsec" "$rounds" "$hnsec"; do
	case $v in
	'' | *[!0-9]* | 0)
		echo "backing: -r, -c, -n and -H want positive numbers" >&2
		exit 2
		;;
	esac
done
prog=backing
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
nvmf_find_tgt
log() { nvmf_log "$@"; }

addr=$nvmf_addr
kb=nqn.2024-01.io.wharf:k-bdev
kf=nqn.2024-01.io.wharf:k-file
wb=nqn.2024-01.io.wharf:w-bdev
wf=nqn.2024-01.io.wharf:w-file
wfast=nqn.2024-01.io.wharf:w-fast
wslow=nqn.2024-01.io.wharf:w-slow
kfast=nqn.2024-01.io.wharf:k-fast
kslow=nqn.2024-01.io.wharf:k-slow
nbcfs=/sys/kernel/config/nullb/nullb2 # the item's name is the disk's
mnt=/run/wharf-backing-mnt
img=$mnt/img
hostnqn=$(cat /etc/nvme/hostnqn)
host2id=$(cat /proc/sys/kernel/random/uuid)
host2=nqn.2014-08.org.nvmexpress:uuid:$host2id
work=$(mktemp -d)
tgt_pid=
cleanup() {
	set +e
	for n in $kb $kf $wb $wf $wfast $wslow $kfast $kslow; do
		nvme disconnect -n "$n" >/dev/null 2>&1
	done
	[ -n "$tgt_pid" ] && kill -TERM "$tgt_pid" 2>/dev/null && wait "$tgt_pid"
	nvmet_teardown "$kb" 1
	nvmet_teardown "$kf" 2
	nvmet_teardown "$kfast" 3
	nvmet_teardown "$kslow" 4
	umount "$mnt" 2>/dev/null
	if [ -d "$nbcfs" ]; then
		echo 0 >"$nbcfs/power"
		rmdir "$nbcfs"
	fi
}
trap cleanup EXIT

# --- the slow devices ---------------------------------------------------------
nvmf_modules ram # and brd's /dev/ram0: the fast namespace of head of line
if grep -q '^null_blk ' /proc/modules; then
	rmmod null_blk || {
		log "null_blk is in use: cannot set its timer"
		exit 1
	}
fi
modprobe null_blk nr_devices=2 gb=1 memory_backed=1 irqmode=2 \
	completion_nsec="$cnsec" hw_queue_depth=256
log "null_blk: 2 x 1 GiB, memory backed, every request completes after" \
	"${cnsec} ns"
mkdir -p "$mnt"
mkfs.ext4 -F -q -E nodiscard /dev/nullb1
mount /dev/nullb1 "$mnt"
dd if=/dev/zero of="$img" bs=1M count=256 oflag=direct status=none
log "ext4 on nullb1 with $img (256 MiB, written)"
# The head-of-line slow device: its own completion time.
[ -d /sys/kernel/config/nullb ] || {
	log "null_blk has no configfs here: cannot make the head-of-line device"
	exit 1
}
mkdir "$nbcfs"
echo 1024 >"$nbcfs/size"
echo 1 >"$nbcfs/memory_backed"
echo 2 >"$nbcfs/irqmode"
echo "$hnsec" >"$nbcfs/completion_nsec"
echo 256 >"$nbcfs/hw_queue_depth"
echo 2 >"$nbcfs/index"
echo 1 >"$nbcfs/power"
[ -b /dev/nullb2 ] || {
	log "the head-of-line device /dev/nullb2 did not appear"
	exit 1
}
log "head of line: /dev/nullb2 (1 GiB, ${hnsec} ns per I/O), fast /dev/ram0"

# --- the targets ----------------------------------------------------------------
nvmet_setup "$kb" /dev/nullb0 4420 1
nvmet_setup "$kf" "$img" 4422 2 0
nvmet_setup "$kfast" /dev/ram0 4423 3
nvmet_setup "$kslow" /dev/nullb2 4424 4
nvmf_tgt_start "$work/tgt.log" "$tgt" -l "$addr:4421" -t 1 --cpus 0 \
	-s "$wb" -n "1 file:/dev/nullb0" -A \
	-s "$wf" -n "1 file:$img io=direct" -A \
	-s "$wfast" -n "1 ram:64M" -A \
	-s "$wslow" -n "1 file:/dev/nullb2" -A || exit 1
log "nvmet-rdma: $kb (bio) on 4420, $kf (file, buffered_io=0) on 4422;" \
	"wharf-nvmf-tgt (1 shard, CPU 0) on 4421"

connect() { # nqn port [hostnqn]
	nvmf_kconnect "$1" "$2" "${3:-$hostnqn}" || {
		log "connect to $1 failed"
		dmesg | grep -i nvme | tail -n 5 >&2
		return 1
	}
}

# fio on DEV: RW, BS, QD -> "IOPS AVG_US P99_US" (nvmf_fio, on CPU 1).
run_fio() { # dev rw bs qd
	nvmf_fio_bs=$3 nvmf_fio_size=256M nvmf_fio "$1" "$2" "$4" "$runtime" \
		"$work"
}

targets="kernel-bio kernel-file wharf-bdev wharf-file"
cases="randread:4k:1 randread:4k:16 randread:4k:64 randwrite:4k:1 \
randwrite:4k:16 randwrite:4k:64 read:128k:16 write:128k:16"
declare -A res
measure() { # target round
	local nqn port dev c rw bs qd
	case $1 in
	kernel-bio) nqn=$kb port=4420 ;;
	kernel-file) nqn=$kf port=4422 ;;
	wharf-bdev) nqn=$wb port=4421 ;;
	wharf-file) nqn=$wf port=4421 ;;
	esac
	dev=$(connect "$nqn" "$port") || exit 1
	for c in $cases; do
		IFS=: read -r rw bs qd <<<"$c"
		log "round $2: $1 $rw $bs QD$qd (${runtime}s)"
		res[$1:$c:$2]=$(run_fio "$dev" "$rw" "$bs" "$qd")
	done
	nvme disconnect -n "$nqn" >/dev/null
}

hol() { # target round -> res[hol-T:alone:R], res[hol-T:busy:R], ...
	local fast slow bg fnqn snqn fport sport t=$1
	shift
	case $t in
	wharf) fnqn=$wfast snqn=$wslow fport=4421 sport=4421 ;;
	kernel) fnqn=$kfast snqn=$kslow fport=4423 sport=4424 ;;
	esac
	fast=$(connect "$fnqn" "$fport") || exit 1
	# The other host: its own NQN and host ID, so its own controller.
	nvme connect -t rdma -a "$addr" -s "$sport" -n "$snqn" -i 1 \
		--hostnqn="$host2" --hostid="$host2id" >/dev/null || exit 1
	for _ in $(seq 1 200); do
		slow=$(nvmf_dev_of "$snqn" || true)
		[ -n "$slow" ] && [ -b "$slow" ] && break
		sleep 0.1
	done
	log "round $1: head of line, $t: QD1 randread on $fast alone"
	res[hol-$t:alone:$1]=$(run_fio "$fast" randread 4k 1)
	log "round $1: ... and with randwrite QD64 on $slow (another host)"
	taskset -c 1 fio --name=n --filename="$slow" --ioengine=io_uring \
		--direct=1 --bs=4k --rw=randwrite --iodepth=64 --size=256M \
		--time_based --runtime=$((runtime + 6)) \
		--output-format=terse --terse-version=3 >"$work/neigh" \
		2>"$work/neigh.err" &
	bg=$!
	sleep 2
	res[hol-$t:busy:$1]=$(run_fio "$fast" randread 4k 1)
	wait "$bg" || log "the neighbour's fio failed: $(cat "$work/neigh.err")"
	res[hol-$t:neigh:$1]=$(awk -F';' '{print $49}' "$work/neigh")
	nvme disconnect -n "$fnqn" >/dev/null
	nvme disconnect -n "$snqn" >/dev/null
}

for r in $(seq 1 "$rounds"); do
	# Alternate the order so that neither side always runs first.
	if [ $((r % 2)) = 1 ]; then order=$targets; else
		order=$(echo "$targets" | tr ' ' '\n' | tac | tr '\n' ' ')
	fi
	[ "$hol_only" = 1 ] || for t in $order; do measure "$t" "$r"; done
	if [ $((r % 2)) = 1 ]; then
		hol wharf "$r"
		hol kernel "$r"
	else
		hol kernel "$r"
		hol wharf "$r"
	fi
done
kill -USR1 "$tgt_pid"
sleep 0.5
grep "stats:" "$work/tgt.log" | tail -n 1 >&2

# Field F (1 IOPS, 2 avg us, 3 p99 us) of KEY, the median over rounds.
med() { # key field
	local r
	for r in $(seq 1 "$rounds"); do
		echo "${res[$1:$r]}" | cut -d' ' -f"$2"
	done | nvmf_median
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b ? a / b : 0}'; }

table() {
	printf '%-16s' "case"
	for t in $targets; do printf ' %12s %9s' "$t" "p99 us"; done
	printf ' %9s %9s\n' "w/k-bio" "w/k-file"
	declare -A iops
	for c in $cases; do
		printf '%-16s' "${c//:/ }"
		row="{\"case\":\"$c\",\"rounds\":$rounds,\"completion_nsec\":$cnsec"
		for t in $targets; do
			i=$(med "$t:$c" 1)
			a=$(med "$t:$c" 2)
			p=$(med "$t:$c" 3)
			iops[$t:$c]=$i
			printf ' %12.0f %9.0f' "$i" "$p"
			each=
			for r in $(seq 1 "$rounds"); do
				read -r ri ra rp <<<"${res[$t:$c:$r]}"
				each="$each${each:+,}{\"iops\":$ri,\"avg_us\":$ra,\"p99_us\":$rp}"
			done
			row="$row,\"$t\":{\"iops\":$i,\"avg_us\":$a,\"p99_us\":$p,\"each_round\":[$each]}"
		done
		rb=$(ratio "${iops[wharf-bdev:$c]}" "${iops[kernel-bio:$c]}")
		rf=$(ratio "${iops[wharf-bdev:$c]}" "${iops[kernel-file:$c]}")
		printf ' %8sx %8sx\n' "$rb" "$rf"
		[ -z "$json" ] || echo "$row,\"wharf_vs_kernel_bio\":$rb,\"wharf_vs_kernel_file\":$rf}" >>"$json"
	done

	# Goals: QD16/64 IOPS >= both nvmet backends; QD16 >= 10x QD1; QD1
	# latency <= 1.1x nvmet's; head of line p99 <= 1.5x.
	lowest=
	for c in randread:4k:16 randread:4k:64 randwrite:4k:16 randwrite:4k:64; do
		for k in kernel-bio kernel-file; do
			x=$(ratio "${iops[wharf-bdev:$c]}" "${iops[$k:$c]}")
			lowest=$(awk -v a="$x" -v b="${lowest:-1e9}" 'BEGIN {print a < b ? a : b}')
		done
	done
	echo "summary: wharf-bdev vs nvmet (bio and file) IOPS at QD 16/64: lowest" \
		"${lowest}x (goal 1.0x); medians of $rounds round(s), ${runtime}s runs," \
		"device ${cnsec} ns per I/O"
	for rw in randread randwrite; do
		s=$(ratio "${iops[wharf-bdev:$rw:4k:16]}" "${iops[wharf-bdev:$rw:4k:1]}")
		l=$(ratio "$(med "wharf-bdev:$rw:4k:1" 2)" "$(med "kernel-bio:$rw:4k:1" 2)")
		echo "summary: wharf-bdev $rw QD16 / QD1 IOPS ${s}x (goal 10x);" \
			"QD1 average latency vs nvmet bio ${l}x (goal 1.1x or less)"
	done
}
[ "$hol_only" = 1 ] || table

# Head of line, each target: p99 alone, p99 busy, their ratio; then
# wharf's busy p99 against nvmet's under the same load.
declare -A holr holb
for t in wharf kernel; do
	pa=$(med hol-$t:alone 3)
	pb=$(med hol-$t:busy 3)
	hr=$(ratio "$pb" "$pa")
	holr[$t]=$hr holb[$t]=$pb
	echo "summary: head of line, $t: QD1 randread p99 ${pa} us alone, ${pb} us" \
		"with a QD64 randwrite neighbour on the slow namespace of the same" \
		"target (neighbour $(med hol-$t:neigh 1) IOPS, device ${hnsec} ns):" \
		"${hr}x (goal 1.5x or less)"
	[ -z "$json" ] || echo "{\"case\":\"head_of_line\",\"target\":\"$t\",\"rounds\":$rounds,\"slow_nsec\":$hnsec,\"p99_alone_us\":$pa,\"p99_busy_us\":$pb,\"neighbour_iops\":$(med hol-$t:neigh 1),\"ratio\":$hr}" >>"$json"
done
echo "summary: head of line: wharf ${holr[wharf]}x, nvmet ${holr[kernel]}x;" \
	"wharf's busy p99 / nvmet's: $(ratio "${holb[wharf]}" "${holb[kernel]}")x"
