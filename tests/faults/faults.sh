#!/usr/bin/env bash
# The fault suite: wharf across two kernels (tools/vm/run.sh --nodes 2)
# without a fault, through loss, delay, link flaps and the client node's
# crash; NVMe-oF through a target kill, the target node's crash and a flap
# (tests/faults/nvmf.sh); docs/faults.md has what each case proves and the
# times measured.  Runs on both nodes at once, the same case list in lockstep
# through tools/vm/rendezvous.sh: node a serves (wharf-echo server, -c N),
# node b connects (wharf-echo client, N connections, 10 messages each),
# each node puts the case's fault on its own NIC (tools/vm/fault.sh: netem
# on both ends hits both directions).
#
# Every case must end with every attempt accounted for (the client's
# connects = connected + rejected + timed out + unreachable + failed +
# aborted; the server's requests likewise), both sides back to zero
# connections, handshakes and waiting requests, and neither side hung
# (killed by its deadline).  Cases marked "all" must also complete every
# exchange.  In the crash case ("server") the server waits for one
# connection more than the client makes, so the N established ones stay
# idle (wharf-echo's exchange starts once all are established), and node b
# crashes once they are (tools/vm/fault.sh crash: qemu killed, the node
# booted again 5 s later, this script started anew on it, resuming after
# that case).  The server must reclaim every connection by itself; how
# long it took counts (settled, from the crash).  Nothing tells it the
# peer is gone: wharf has no keep-alive, and idle connections end only
# with the server's own 30 s deadline.
#
# flap_disconnect ("disconnect"): the server (wharf-echo --hold-ms) holds
# each connection 5 s after its exchange before its DREQ, and node b's
# link goes down for 15 s 2 s after all are established, so the DREQs (or
# their DREPs) are lost: each connection must end by the server's forced
# teardown (the listener's disconnect_timeout_ms, 5 s), all N counted as
# forced_teardowns, each one's DREQ-to-end time (wharf-echo -v's
# CLOCK_MONOTONIC stamps) between 5 s (the timer cannot fire early) and a
# loose 10 s (the server runs with --disconnect-ms 5000: the timer
# under test, not the library's default).  The client's exchange must
# complete; it never hears the lost DREQ, so it may end by its own
# deadline, its attempts accounted.
#
# cut_dreq ("dreq"): the other side of that timer.  The server holds
# each connection 3 s after its exchange; node a drops everything it
# sends (netem loss 100 %: the link stays up, so node b sees no link
# event) from half a second after all are established until 5.5 s after
# its first DREQ: each DREQ and the CM's first resend (~4 s later) are
# lost, the second resend (~7.5 s) gets through.  With the library's default disconnect timer
# (20 s, room for the resends) every connection must end by its DREP: no
# forced teardown, both sides exit 0, and the slowest DREQ-to-end above
# 5 s (proof that a resend was needed).  A timer shorter than the
# resends (the old 5 s) tears the server's side down first, and the
# client waits for a DREQ that never comes, until its deadline.
#
# Either node may crash in a case (crash SECS: node b; the NVMe-oF
# tgt-crash: node a): the node records the case, and when it boots again
# this script resumes it there (node b: its client is gone; node a: the
# target starts again on the same file) and goes on with the next one.
# Each case leaves NAME.wire on both nodes: the NIC's counters, the
# neighbours, rxe0's port, counters and GIDs at its end.
#
# Node a writes gtest-style XML (results/faults.xml, one case each,
# counted by ./wharf test) and results/faults.json (attempts, outcomes,
# seconds per case) to its share; each side's logs go beside.
#
#   faults.sh [--quick] [--all] [--asan DIR] [--repeat N] [--with-defects]
#             [CASE...]
#                                            (inside run.sh --nodes 2)
#   faults.sh --list     the case names, one a line, "NAME slow" for the
#                        slow ones (anywhere: ./wharf test reads it)
# --quick: fewer connections (20 instead of 50).  --all: the slow case
# too (nvmf_tgt_node_crash: a reboot), which runs otherwise only when
# named; ./wharf test runs the rest, ./wharf faults all.  --asan DIR: wharf-echo, wharf-nvmf-tgt and wharf-nvmf-perf from
# DIR, ASan (LeakSanitizer) builds (./wharf faults --asan): each process
# that exits by itself reports its leaks to its log at exit, and each
# case counts the leak records ("Direct/Indirect leak of") of its
# processes in its "leaks found" (a leak fails the case); a process
# killed (SIGKILL, its deadline) or lost with its crashed node cannot
# report and is named n/a.  Without --asan: "not checked".  --repeat N:
# the case list N times in this boot (round K's case is NAME@K in the
# results; a case's rounds one after the other), for ./wharf test --repeat.
#
# A case that meets a known defect of the running kernel does not run on
# it: it is counted as skipped, with the defect named (kernel_defect
# below), unless --with-defects (./wharf faults, on demand) runs it all
# the same.  Each case's wall time on node a (from the two nodes' meeting
# at its start to the one at its end) is its time in faults.xml.
set -uo pipefail

usage() {
	sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
echo_bin=${WHARF_ECHO:-$top/bazel-bin/targets/echo/wharf-echo}
rv=$top/tools/vm/rendezvous.sh
fault=$top/tools/vm/fault.sh
conns=50
# flap_disconnect: the server holds each connection this long after its
# exchange before its DREQ; wharf's disconnect timer (the listener's
# disconnect_timeout_ms, default 5000) ends what the flap loses.
disc_hold_ms=5000
disc_timeout_s=5
# cut_dreq: the hold before the DREQs, and how long after the first one
# the cut ends (past the CM's first resend, before its second).
dreq_hold_ms=3000
dreq_cut_after_s=5.5
# shellcheck source=tests/faults/nvmf.sh
source "$top/tests/faults/nvmf.sh"

# The flaps come last, flap3s the very last: after a flap in which node b
# sent CM messages, its rxe loses its CM for the rest of the boot (both
# kernels: kernel_defect above); the crash reboots node b.
# name | expect (all: every exchange completes; accounted: every attempt
# ends somewhere; server: the client dies, the server accounts for all) |
# fault: "none" (the baseline), "netem OPTS" on both nodes, "flap SECS"
# (node b's link down SECS, 1 s after its client starts), "flap-disc SECS"
# (the same, timed to meet the server's disconnects), "cut-dreq" (node
# a sends nothing through its DREQs and their first resend), "crash
# SECS" (node
# b crashes once all are established, powered off SECS), or the NVMe-oF
# faults of tests/faults/nvmf.sh (expect "nvmf") | messages per connection
# (default 10) | connections (default: 50, --quick 20) | "slow": only
# when named or with --all (./wharf faults, ./wharf test --long), each
# with its reason beside it.  Expect "perf": the NVMe-oF target with
# wharf-nvmf-perf --verify as the host (tests/faults/nvmf.sh), through
# netem (both NICs, the whole run), a kill or a flap.
cases=(
	"clean|all|none"
	"loss1|all|netem loss 1%"
	"loss5|all|netem loss 5%"
	"delay20ms|all|netem delay 20ms 10ms"
	"cut_dreq|dreq|cut-dreq|10|20"
	"crash_client|server|crash 5|10|20"
	"nvmf_tgt_kill|nvmf|tgt-kill 2"
	"nvmf_perf_loss|perf|netem loss 3%"
	"nvmf_perf_tgt_kill|perf|tgt-kill 2"
	# slow: node a's crash, its reboot and the host's reconnect take
	# two to three minutes of a two-node boot (docs/faults.md), a tenth
	# of the suite's budget; what it alone shows (a host noticing by
	# keep-alive a target node gone without a word) is not in CI.
	"nvmf_tgt_node_crash|nvmf|tgt-crash 5|||slow"
	"nvmf_flap|nvmf|flap 3"
	"nvmf_perf_flap|perf|flap 3"
	"flap_disconnect|disconnect|flap-disc 15|10|20"
	"flap3s|accounted|flap 3"
)

# The defect of the running kernel that case $1 would meet, or nothing
# (docs/faults.md, "What the faults revealed", has the evidence).  Both
# kernels' rxe can lose node b's CM after a flap in which node b sent CM
# messages (MADs) while its link was down, so a host that must reconnect
# after its flap never does:
# - 6.1: node b's rxe then drops every CM message node a sends (its GSI
#   QP shows RTS; a race, two of three boots);
# - 6.12: node b's GSI QP (QP 1) is left in the error state, and every
#   CM message node b sends afterwards is lost (node a counts no
#   request); the kernel host's `nvme disconnect` then hangs in the
#   kernel.  Seen in the one boot of each case on 6.12.
# flap3s and flap_disconnect do not need the CM after their flap (every
# attempt accounted for; forced teardowns), and run: flap3s last, as it
# leaves node b so for the rest of the boot.
kernel_defect() {
	case "$1" in
	nvmf_flap | nvmf_perf_flap) ;;
	*) return 0 ;;
	esac
	case "$(uname -r)" in
	6.1.*)
		echo "kernel 6.1's rxe can drop every CM message after a link flap (docs/faults.md)"
		;;
	6.12.*)
		echo "kernel 6.12's rxe leaves the GSI QP in error after a link flap: no CM message gets out (docs/faults.md)"
		;;
	esac
}

want=()
all=0
asan=0
rounds=1
with_defects=0
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) conns=20 ;;
	--all) all=1 ;;
	--asan)
		[ $# -ge 2 ] || {
			echo "faults.sh: --asan needs a directory" >&2
			exit 2
		}
		asan=1
		echo_bin=$2/wharf-echo
		nvmf_tgt_bin=$2/wharf-nvmf-tgt
		nvmf_perf_bin=$2/wharf-nvmf-perf
		shift
		;;
	--repeat)
		rounds=${2:-}
		case "$rounds" in
		'' | *[!0-9]* | 0)
			echo "faults.sh: --repeat takes a count" >&2
			exit 2
			;;
		esac
		shift
		;;
	--with-defects) with_defects=1 ;;
	--list)
		for c in "${cases[@]}"; do
			IFS='|' read -r name _ _ _ _ slow <<<"$c"
			echo "$name${slow:+ slow}"
		done
		exit 0
		;;
	-h | --help)
		usage
		exit 0
		;;
	-*)
		echo "faults.sh: unknown option $1" >&2
		exit 2
		;;
	*) want+=("$1") ;;
	esac
	shift
done
if [ "$asan" = 1 ]; then
	# Leaks reported at exit, to the process's stderr (its log); the
	# exit status 23 on a leak, as ASan's default.
	export ASAN_OPTIONS=detect_leaks=1:exitcode=23
	export UBSAN_OPTIONS=print_stacktrace=1
fi
node=${WHARF_NODE:?run me through tools/vm/run.sh --nodes 2}
res=${WHARF_GUEST_SHARE:?}/results
mkdir -p "$res"

# The value of KEY in wharf-echo's last "outcomes:" line of log $1 (-1:
# none).  Shell builtins only: a case reads some fifty values, and a
# process for each (awk) cost a one-vCPU TCG node seconds per case.
outcome() {
	local l line="" w k=""
	[ -f "$1" ] || {
		echo -1
		return
	}
	while IFS= read -r l || [ -n "$l" ]; do
		case "$l" in
		*"wharf-echo: outcomes:"*) line=${l#*outcomes: } ;;
		esac
	done <"$1"
	for w in ${line//;/}; do
		if [ -n "$k" ]; then
			[ "$k" != "$2" ] || {
				echo "$w"
				return
			}
			k=""
		elif [ "$w" != left: ]; then
			k=$w
		fi
	done
	echo -1
}

# "ok" or why not, for one side's log: every attempt (KEY: connects or
# requests) accounted for and nothing left.
audit() {
	local log=$1 key=$2 n total k sum=0
	total=$(outcome "$log" "$key")
	[ "$total" != -1 ] || {
		echo "no outcomes line"
		return
	}
	for k in connected accepted rejected timed_out unreachable failed \
		aborted; do
		n=$(outcome "$log" "$k")
		sum=$((sum + n))
	done
	[ "$sum" = "$total" ] || {
		echo "$key $total but $sum outcomes"
		return
	}
	for k in connections handshakes waiting; do
		n=$(outcome "$log" "$k")
		[ "$n" = 0 ] || {
			echo "left: $k $n"
			return
		}
	done
	echo ok
}

# The non-zero outcomes of a log, "key n, key n" (or "none").
outcomes() {
	local k n out=""
	for k in connected accepted rejected timed_out unreachable failed \
		aborted forced_teardowns; do
		n=$(outcome "$1" "$k")
		[ "$n" = 0 ] || [ "$n" = -1 ] || out+="${out:+, }$k $n"
	done
	echo "${out:-none}"
}

# Leak records (LeakSanitizer's "Direct/Indirect leak of") in the log of
# a process that ended with status RC, or "n/a" when it could not report:
# killed by a signal (SIGKILL 137, its deadline 124), lost with its node
# ("crashed") or never run (125, no log).
leaks_in() { # log rc
	case "$2" in
	124 | 125 | 1[3-9][0-9] | 2[0-9][0-9] | crashed | "")
		echo n/a
		return
		;;
	esac
	[ -f "$1" ] || {
		echo n/a
		return
	}
	grep -cE '(Direct|Indirect) leak of' "$1"
}

# A case's "leaks found" from its processes, each "LABEL|LOG|RC": sets
# leak_txt ("not checked" without --asan; else the records summed over
# the processes that could report, "n/a" where none could, and the ones
# that could not named: "0 (n/a: tgt1)") and leak_why (the verdict's
# words on leaks and sanitizer errors, or nothing).
leak_check() {
	leak_txt="not checked"
	leak_why=""
	[ "$asan" = 1 ] || return 0
	local p label lg rc n sum=0 na="" checked=0
	for p in "$@"; do
		IFS='|' read -r label lg rc <<<"$p"
		n=$(leaks_in "$lg" "$rc")
		if [ "$n" = n/a ]; then
			na+="${na:+, }$label"
			continue
		fi
		checked=1
		sum=$((sum + n))
		[ "$n" = 0 ] || leak_why+="$label: $n leak records; "
		! grep -qE 'ERROR: AddressSanitizer|runtime error:' "$lg" ||
			leak_why+="$label: sanitizer error; "
	done
	if [ "$checked" = 0 ]; then
		leak_txt=n/a
	else
		leak_txt="$sum${na:+ (n/a: $na)}"
	fi
}

# Each line of stdin stamped with the seconds (one decimal) since
# $EPOCHREALTIME was $1, as it comes: builtins only, no process a line.
stamp() {
	local line t0=${1/./} d
	while IFS= read -r line; do
		d=$(((${EPOCHREALTIME/./} - t0) / 100000))
		printf '%d.%d %s\n' $((d / 10)) $((d % 10)) "$line"
	done
}

now() { cut -d' ' -f1 /proc/uptime; }
secs_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The wire's state on this node, for what a fault left behind: the NIC,
# the neighbour table, rxe0's port and its counters (packets, retries,
# errors).  Written at each case's end to RES/NAME.wire.
wire_state() {
	{
		echo "uptime $(now)"
		ip -s link show dev "$WHARF_NIC"
		ip neigh show dev "$WHARF_NIC"
		rdma link show
		rdma statistic show link rxe0/1 2>&1
		# Every QP's state, the GSI QP (1, the CM's) among them.
		rdma res show qp 2>&1
		# RoCEv2 is UDP: what the stack dropped before rxe saw it.
		grep '^Udp:' /proc/net/snmp
		# rxe drops what is not sent to one of its GIDs (the table has
		# hundreds of entries: one grep, not a process each).
		grep -H . /sys/class/infiniband/rxe0/ports/1/gids/* 2>/dev/null |
			grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$' |
			sed 's|.*/gids/|gid |'
		grep -H . /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/* \
			2>/dev/null | sed 's|.*/types/|gid type |'
	} >"$res/$1.wire" 2>&1
}

apply() {
	case "$1" in
	netem\ *) "$fault" $1 ;;
	esac
}

# Node b: the client's side of one case.
client_case() {
	# Two statements: the words of one `local` are expanded before any
	# of its assignments, so $name would be the caller's (the bare case
	# name, not the round's key).
	local name=$1 expect=$2 f=$3 count=$4 n=$5
	local log=$res/$name.client.log
	local t0 rc fp="" verbose=()
	"$rv" wait "$name.listening" 60 >/dev/null || {
		"$rv" post "$name.client" "125 0"
		return
	}
	# wharf-echo exchanges once all N are established: where some fail on
	# purpose, the one established waits for its deadline, which must
	# outlast wharf's own step timers (address 2 s, route 2 s, connect
	# 30 s) so that every attempt ends by them.
	local limit=120
	[ "$expect" = all ] || limit=45
	case "$expect" in server | disconnect | dreq) verbose=(-v) ;; esac
	t0=$(now)
	# Emptied first: the loops below must not read an earlier run's log.
	: >"$log"
	timeout -k 5 $((limit + 30)) "$echo_bin" -s "$WHARF_PEER_ADDR" \
		-c "$n" -C "$count" --timeout "$limit" "${verbose[@]}" \
		>"$log" 2>&1 &
	local cpid=$!
	case "$f" in
	flap\ *)
		(sleep 1 && "$fault" link-down "${f#flap }") &
		fp=$!
		;;
	flap-disc\ *)
		# The exchange takes well under a second; the server holds each
		# connection disc_hold_ms after it: the link goes down between.
		# (A deadline, not a count: each grep on the share takes a
		# while in a loaded guest.)
		(end=$((SECONDS + 60))
		while ! grep -q "connections established" "$log"; do
			[ "$SECONDS" -lt "$end" ] || exit 0
			sleep 0.1
		done
		sleep 2 && "$fault" link-down "${f#flap-disc }") &
		fp=$!
		;;
	crash\ *)
		local i
		for i in $(seq 600); do
			grep -q "connections established" "$log" && break
			sleep 0.1
		done
		echo "$name" >"$res/faults.crashed"
		sync
		"$rv" post "$name.crash"
		"$fault" crash "${f#crash }"
		;;
	esac
	wait "$cpid"
	rc=$?
	[ -z "$fp" ] || wait "$fp"
	"$rv" post "$name.client" "$rc $(secs_since "$t0")"
}

# Node a: the server's side of one case; prints the verdict.
server_case() {
	local name=$1 expect=$2 count=$3 n=$4 f=$5
	local log=$res/$name.server.log
	local t0 rc i fp=""
	# wharf-echo's server waits for all N; where some attempts may never
	# reach it, its deadline ends the case (its accept timer, 20 s, ends
	# the half-open handshakes well before).
	local limit=150
	[ "$expect" = all ] || limit=55
	[ "$expect" != server ] || limit=30
	t0=$(now)
	local t0e=$EPOCHREALTIME
	rm -f "$res/$name.crash_t"
	if [ "$expect" = server ]; then
		("$rv" wait "$name.crash" 120 >/dev/null && now >"$res/$name.crash_t") &
	fi
	# Each line stamped with the seconds since the server started, as it
	# comes (awk may read its input in blocks).
	local want_n=$n extra=()
	# Emptied first: "listening" must be this server's, not an earlier
	# run's under the same name.
	: >"$log"
	[ "$expect" != server ] || want_n=$((n + 1))
	[ "$expect" != disconnect ] || extra=(-v --hold-ms "$disc_hold_ms"
		--disconnect-ms $((disc_timeout_s * 1000)))
	[ "$expect" != dreq ] || extra=(-v --hold-ms "$dreq_hold_ms")
	timeout -k 5 $((limit + 40)) "$echo_bin" -c "$want_n" -C "$count" \
		--timeout "$limit" "${extra[@]}" 2>&1 | stamp "$t0e" >"$log" &
	local spid=$!
	for i in $(seq 100); do
		grep -q listening "$log" && break
		sleep 0.1
	done
	"$rv" post "$name.listening"
	if [ "$f" = cut-dreq ]; then
		# The exchange takes well under a second, the DREQs go out
		# dreq_hold_ms after it: the cut begins between, and ends
		# timed from the first DREQ.  (Deadlines, not counts: each
		# grep on the share takes a while in a loaded guest.)
		(end=$((SECONDS + 60))
		while ! grep -q "connections established" "$log"; do
			[ "$SECONDS" -lt "$end" ] || exit 0
			sleep 0.1
		done
		sleep 0.5
		"$fault" netem loss 100%
		while ! grep -q " disconnecting$" "$log"; do
			[ "$SECONDS" -lt "$end" ] || break
			sleep 0.1
		done
		sleep "$dreq_cut_after_s"
		"$fault" clear) >/dev/null 2>&1 &
		fp=$!
	fi
	wait "$spid"
	rc=$?
	[ -z "$fp" ] || wait "$fp"
	local srv_s cv crc csec why=""
	srv_s=$(secs_since "$t0")
	cv=$("$rv" wait "$name.client" 200) || cv="125 0"
	read -r crc csec <<<"$cv"
	local cl=$WHARF_PAIR_SHARE/node-b/results/$name.client.log
	local sa ca
	sa=$(audit "$log" requests)
	ca=$(audit "$cl" connects)
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || why+="server hung (killed); "
	if [ "$expect" != server ]; then
		[ "$crc" != 124 ] && [ "$crc" != 137 ] || why+="client hung (killed); "
	fi
	[ "$crc" != 125 ] || why+="client never ran; "
	[ "$sa" = ok ] || why+="server: $sa; "
	if [ "$expect" = server ]; then
		[ "$crc" = 137 ] || why+="client node did not crash; "
	else
		[ "$ca" = ok ] || why+="client: $ca; "
	fi
	local recover=-1 lo hi forced
	if [ "$expect" = disconnect ] || [ "$expect" = dreq ]; then
		[ "$rc" = 0 ] || why+="server exit $rc; "
		forced=$(outcome "$log" forced_teardowns)
		# Each connection's DREQ until it ended (wharf-echo's -v
		# stamps): the shortest and the longest.
		read -r lo hi <<<"$(awk '
			/ disconnecting$/ { d[$5] = $3 }
			/ disconnected$/ && ($5 in d) { s = $3 - d[$5]; n++
				if (n == 1 || s < lo) lo = s
				if (n == 1 || s > hi) hi = s }
			END { if (!n) print -1, -1
			else printf "%.1f %.1f\n", lo, hi }' "$log")"
		recover=$hi
	fi
	if [ "$expect" = disconnect ]; then
		# Every exchange completed before the flap, every disconnect
		# lost in it: each ends by the server's own forced teardown.
		[ "$forced" = "$n" ] || why+="forced teardowns $forced of $n; "
		# Not before wharf's timer (it cannot fire early); the upper
		# bound is loose (2x) for a loaded TCG guest.
		awk -v lo="$lo" -v hi="$hi" -v t="$disc_timeout_s" \
			'BEGIN { exit !(lo >= t && hi <= 2 * t) }' ||
			why+="teardowns took $lo-$hi s, not within ${disc_timeout_s}-$((2 * disc_timeout_s)) s; "
	fi
	if [ "$expect" = dreq ]; then
		# The DREQs and their first resends lost, a later resend
		# answered: every connection ends by its DREP, on both sides.
		[ "$forced" = 0 ] || why+="forced teardowns $forced (the DREQ's resends did not get through); "
		[ "$crc" = 0 ] || why+="client exit $crc (a DREQ never reached it); "
		awk -v hi="$hi" 'BEGIN { exit !(hi > 5) }' ||
			why+="slowest DREQ-to-end $hi s: no resend was needed, the flap missed the DREQs; "
	fi
	if [ "$expect" = all ]; then
		[ "$rc" = 0 ] || why+="server exit $rc; "
		[ "$crc" = 0 ] || why+="client exit $crc; "
	fi
	# Settled: the server's last connection error, else its last line.
	# After a crash: counted from the moment node a heard of it.
	local settled attempts est
	settled=$(awk '/connection error|disconnected early/ { e = $1 } { l = $1 }
		END { print (e != "" ? e : (l != "" ? l : -1)) }' "$log")
	attempts=$(outcome "$cl" connects)
	est=$(outcome "$cl" connected)
	if [ "$expect" = server ]; then
		attempts=$(outcome "$log" requests)
		est=$(outcome "$log" accepted)
		if [ -f "$res/$name.crash_t" ]; then
			settled=$(awk -v s="$settled" -v c="$(cat "$res/$name.crash_t")" \
				-v t0="$t0" 'BEGIN { printf "%.1f", s - (c - t0) }')
		else
			why+="never heard of the crash; "
		fi
	fi
	# The client on a crashed node (crc 137) cannot report.
	leak_check "server|$log|$rc" "client|$cl|$crc"
	why+=$leak_why
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" \
		"$attempts" "$est" \
		"$crc" "$rc" "$csec" "$srv_s" "$settled" \
		"$(outcomes "$cl")" "$(outcomes "$log")" "$recover" \
		"$leak_txt" >>"$res/faults.tsv"
	printf '%s\t%s\n' "$name" "${why:-ok}" >>"$res/faults.verdicts"
	printf '%s' "${why:-ok}"
}

# gtest-style XML and JSON from faults.tsv and faults.verdicts.
report() {
	awk -F'\t' -v xml="$res/faults.xml" -v json="$res/faults.json" '
	FILENAME ~ /faults.times$/ { wall[$1] = $2; next }
	FILENAME ~ /faults.verdicts$/ { v[$1] = $2; next }
	{
		n++; name[n] = $1; att[n] = $2; est[n] = $3; crc[n] = $4
		src[n] = $5; cs[n] = $6; ss[n] = $7; st[n] = $8; co[n] = $9
		so[n] = $10; rec[n] = ($11 == "" ? -1 : $11)
		lk[n] = ($12 == "" ? "not checked" : $12)
		# The leak count, null where not checked or none could report.
		ln[n] = (lk[n] ~ /^[0-9]+/ ? lk[n] + 0 : "null")
	}
	END {
		print "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" > xml
		printf "<testsuites tests=\"%d\" name=\"faults\">\n", n > xml
		printf "<testsuite name=\"faults\" tests=\"%d\">\n", n > xml
		printf "[" > json
		for (i = 1; i <= n; i++) {
			printf "<testcase name=\"%s\" classname=\"faults\" time=\"%s\">\n", name[i], (name[i] in wall ? wall[name[i]] : cs[i]) > xml
			m = v[name[i]]; gsub(/[<>&"]/, "_", m)
			if (m ~ /^skipped: /)
				printf "<skipped message=\"%s\"/>\n", substr(m, 10) > xml
			else if (m != "ok")
				printf "<failure message=\"%s\"></failure>\n", m > xml
			print "</testcase>" > xml
			printf "%s\n {\"case\": \"%s\", \"attempts\": %d, \"established\": %d, \"client_outcomes\": \"%s\", \"server_outcomes\": \"%s\", \"client_exit\": %d, \"server_exit\": %d, \"client_s\": %s, \"server_s\": %s, \"server_settled_s\": %s, \"recover_s\": %s, \"leaks\": %s, \"leaks_found\": \"%s\", \"verdict\": \"%s\"}", (i > 1 ? "," : ""), name[i], att[i], est[i], co[i], so[i], crc[i], src[i], cs[i], ss[i], st[i], rec[i], ln[i], lk[i], v[name[i]] > json
		}
		print "</testsuite>\n</testsuites>" > xml
		print "\n]" > json
	}' "$res/faults.times" "$res/faults.verdicts" "$res/faults.tsv"
}

# Node a: prints case NAME's verdict V (and the status turns 1 on a fail).
verdict() { # name v
	if [ "${2#skipped: }" != "$2" ]; then
		echo "faults: SKIP $1: ${2#skipped: }"
	elif [ "$2" = ok ]; then
		echo "faults: PASS $1 ($(tail -n 1 "$res/faults.tsv" |
			awk -F'\t' '{ printf "%d attempts, %d established, client %s s", $2, $3, $6
				if ($11 != -1) printf ", recover %s s", $11 }'))"
	else
		echo "faults: FAIL $1: $2"
		status=1
	fi
}

status=0
# Each node's own record, to resume after its crash: the cases done and the
# one it crashed in (the other side of that case still waits for it).
if [ "${WHARF_BOOT:-1}" = 1 ]; then
	rm -f "$res"/faults.*
	: >"$res/faults.times"
fi
# With --repeat, each case's rounds run one after the other (a flap can
# leave the kernel broken for what follows it: the flaps come last).
for c in "${cases[@]}"; do
for round in $(seq "$rounds"); do
	IFS='|' read -r name expect f count n slow <<<"$c"
	count=${count:-10}
	n=${n:-$conns}
	if [ ${#want[@]} -gt 0 ] && ! printf '%s\n' "${want[@]}" | grep -qxF "$name"; then
		continue
	fi
	# A slow case runs when named or with --all (./wharf faults).
	[ -z "${slow:-}" ] || [ "$all" = 1 ] || [ ${#want[@]} -gt 0 ] || continue
	# The case's key in this run: its name, NAME@K in round K of several.
	key=$name
	[ "$rounds" = 1 ] || key=$name@$round
	if grep -qxF "$key" "$res/faults.done" 2>/dev/null; then
		continue
	fi
	defect=""
	[ "$with_defects" = 1 ] || defect=$(kernel_defect "$name")
	if [ -n "$defect" ]; then
		# Both nodes see the same kernel: neither runs it.
		if [ "$node" = a ]; then
			printf '%s\t0\t0\t0\t0\t0\t0\t-1\tnone\tnone\t-1\tnot checked\n' \
				"$key" >>"$res/faults.tsv"
			printf '%s\tskipped: %s\n' "$key" "$defect" >>"$res/faults.verdicts"
			printf '%s\t0\n' "$key" >>"$res/faults.times"
			verdict "$key" "skipped: $defect"
		fi
		echo "$key" >>"$res/faults.done"
		continue
	fi
	if [ "$(cat "$res/faults.crashed" 2>/dev/null)" = "$key" ]; then
		echo "faults: node $node back (boot $WHARF_BOOT) after crashing in $key"
		rm -f "$res/faults.crashed"
		if [ "$node" = b ]; then
			"$rv" post "$key.client" "137 0"
		else
			verdict "$key" "$(nvmf_target_resume "$key" "$f")"
		fi
		"$rv" meet "$key.end" 240 || status=1
		echo "$key" >>"$res/faults.done"
		continue
	fi
	"$rv" meet "$key.begin" 120 || {
		echo "faults: the other node never reached $key"
		status=1
		break 2
	}
	# Node a's wall time of the case, meeting to meeting (a case node a
	# crashed in keeps its client time: its clock began anew).
	[ "$node" != a ] || echo "$(now)" >"$res/faults.t0"
	apply "$f"
	t0=$(now)
	if [ "$node" = a ] && [ "$expect" = nvmf ]; then
		verdict "$key" "$(nvmf_target_case "$key" "$f")"
		"$fault" clear
	elif [ "$node" = a ] && [ "$expect" = perf ]; then
		verdict "$key" "$(nvmf_target_case "$key" "$f" perf)"
		"$fault" clear
	elif [ "$node" = a ]; then
		verdict "$key" "$(server_case "$key" "$expect" "$count" "$n" "$f")"
		"$fault" clear
	elif [ "$expect" = nvmf ]; then
		nvmf_host_case "$key" "$f"
		"$fault" clear
	elif [ "$expect" = perf ]; then
		nvmf_perf_case "$key" "$f"
		"$fault" clear
	else
		client_case "$key" "$expect" "$f" "$count" "$n"
		"$fault" clear
	fi
	wire_state "$key"
	"$rv" meet "$key.end" 240 || status=1
	[ "$node" != a ] ||
		printf '%s\t%s\n' "$key" "$(secs_since "$(cat "$res/faults.t0")")" \
			>>"$res/faults.times"
	echo "$key" >>"$res/faults.done"
done
done
[ "$node" = b ] || [ ! -f "$res/faults.tsv" ] || report
exit "$status"
