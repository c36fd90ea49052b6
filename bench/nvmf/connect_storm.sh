#!/usr/bin/env bash
# bench/nvmf/connect_storm.sh - a connect storm from the stock Linux
# NVMe-oF host (the guest kernel's nvme-rdma): K controllers with Q I/O
# queues each, every `nvme connect` released at once, each with its own
# host NQN (as after a target failover or a rack power-on), against the
# kernel's nvmet-rdma and wharf-nvmf-tgt in the same boot.
# Per target: controllers live, failed ones with the kernel's reason (the
# host's dmesg lines of the connect phase, grouped, and nvme connect's
# exit statuses and messages), seconds from the release until the last
# controller was live (the host's "new ctrl" line in the kernel log) and
# until the last nvme connect returned (nvme-cli scans sysfs after the
# kernel is done: seconds more in a storm), seconds until every
# controller is gone after `nvme disconnect -n NQN`, guest-wide CPU busy
# seconds over the connect and the disconnect phase (/proc/stat; the same
# measure for both targets, as nvmet works in kernel threads), the drop
# of MemAvailable over the connect phase (host and target together), and
# for wharf-nvmf-tgt its own CPU seconds (/proc/PID/stat, both phases)
# and its stats line after connect and after disconnect (SIGUSR1), with
# its gauges (ctrls queues reqs held bufs, deferred when it has it)
# checked back at zero.
#
# Run it in the soft-RoCE guest:
#   bazel build -c opt //targets/nvmf:wharf-nvmf-tgt
#   flock /tmp/wharf-vm.lock ./wharf vm --timeout 1800 -- \
#       bench/nvmf/connect_storm.sh -k 128
# Options: -k K      controllers (default 64)
#          -q Q      I/O queues per controller (nvme connect -i, default 2)
#          -Q SIZE   I/O queue size (nvme connect --queue-size, default
#                    32; 0: the host's default, 128)
#          -t LIST   targets in order, comma-separated: kernel, wharf
#                    (default kernel,wharf)
#          -r ROUNDS the targets ROUNDS times, in reverse order in even
#                    rounds (default 1)
#          -w ARGS   more wharf-nvmf-tgt options, commas for spaces, e.g.
#                    '-t,1' or '--srq-depth,4096'
#          -b PATH   wharf-nvmf-tgt (default the -c opt build, else
#                    bazel-bin)
#          -T SECS   bound of each phase (default 600): a controller not
#                    live by then counts as failed, a controller left
#                    after it is deleted through sysfs and reported
#          -j FILE   the results as JSON too, e.g. /run/wharf/storm.json
#                    with ./wharf vm --share DIR
# Memory: each host controller and I/O queue costs guest memory on both
# sides; see docs/bench/connect_storm.md for what fits WHARF_VM_MEM.
# Progress on stderr; the table, the failure reasons and a summary line
# on stdout.
set -euo pipefail

k=64
q=2
qsize=32
targets=kernel,wharf
rounds=1
wargs=
tgt=
phase_max=600
json=
while getopts "k:q:Q:t:r:w:b:T:j:h" o; do
	case $o in
	k) k=$OPTARG ;;
	q) q=$OPTARG ;;
	Q) qsize=$OPTARG ;;
	t) targets=$OPTARG ;;
	r) rounds=$OPTARG ;;
	w) wargs=$OPTARG ;;
	b) tgt=$OPTARG ;;
	T) phase_max=$OPTARG ;;
	j) json=$OPTARG ;;
	h)
		sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
for v in "k=$k" "q=$q" "Q=$qsize" "r=$rounds" "T=$phase_max"; do
	case ${v#*=} in
	'' | *[!0-9]*)
		echo "connect_storm: -${v%%=*} takes a number" >&2
		exit 2
		;;
	esac
done
if [ "$k" -lt 1 ] || [ "$rounds" -lt 1 ]; then
	echo "connect_storm: -k and -r take at least 1" >&2
	exit 2
fi
IFS=, read -r -a order <<<"$targets"
for t in "${order[@]}"; do
	case $t in
	kernel | wharf) ;;
	*)
		echo "connect_storm: -t takes kernel and/or wharf, not '$t'" >&2
		exit 2
		;;
	esac
done

prog=connect_storm
# shellcheck source=tools/lib/nvmf.sh
. "$(dirname "$0")/../../tools/lib/nvmf.sh"
nvmf_find_tgt
log() { nvmf_log "$@"; }

knqn=nqn.2024-01.io.wharf:kstorm
wnqn=nqn.2024-01.io.wharf:wstorm
hz=$(getconf CLK_TCK)
work=$(mktemp -d)
tgt_pid=
shopt -s nullglob

cleanup() {
	set +e
	for n in $knqn $wnqn; do
		timeout 120 nvme disconnect -n "$n" >/dev/null 2>&1
	done
	if [ -n "$tgt_pid" ]; then
		kill -TERM "$tgt_pid" 2>/dev/null
		timeout 20 tail --pid="$tgt_pid" -f /dev/null
		kill -KILL "$tgt_pid" 2>/dev/null
	fi
	nvmet_teardown "$knqn" 1
	rm -rf "$work"
}
trap cleanup EXIT
trap 'log interrupted; exit 130' INT TERM

nvmf_modules ram
nvmet_setup "$knqn" /dev/ram0 4420 1
ncpu=$(nproc)
mem_total=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
log "$k controllers x $q I/O queues (queue size ${qsize/#0/host default})," \
	"targets ${order[*]}, $rounds round(s); guest: $ncpu CPUs, $mem_total MiB"

# --- measurements ------------------------------------------------------------
now_us() { echo "${EPOCHREALTIME/./}"; }
secs() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN {printf "%.2f", (b - a) / d}'; }
busy_ticks() { # guest-wide: user nice system irq softirq steal
	local _c u n s _i _w irq sirq st _r
	read -r _c u n s _i _w irq sirq st _r </proc/stat
	echo $((u + n + s + irq + sirq + st))
}
proc_ticks() { # pid: utime + stime of every thread
	local f
	read -r -a f <"/proc/$1/stat" || {
		echo 0
		return
	}
	echo $((f[13] + f[14]))
}
mem_avail() { awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo; }

# Sets n_all and n_live: the host's controllers of subsystem $1.
count_ctrls() {
	local c s st
	n_all=0
	n_live=0
	for c in /sys/class/nvme/nvme*; do
		read -r s 2>/dev/null <"$c/subsysnqn" || continue
		[ "$s" = "$1" ] || continue
		n_all=$((n_all + 1))
		read -r st 2>/dev/null <"$c/state" || continue
		[ "$st" = live ] && n_live=$((n_live + 1))
	done
	return 0
}

# The kernel's log from the last mark "connect_storm: $1 (SEED)" on, the
# mark included (a mark per phase in /dev/kmsg, not a dmesg --follow
# process: its output is buffered; SEED tells this run's marks from those
# of an earlier run in the same boot).
kmsg_mark() { echo "$prog: $1 ($storm_seed)" >/dev/kmsg; }
kmsg_since() {
	dmesg | awk -v m="$prog: $1 ($storm_seed)" 'index($0, m) { n = 0 }
	{ l[++n] = $0 }
	END { if (!n || index(l[1], m) == 0) print "(the kernel log wrapped: no mark)"
		else for (i = 1; i <= n; i++) print l[i] }'
}
# Seconds from the mark (the first line of $1) to the last "new ctrl"
# line of subsystem $2: the host logs it once a controller is live,
# before `nvme connect` returns.
kmsg_live_s() {
	awk -v n="new ctrl: NQN \"$2\"" '
	{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t); t += 0 }
	NR == 1 { t0 = t; last = t; if (!/^\[/) bad = 1 }
	index($0, n) && t > last { last = t }
	END { if (!bad) printf "%.2f", last - t0 }' "$1"
}

# The kernel's lines, grouped: numbers that differ per controller or queue
# replaced, most frequent first ("COUNT LINE").
group_dmesg() {
	sed -E -e 's/^\[ *[0-9.]+\] //' \
		-e 's/nvme[0-9]+(c[0-9]+)?(n[0-9]+)?/nvmeN/g' \
		-e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/UUID/g' \
		-e 's/(queue:? ?|controller |cntlid:? ?|qid:? ?|task [^ :]+:)[0-9]+/\1N/g' "$1" |
		sort | uniq -c | sort -rn | sed 's/^ *//' | grep -v "$prog: " || true
}
# Lines that say why a controller did not come up (or took long).
is_failure() { grep -Ei 'reject|fail|error|timed? ?out|refus|unreach|\(-[0-9]+\)|ret=-|-[0-9]+$|out of memory|blocked for more' || true; }

# One controller: waits for the release (a line on the FIFO), connects,
# writes "EXIT_STATUS END_US" to DIR/done.I.
connect_one() { # i nqn port dir
	local id hn rc=0
	exec 3>&-
	printf -v id '%08x-0000-4000-8000-%012x' "$storm_seed" "$1"
	hn=nqn.2014-08.org.nvmexpress:uuid:$id
	read -r _ <"$4/go"
	timeout -k 5 "$phase_max" nvme connect -t rdma -a "$nvmf_addr" \
		-s "$3" -n "$2" -i "$q" ${qsize_opt:+"$qsize_opt"} -D \
		--hostnqn="$hn" --hostid="$id" >/dev/null 2>"$4/err.$1" || rc=$?
	echo "$rc $(now_us)" >"$4/done.$1"
}
storm_seed=$((RANDOM << 15 | RANDOM))
qsize_opt=
[ "$qsize" = 0 ] || qsize_opt=--queue-size=$qsize

# wharf-nvmf-tgt's stats line after SIGUSR1 (the Nth stats line in LOG).
wharf_stats() { # log n
	kill -USR1 "$tgt_pid"
	for _ in $(seq 1 100); do
		[ "$(grep -c 'stats: ' "$1")" -ge "$2" ] && break
		sleep 0.1
	done
	grep 'stats: ' "$1" | sed -n "$2p"
}
# 1 if every gauge in stats line $1 is 0 (counters only ever grow).
gauges_zero() {
	echo "$1" | awk '{ z = 1
		for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 &&
			kv[1] ~ /^(ctrls|queues|reqs|held|bufs|deferred)$/ && kv[2] != 0) z = 0
		print z }'
}

declare -A res
# Runs one storm against target $1 (kernel|wharf) in round $2; results in
# res[$1#$2:FIELD].
storm() {
	local t=$1 r=$2 nqn port dir id i n rc last t0 td0 b0 b1 b2 p0=0 p1=0 p2=0
	local m0 m1 tlog='' nstats=0 s1='' s2='' z='' left=0 d d1
	dir=$work/$t.$r
	mkdir "$dir"
	if [ "$t" = kernel ]; then
		nqn=$knqn port=4420
	else
		nqn=$wnqn port=4421
		tlog=$dir/tgt.log
		# shellcheck disable=SC2086 # ${wargs//,/ }: one word per option
		nvmf_tgt_start "$tlog" "$tgt" -l "$nvmf_addr:$port" -s "$nqn" \
			-n "1 ram:64M" -A ${wargs//,/ } || exit 1
	fi
	log "round $r, $t: $k x nvme connect -i $q${qsize_opt:+ $qsize_opt} to" \
		"$nqn at $nvmf_addr:$port, released at once"
	mkfifo "$dir/go"
	exec 3<>"$dir/go"
	for i in $(seq 1 "$k"); do
		connect_one "$i" "$nqn" "$port" "$dir" &
	done
	sleep 1 # every connect_one forked and waiting
	kmsg_mark "$t round $r connect"
	m0=$(mem_avail)
	b0=$(busy_ticks)
	[ -n "$tlog" ] && p0=$(proc_ticks "$tgt_pid")
	t0=$(now_us)
	for i in $(seq 1 "$k"); do echo; done >&3

	# --- connect phase: until every nvme connect returned -------------------
	while :; do
		d=("$dir"/done.*)
		count_ctrls "$nqn"
		log "  $t: ${#d[@]}/$k connects returned, $n_live live," \
			"$(secs "$t0" "$(now_us)" 1000000) s"
		[ "${#d[@]}" -ge "$k" ] && break
		if [ $(($(now_us) - t0)) -gt $(((phase_max + 15) * 1000000)) ]; then
			log "  $t: $((k - ${#d[@]})) connects still running after" \
				"${phase_max} s: counted as failed"
			break
		fi
		sleep 2
	done
	exec 3>&-
	last=$t0
	declare -A st=()
	for f in "$dir"/done.*; do
		read -r rc n <"$f"
		[ "$n" -gt "$last" ] && last=$n
		st[$rc]=$((${st[$rc]:-0} + 1))
	done
	count_ctrls "$nqn"
	b1=$(busy_ticks)
	m1=$(mem_avail)
	[ -n "$tlog" ] && p1=$(proc_ticks "$tgt_pid")
	kmsg_since "$t round $r connect" >"$dir/dmesg.connect"
	res[$t#$r:live]=$n_live
	res[$t#$r:failed]=$((k - n_live))
	res[$t#$r:connect_s]=$(secs "$t0" "$last" 1000000)
	res[$t#$r:live_s]=$(kmsg_live_s "$dir/dmesg.connect" "$nqn")
	res[$t#$r:busy_connect_s]=$(secs "$b0" "$b1" "$hz")
	res[$t#$r:mem_mib]=$((m0 - m1))
	res[$t#$r:status]=$(for rc in "${!st[@]}"; do echo "${st[$rc]} $rc"; done | sort -rn)
	res[$t#$r:errors]=$(cat /dev/null "$dir"/err.* | sed -E 's/nvme[0-9]+/nvmeN/g' |
		sort | uniq -c | sort -rn | sed 's/^ *//')
	res[$t#$r:reasons]=$(group_dmesg "$dir/dmesg.connect" | is_failure)
	log "  $t: $n_live of $k live, the last live after" \
		"${res[$t#$r:live_s]} s (kernel log), the last connect returned" \
		"after ${res[$t#$r:connect_s]} s; exit statuses (count status):" \
		"$(echo "${res[$t#$r:status]}" | tr '\n' ',' | sed 's/,$//')"
	log "  $t: the host's kernel log over the connect phase (count line):"
	group_dmesg "$dir/dmesg.connect" | head -n 12 | sed 's/^/    /' >&2
	if [ -n "$tlog" ]; then
		nstats=$((nstats + 1))
		s1=$(wharf_stats "$tlog" "$nstats")
		log "  $t after connect: $s1"
	fi

	# --- disconnect phase: until no controller of $nqn is left ---------------
	log "round $r, $t: nvme disconnect -n $nqn"
	kmsg_mark "$t round $r disconnect"
	b1=$(busy_ticks)
	[ -n "$tlog" ] && p1=$(proc_ticks "$tgt_pid")
	td0=$(now_us)
	timeout -k 5 "$phase_max" nvme disconnect -n "$nqn" >/dev/null \
		2>"$dir/disconnect.err" &
	d1=$!
	while :; do
		count_ctrls "$nqn"
		[ "$n_all" = 0 ] && break
		if [ $(($(now_us) - td0)) -gt $((phase_max * 1000000)) ]; then
			left=$n_all
			log "  $t: $left controllers left after ${phase_max} s," \
				"deleting them through sysfs"
			break
		fi
		log "  $t: $n_all controllers left," \
			"$(secs "$td0" "$(now_us)" 1000000) s"
		sleep 1
	done
	res[$t#$r:disconnect_s]=$(secs "$td0" "$(now_us)" 1000000)
	wait "$d1" || log "  $t: nvme disconnect: $(cat "$dir/disconnect.err")"
	b2=$(busy_ticks)
	[ -n "$tlog" ] && p2=$(proc_ticks "$tgt_pid")
	if [ "$left" != 0 ]; then
		for c in /sys/class/nvme/nvme*; do
			read -r id 2>/dev/null <"$c/subsysnqn" || continue
			[ "$id" = "$nqn" ] && echo 1 >"$c/delete_controller"
		done
	fi
	kmsg_since "$t round $r disconnect" >"$dir/dmesg.disconnect"
	res[$t#$r:left]=$left
	res[$t#$r:busy_disconnect_s]=$(secs "$b1" "$b2" "$hz")
	log "  $t: disconnected in ${res[$t#$r:disconnect_s]} s;" \
		"kernel log (count line):"
	group_dmesg "$dir/dmesg.disconnect" | head -n 8 | sed 's/^/    /' >&2
	if [ -n "$tlog" ]; then
		# The target ends a queue on its disconnect event: give the
		# gauges 10 s to drain after the host let go.
		for i in $(seq 1 10); do
			nstats=$((nstats + 1))
			s2=$(wharf_stats "$tlog" "$nstats")
			z=$(gauges_zero "$s2")
			[ "$z" = 1 ] && break
			sleep 1
		done
		log "  $t after disconnect: $s2"
		[ "$z" = 1 ] || log "  $t: gauges not back at zero 10 s after disconnect"
		res[$t#$r:tgt_cpu_s]=$(secs "$p0" "$p2" "$hz")
		res[$t#$r:tgt_cpu_connect_s]=$(secs "$p0" "$p1" "$hz")
		kill -TERM "$tgt_pid"
		wait "$tgt_pid" || log "  $t: wharf-nvmf-tgt exited with status $?"
		tgt_pid=
		grep 'stats at exit' "$tlog" >&2 || true
	fi
	res[$t#$r:stats_connect]=$s1
	res[$t#$r:stats_disconnect]=$s2
	res[$t#$r:gauges_zero]=$z
	sleep 2 # the host's and target's teardown work settles
}

for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then
		for t in "${order[@]}"; do storm "$t" "$r"; done
	else
		for ((i = ${#order[@]} - 1; i >= 0; i--)); do storm "${order[$i]}" "$r"; done
	fi
done

# --- table, reasons, summary ---------------------------------------------------
fmt='%-7s %5s %4s %4s %6s %6s %8s %10s %9s %9s %9s %9s %8s %6s\n'
# shellcheck disable=SC2059 # the format is the constant above
printf "$fmt" target round K Q live failed "live s" "returned s" "discon s" \
	"busy c s" "busy d s" "tgt CPU s" "mem MiB" zeroed
for r in $(seq 1 "$rounds"); do
	for t in "${order[@]}"; do
		# shellcheck disable=SC2059
		printf "$fmt" "$t" "$r" "$k" "$q" "${res[$t#$r:live]}" \
			"${res[$t#$r:failed]}" "${res[$t#$r:live_s]:--}" \
			"${res[$t#$r:connect_s]}" \
			"${res[$t#$r:disconnect_s]}" "${res[$t#$r:busy_connect_s]}" \
			"${res[$t#$r:busy_disconnect_s]}" \
			"${res[$t#$r:tgt_cpu_s]:--}" "${res[$t#$r:mem_mib]}" \
			"$(case ${res[$t#$r:gauges_zero]} in 1) echo yes ;; 0) echo NO ;; *) echo - ;; esac)"
	done
done
for r in $(seq 1 "$rounds"); do
	for t in "${order[@]}"; do
		[ "${res[$t#$r:failed]}" = 0 ] && continue
		echo "$t round $r: nvme connect exit statuses (count status):" \
			"$(echo "${res[$t#$r:status]}" | tr '\n' ',' | sed 's/,$//')"
		[ -z "${res[$t#$r:errors]}" ] ||
			echo "${res[$t#$r:errors]}" | awk '{ print "  nvme connect: " $0 }'
		[ -z "${res[$t#$r:reasons]}" ] ||
			echo "${res[$t#$r:reasons]}" | head -n 8 | sed 's/^/  kernel: /'
	done
	[ -z "${res[wharf#$r:stats_connect]:-}" ] || {
		echo "wharf round $r after connect:    ${res[wharf#$r:stats_connect]}"
		echo "wharf round $r after disconnect: ${res[wharf#$r:stats_disconnect]}"
	}
done
sum=
for r in $(seq 1 "$rounds"); do
	for t in "${order[@]}"; do
		sum+="${sum:+, }$t ${res[$t#$r:live]}/$k live in ${res[$t#$r:live_s]:--} s"
	done
done
echo "summary: storm of $k controllers x $q I/O queues" \
	"(queue size ${qsize/#0/default}): $sum; goal: all live, wharf no slower"

# --- JSON ----------------------------------------------------------------------
jstr() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "${s//$'\t'/ }"
}
jgroup() { # "COUNT TEXT" lines -> {"TEXT": COUNT, ...}
	local n l out=
	while read -r n l; do
		[ -n "$n" ] || continue
		out+="${out:+, }$(jstr "$l"): $n"
	done <<<"$1"
	echo "{$out}"
}
jnum() { [ -n "$1" ] && echo "$1" || echo null; }
if [ -n "$json" ]; then
	{
		printf '{"k": %s, "q": %s, "queue_size": %s, "rounds": %s, ' \
			"$k" "$q" "$qsize" "$rounds"
		printf '"wharf_args": %s, "guest_cpus": %s, "guest_mem_mib": %s, "runs": [' \
			"$(jstr "${wargs//,/ }")" "$ncpu" "$mem_total"
		sep=
		for r in $(seq 1 "$rounds"); do
			for t in "${order[@]}"; do
				printf '%s\n  {"target": "%s", "round": %s, "live": %s, "failed": %s, ' \
					"$sep" "$t" "$r" "${res[$t#$r:live]}" "${res[$t#$r:failed]}"
				printf '"live_s": %s, "returned_s": %s, "disconnect_s": %s, "controllers_left": %s, ' \
					"$(jnum "${res[$t#$r:live_s]}")" \
					"${res[$t#$r:connect_s]}" "${res[$t#$r:disconnect_s]}" \
					"${res[$t#$r:left]}"
				printf '"busy_connect_s": %s, "busy_disconnect_s": %s, ' \
					"${res[$t#$r:busy_connect_s]}" "${res[$t#$r:busy_disconnect_s]}"
				printf '"target_cpu_s": %s, "target_cpu_connect_s": %s, "mem_mib": %s, ' \
					"$(jnum "${res[$t#$r:tgt_cpu_s]:-}")" \
					"$(jnum "${res[$t#$r:tgt_cpu_connect_s]:-}")" \
					"${res[$t#$r:mem_mib]}"
				printf '"exit_status": %s, "connect_errors": %s, "kernel_reasons": %s, ' \
					"$(jgroup "$(echo "${res[$t#$r:status]}" | awk '{print $1, $2}')")" \
					"$(jgroup "${res[$t#$r:errors]}")" \
					"$(jgroup "${res[$t#$r:reasons]}")"
				printf '"stats_after_connect": %s, "stats_after_disconnect": %s, ' \
					"$(jstr "${res[$t#$r:stats_connect]}")" \
					"$(jstr "${res[$t#$r:stats_disconnect]}")"
				printf '"gauges_zero": %s}' "$(case ${res[$t#$r:gauges_zero]} in
					1) echo true ;; 0) echo false ;; *) echo null ;; esac)"
				sep=,
			done
		done
		printf '\n]}\n'
	} >"$json"
	log "JSON in $json"
fi
