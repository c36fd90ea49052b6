#!/usr/bin/env bash
# bench/nvmf/nvmf_vs_kernel.sh - fio 4k randread / randwrite at QD 16 and
# 64 through the guest kernel's nvme-rdma host: wharf-nvmf-tgt against the
# kernel's own target (nvmet-rdma, configfs), same guest boot, same kind
# of backing: RAM (brd /dev/ram0 for nvmet, a ram: namespace for wharf;
# the default) or null (null_blk /dev/nullb0 completing inline, a null:
# namespace; no data copied into storage on either side); fio uses
# 64 MiB of each.
# Prints IOPS and p99 completion latency side by side and the wharf /
# kernel IOPS ratio per row.
#
# Run it in the soft-RoCE guest (it needs rxe0 and module loading):
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt
#   ./wharf vm --timeout 1500 -- bench/nvmf/nvmf_vs_kernel.sh
# Options: -r SECONDS (per fio run, default 20),
#          -w 'SHARDS:POLL[:SPIN_US[:ARGS]] ...' wharf variants measured in
#             the same boot (POLL: event|busy|adaptive; default '2:event';
#             ARGS: more wharf-nvmf-tgt options, commas for spaces, e.g.
#             '1:busy 1:busy::--in-capsule,0' compares in-capsule writes
#             with writes pulled by RDMA READ),
#          -b PATH (wharf-nvmf-tgt; default the -c opt build, else bazel-bin)
#          -k ram|null (the backing of both targets, default ram)
#          -u (no CPU partition: shards placed by wharf, fio anywhere)
#          -p DIR (profile: perf record -a -g over the middle half of
#             each run; per guest CPU, functions by inclusive share, in
#             DIR/LABEL.RW.qdN.cpuC.txt, and samples by CPU, command and
#             object in ....dso.txt; DIR must be writable in the guest,
#             e.g. ./wharf vm --share D -- ... -p /run/wharf)
#          -n ROUNDS (default 1): every measurement ROUNDS times, the
#             kernel first in odd rounds and wharf first in even ones;
#             the table shows medians and the range of per-round ratios
#          -S (scheduler view of every run on stderr: per-CPU softirq
#             counts, and the threads with the most CPU time and run-queue
#             wait, from /proc/softirqs and /proc/PID/task/TID/schedstat;
#             threads still alive when fio has exited: kernel threads and
#             the target, not fio)
#          -j FILE (every row as a JSON line, each round's values too;
#             FILE must be writable in the guest, e.g. /run/wharf/...)
#          -c 'RW:QD ...' (the cases, default 'randread:16 randread:64
#             randwrite:16 randwrite:64'; e.g. -c randwrite:16 -n 10 -S
#             to look at one case over many rounds)
#          -m MTU (of rxe0's netdev for the run, default 9000: rxe then
#             runs IB MTU 4096 and a 4 KiB I/O is one packet, as on a
#             storage fabric with jumbo frames; 1500 gives IB MTU 1024,
#             four packets per 4 KiB, each with its own skb, ICRC and ACK)
# CPU partition (default): a variant with S shards pins them to CPUs
# 0..S-1 (--cpus) and fio to the other CPUs, the way a target and its
# initiators own separate cores; with no CPU left over fio runs anywhere.
# The kernel target is measured with the same fio CPUs as each variant
# (once per distinct set), so every ratio compares equal fio placement.
# Progress on stderr; the table and a summary line on stdout.
set -euo pipefail

runtime=20
variants="2:event"
tgt=
partition=1
mtu=9000
rounds=1
profile=
schedview=
backing=ram
json=
cases="randread:16 randread:64 randwrite:16 randwrite:64"
while getopts "r:w:b:m:n:p:k:j:c:uSh" o; do
	case $o in
	r) runtime=$OPTARG ;;
	w) variants=$OPTARG ;;
	b) tgt=$OPTARG ;;
	u) partition=0 ;;
	m) mtu=$OPTARG ;;
	n) rounds=$OPTARG ;;
	p) profile=$OPTARG ;;
	k) backing=$OPTARG ;;
	S) schedview=1 ;;
	j) json=$OPTARG ;;
	c) cases=$OPTARG ;;
	h)
		sed -n '2,49p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
case $backing in
ram) kdisk=/dev/ram0 wns=ram:64M ;;
null) kdisk=/dev/nullb0 wns=null:64M ;;
*)
	echo "nvmf_vs_kernel: -k takes ram or null, not '$backing'" >&2
	exit 2
	;;
esac
for c in $cases; do
	if ! [[ $c =~ ^rand(read|write):[1-9][0-9]*$ ]]; then
		echo "nvmf_vs_kernel: -c takes RW:QD with RW randread or randwrite, not '$c'" >&2
		exit 2
	fi
done
prog=nvmf_vs_kernel
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
nvmf_find_tgt

log() { nvmf_log "$@"; }
if [ -n "$profile" ]; then
	command -v perf >/dev/null || {
		log "-p needs perf (Debian: linux-perf)"
		exit 2
	}
	mkdir -p "$profile" && [ -w "$profile" ] || {
		log "-p $profile: not a writable directory"
		exit 2
	}
	log "profiling into $profile: perf slows every run, compare IOPS without -p"
fi
addr=$nvmf_addr
knqn=nqn.2024-01.io.wharf:kbench
wnqn=nqn.2024-01.io.wharf:wbench
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

nvmf_modules "$backing"
# rxe0's netdev and its veth peer (guest-init.sh) carry every packet.
netdev=$(rdma link show rxe0/1 | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
for d in $netdev $(ip -o link show "$netdev" | sed -n 's/^[0-9]*: [^@]*@\([^:]*\):.*/\1/p'); do
	ip link set "$d" mtu "$mtu"
done
ib_mtu=$(ibv_devinfo -d rxe0 | awk '/active_mtu/ {print $2; exit}')
log "rxe0 on $netdev: netdev MTU $mtu, IB MTU $ib_mtu"
# fio touches the first 64 MiB of null_blk's 1 GiB.

# Connects (up to 3 attempts; a failure prints the kernel's reason and is
# counted in the summary) and prints the namespace's block device.
connect() { # nqn port
	local d i a
	for a in 1 2 3; do
		if nvme connect -t rdma -a $addr -s "$2" -n "$1" \
			--hostnqn="$hostnqn" >/dev/null; then
			for i in $(seq 1 200); do
				d=$(nvmf_dev_of "$1" || true)
				[ -n "$d" ] && [ -b "$d" ] && {
					echo "$d"
					return 0
				}
				sleep 0.1
			done
		fi
		echo "$1" >>"$work/retries" # $(connect) runs in a subshell
		log "connect to $1 failed (attempt $a); kernel log:"
		dmesg | grep -i nvme | tail -n 5 >&2
		[ -f "$work/tgt.log" ] && tail -n 5 "$work/tgt.log" >&2
		sleep 1
	done
	return 1
}

# Per-CPU busy time since the snapshot in $1 ("cpuN user nice system idle
# iowait irq softirq steal ..." lines of /proc/stat): "B0/B1/..." in %.
cpu_busy() {
	awk 'NR == FNR { if ($1 ~ /^cpu[0-9]/) for (i = 2; i <= 9; i++) a[$1, i] = $i; next }
	$1 ~ /^cpu[0-9]/ {
		t = 0; idle = 0
		for (i = 2; i <= 9; i++) {
			d = $i - a[$1, i]; t += d
			if (i == 5 || i == 6) idle += d
		}
		out = out (out == "" ? "" : "/") (t ? int(100 * (t - idle) / t + 0.5) : 0)
	}
	END { print out }' "$1" /proc/stat
}

# -p: the middle half of a fio run under `perf record -a -g`; once fio is
# done, per guest CPU the functions by inclusive share (--children).
profile_record() {
	sleep $((2 + runtime / 4))
	perf record -a -g -F 499 -o "$work/perf.data" -- \
		sleep $((runtime / 2 > 1 ? runtime / 2 : 1)) >/dev/null 2>&1 ||
		log "perf record failed"
}
profile_report() { # name
	local f=$profile/${1// /_} c
	[ -s "$work/perf.data" ] || return 0
	for c in $(seq 0 $((ncpu - 1))); do
		perf report -i "$work/perf.data" --stdio --children -C "$c" \
			--sort sym -g none 2>/dev/null | grep -E '^ +[0-9]' |
			head -n 200 >"$f.cpu$c.txt"
	done
	perf report -i "$work/perf.data" --stdio --no-children \
		--sort cpu,comm,dso 2>/dev/null | grep -E '^ +[0-9]' >"$f.dso.txt"
	rm -f "$work/perf.data"
}

# -S: every thread's "comm run_ns wait_ns slices" (schedstat), summed by
# name (kworkers and ksoftirqd keep their CPU in the name).
sched_snap() { # file
	# One grep over every task's comm and schedstat (a process per thread
	# costs seconds in a TCG guest); comm may hold ':' and ' '.
	grep -H '' /proc/[0-9]*/task/[0-9]*/comm \
		/proc/[0-9]*/task/[0-9]*/schedstat 2>/dev/null |
		awk -F: '{ p = $1; v = substr($0, length($1) + 2)
		if (sub(/\/comm$/, "", p)) { gsub(/ /, "_", v); c[p] = v }
		else if (sub(/\/schedstat$/, "", p)) s[p] = v }
		END { for (p in s) if (p in c) print c[p], s[p] }' >"$1.threads"
	cat /proc/softirqs >"$1.softirqs"
}
sched_report() { # snapshot name
	sched_snap "$work/sched1"
	log "$2: softirqs raised per CPU during the run:"
	awk 'NR == FNR { for (i = 2; i <= NF; i++) a[$1, i] = $i; next }
	FNR > 1 { d = ""; z = 1
		for (i = 2; i <= NF; i++) { d = d " " $i - a[$1, i]; if ($i - a[$1, i]) z = 0 }
		if (!z) printf "  %-9s%s\n", $1, d }' "$1.softirqs" \
		"$work/sched1.softirqs" >&2
	log "$2: threads by CPU time (ms run / ms waiting to run / slices):"
	awk 'NF == 4 && NR == FNR { r[$1] += $2; w[$1] += $3; n[$1] += $4; next }
	NF == 4 { R[$1] += $2; W[$1] += $3; N[$1] += $4 }
	END { for (k in R) { dr = (R[k] - r[k]) / 1e6; dw = (W[k] - w[k]) / 1e6
		if (dr >= 1 || dw >= 1)
			printf "  %-28s %7.0f / %6.0f / %d\n", k, dr, dw, N[k] - n[k] } }' \
		"$1.threads" "$work/sched1.threads" | sort -k2 -rn | head -n 10 >&2
}

# fio on $1, rw $2, depth $3 -> "IOPS P99_US CPU_BUSY" on stdout (terse v3:
# read IOPS in field 8, its clat percentiles in 18-37; write 49, 59-78;
# awk, not python: interpreters start slowly in a TCG guest).
# fio's CPUs: $fio_cpus (empty: anywhere).
fio_cpus=
# With -p, $4 names the run's profile files.
run_fio() {
	local out=$work/fio.terse busy fpid
	cat /proc/stat >"$work/stat0"
	[ -z "$schedview" ] || sched_snap "$work/sched0"
	fio ${fio_cpus:+--cpus_allowed="$fio_cpus"} \
		--name=b --filename="$1" --ioengine=libaio --direct=1 --bs=4k \
		--rw="$2" --iodepth="$3" --numjobs=1 --size=64M --time_based \
		--runtime="$runtime" --ramp_time=2 --output-format=terse \
		--terse-version=3 >"$out" 2>"$work/fio.err" &
	fpid=$!
	[ -n "$profile" ] && profile_record
	wait "$fpid" || {
		cat "$work/fio.err" >&2
		return 1
	}
	busy=$(cpu_busy "$work/stat0")
	[ -z "$schedview" ] || sched_report "$work/sched0" "$4 $2 QD$3"
	[ -n "$profile" ] && profile_report "$4.$2.qd$3"
	awk -F';' -v busy="$busy" -v w="$([ "${2#rand}" = write ] && echo 1 || echo 0)" '
	{
		iops = w ? $49 : $8
		for (i = (w ? 59 : 18); i <= (w ? 78 : 37); i++)
			if ($i ~ /^99\.000000%=/) { sub(/.*=/, "", $i); p = $i }
		print iops, p, busy
	}' "$out"
}

declare -A res
measure() { # label dev
	local c rw qd
	for c in $cases; do
		rw=${c%:*}
		qd=${c#*:}
		log "$1: $rw QD$qd (${runtime}s)"
		res[$1:$c]=$(run_fio "$2" "$rw" "$qd" "$1")
	done
}

# --- the kernel's nvmet-rdma on brd or null_blk ----------------------------
log "kernel nvmet-rdma: $knqn on $kdisk, port 4420"
nvmet_setup "$knqn" "$kdisk" 4420 1

ncpu=$(nproc)
# "SHARD_CPUS FIO_CPUS" for a variant with $1 shards (empty: unpinned).
placement() {
	if [ "$partition" = 1 ] && [ "$1" -lt "$ncpu" ]; then
		echo "0-$(($1 - 1)) $1-$((ncpu - 1))"
	else
		echo "- -"
	fi
}
declare -A kernel_done
kernel_measure() { # fio_cpus ("-": anywhere) round
	[ -n "${kernel_done[$1#$2]:-}" ] && return 0
	fio_cpus=${1#-}
	log "round $2: kernel nvmet-rdma, fio on CPUs ${fio_cpus:-any}"
	kdev=$(connect "$knqn" 4420)
	measure "kernel@$1#$2" "$kdev"
	nvme disconnect -n "$knqn" >/dev/null
	kernel_done[$1#$2]=1
}

# --- wharf-nvmf-tgt on RAM or null, one run per variant ---------------------
wharf_run() { # variant shards poll spin shard_cpus fio_cpus round extra
	local scpus=${5#-}
	fio_cpus=${6#-}
	log "round $7: wharf-nvmf-tgt: $wnqn on $wns, port 4421, $2 shards" \
		"(CPUs ${scpus:-by wharf}), poll $3${8:+, extra options ${8//,/ }}; fio on" \
		"CPUs ${fio_cpus:-any}"
	# shellcheck disable=SC2086 # ${8//,/ }: one word per option
	nvmf_tgt_start "$work/tgt.log" "$tgt" -l $addr:4421 -s "$wnqn" \
		-n "1 $wns" -A -t "$2" -p "$3" ${4:+--spin-us "$4"} \
		${scpus:+--cpus "$scpus"} ${8//,/ } || exit 1
	wdev=$(connect "$wnqn" 4421)
	measure "wharf $1#$7" "$wdev"
	nvme disconnect -n "$wnqn" >/dev/null
	kill -TERM "$tgt_pid"
	wait "$tgt_pid" || true
	tgt_pid=
	grep "stats at exit" "$work/tgt.log" >&2 || true
}
declare -A fio_of
for r in $(seq 1 "$rounds"); do
	for v in $variants; do
		IFS=: read -r sh pm spin extra <<<"$v"
		read -r scpus fcpus <<<"$(placement "$sh")"
		fio_of[$v]=$fcpus
		[ $((r % 2)) = 1 ] && kernel_measure "$fcpus" "$r"
		wharf_run "$v" "$sh" "$pm" "$spin" "$scpus" "$fcpus" "$r" \
			"$extra"
		[ $((r % 2)) = 0 ] && kernel_measure "$fcpus" "$r"
	done
done

# Field $2 (1: IOPS, 2: p99, 3: CPU%) of measurement $1 in every round:
# the median (the lower middle one for an even count).
median() {
	local r
	for r in $(seq 1 "$rounds"); do
		read -r -a f <<<"${res[$1#$r:$3]}"
		echo "${f[$2 - 1]}"
	done | sort -t/ -k1,1n | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'
}
# The wharf / kernel IOPS ratio of each round, one per line, sorted.
round_ratios() { # kernel_label wharf_label case
	local r k w
	for r in $(seq 1 "$rounds"); do
		read -r k _ <<<"${res[$1#$r:$3]}"
		read -r w _ <<<"${res[$2#$r:$3]}"
		awk -v a="$w" -v b="$k" 'BEGIN {printf "%.2f\n", b ? a / b : 0}'
	done | sort -n
}
# "LOW-HIGH" of the rounds' ratios.
ratio_range() { # kernel_label wharf_label case
	round_ratios "$@" | awk 'NR == 1 { lo = $0 } { hi = $0 } END { print lo "-" hi }'
}
# The median of the rounds' ratios (the lower middle one for an even
# count).  Each round runs the two targets back to back, so a ratio
# compares runs made minutes apart; the guest's throughput moves between
# two levels over a boot, for both targets alike (docs/bench/nvmf.md),
# and this median is the comparison that such phases do not tilt.
ratio_median() { # kernel_label wharf_label case
	round_ratios "$@" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'
}

# One JSON line: a case of a variant, its medians and every round's
# "IOPS p99" of both targets.
json_row() { # variant fio_cpus case k_iops w_iops k_p99 w_p99 ratio round_ratio
	local r k w each=
	for r in $(seq 1 "$rounds"); do
		read -r -a k <<<"${res[kernel@$2#$r:$3]}"
		read -r -a w <<<"${res[wharf $1#$r:$3]}"
		each="$each${each:+,}{\"kernel_iops\":${k[0]},\"kernel_p99_us\":${k[1]},\"wharf_iops\":${w[0]},\"wharf_p99_us\":${w[1]}}"
	done
	echo "{\"case\":\"${3/:/_qd}\",\"variant\":\"$1\",\"backing\":\"$backing\",\"ib_mtu\":$ib_mtu,\"runtime_s\":$runtime,\"rounds\":$rounds,\"kernel_iops\":$4,\"wharf_iops\":$5,\"kernel_p99_us\":$6,\"wharf_p99_us\":$7,\"ratio\":$8,\"median_round_ratio\":$9,\"each_round\":[$each]}"
}

# --- table -------------------------------------------------------------------
[ "$rounds" -gt 1 ] && echo "medians of $rounds rounds (CPU%: busy per guest CPU," \
	"the round in the middle by CPU 0)"
[ "$rounds" -gt 1 ] && echo "ratio: of the medians; by round: the median" \
	"of the rounds' ratios and their range"
printf '%-14s %-14s %-8s %12s %12s %14s %14s %7s %9s %11s %9s %9s\n' "fio 4k" \
	"wharf shards:poll" "fio CPUs" "kernel IOPS" "wharf IOPS" \
	"kernel p99 us" "wharf p99 us" "ratio" "by round" "rounds" "k CPU%" "w CPU%"
for v in $variants; do
	min=
	rmin=
	f=${fio_of[$v]}
	for c in $cases; do
		ki=$(median "kernel@$f" 1 "$c")
		wi=$(median "wharf $v" 1 "$c")
		kp=$(median "kernel@$f" 2 "$c")
		wp=$(median "wharf $v" 2 "$c")
		kb=$(median "kernel@$f" 3 "$c")
		wb=$(median "wharf $v" 3 "$c")
		ratio=$(awk -v a="$wi" -v b="$ki" 'BEGIN {printf "%.2f", b ? a / b : 0}')
		rr=$(ratio_median "kernel@$f" "wharf $v" "$c")
		printf '%-14s %-14s %-8s %12s %12s %14s %14s %6sx %8sx %11s %9s %9s\n' \
			"${c/:/ QD}" "$v" "${f/#-/any}" "$ki" "$wi" "$kp" "$wp" \
			"$ratio" "$rr" "$(ratio_range "kernel@$f" "wharf $v" "$c")" \
			"$kb" "$wb"
		min=$(awk -v a="$ratio" -v b="${min:-1e9}" 'BEGIN {print a < b ? a : b}')
		rmin=$(awk -v a="$rr" -v b="${rmin:-1e9}" 'BEGIN {print a < b ? a : b}')
		[ -z "$json" ] || json_row "$v" "$f" "$c" "$ki" "$wi" "$kp" "$wp" \
			"$ratio" "$rr" >>"$json"
	done
	echo "summary: wharf-nvmf-tgt $v vs nvmet-rdma: lowest IOPS" \
		"ratio ${min}x of the medians, ${rmin}x by round, over" \
		"$(wc -w <<<"$cases") cases ($rounds round(s))," \
		"${runtime}s each, IB MTU $ib_mtu, $backing backing"
done
echo "connect retries: $(cat "$work/retries" 2>/dev/null | wc -l)"
