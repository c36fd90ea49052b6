# shellcheck shell=bash
# shellcheck disable=SC2154 # top, res, rv, fault: set by faults.sh
# tests/faults/nvmf.sh - the fault suite's NVMe-oF cases (sourced by
# tests/faults/faults.sh, which sets res, rv, fault, node and the helpers
# now / secs_since): wharf-nvmf-tgt on node a with a file namespace, the
# Linux kernel host on node b (nvme connect --reconnect-delay=1
# --ctrl-loss-tmo) running fio randwrite with crc32c verify through the
# fault.  Faults: "flap SECS" (node b's link down SECS, 3 s into the
# writes), "tgt-kill SECS" (node a SIGKILLs the target 3 s into the writes
# and starts it again SECS later on the same port, NQN and file) and
# "tgt-crash SECS" (node a crashes 3 s into the writes, is booted again
# SECS later, and the target starts again there).
#
# The backing file of the crash case lives in node a's share (9p,
# cache=none: each pwrite reaches the host's page cache before the target
# completes the write), which outlives node a's crash; the other cases'
# in node a's tmpfs, which outlives the target's kill.  So the crash case checks the strong
# property: every write the host saw acknowledged, before or after the
# crash, reads back (fio's verify covers the whole write phase), not just
# that I/O works once the host reconnected.
#
# Verdict: fio exit 0 with no error and its verify read back every byte it
# wrote; the host reconnected at least once (dmesg's "Successfully
# reconnected") and its controller was live at the end; the target's stats
# back to ctrls=0 queues=0 reqs=0 held=0 bufs=0 deferred=0 once the host
# disconnected, and a clean SIGTERM exit.  Times, from node b's kernel log
# (dmesg): outage, the host's first "starting error recovery" until its
# last "Successfully reconnected"; recover, the fault's start (link down;
# node a's word that it kills or crashes, seen within 0.2 s) until then.
#
# The userspace host's cases (expect "perf"): the same target on node a,
# wharf-nvmf-perf on node b instead of the kernel host, randwrite
# --verify for a fixed time (20 s, 60 s with a kill or a flap; each
# command slot writes its own blocks, reads them back and compares; at
# the end every slot's last acknowledged write is read once more), its
# namespace file on node a's tmpfs, through "netem OPTS" (both NICs, the whole
# run), "flap SECS" and "tgt-kill SECS" as above.  Verdict: perf exit 0
# (not killed by its deadline), no command error, no verify mismatch,
# every slot's last acknowledged write read again (rechecked = queues x
# QD: every command ended, none left in flight), at least one reconnect
# where the fault forces one (tgt-kill), and whatever the fault every
# loss the host saw ("live -> resetting") ended in a reconnect; the
# target as above.  Times from perf's stderr, each line stamped with node
# b's clock: outage, the first "live -> resetting" until the first
# one-second progress line with completions that starts after the last
# state change logged (the library logs "-> live" at info level, which
# perf does not print: up to 1 s late); recover, the fault's start until
# then.

nvmf_port=4420
nvmf_nqn=nqn.2024-01.io.wharf:faults
# fio: 4 KiB random writes at a fixed rate so that the write phase (size /
# rate) outlasts the fault and the reconnect, then the verify reads at full
# speed (the rate is for writes only: --rate=,RATE).
nvmf_size=${WHARF_FAULTS_NVMF_SIZE:-16M}
nvmf_rate=${WHARF_FAULTS_NVMF_RATE:-1M}
nvmf_ctrl_loss=120
# fio's deadline: 16 MiB at 1 MiB/s, the verify, a reconnect after a
# crash and a reboot take about 80 s.  (8 MiB was too short: fio started
# cold on node b and the gate saw its writes late, so the kill came after
# fio had finished, once in five rounds.)
nvmf_fio_limit=180
# Capsules the target must have taken before the fault (the connect and
# the partition scan take about 25).
nvmf_before=200

# shellcheck source=tools/lib/nvmf.sh
prog=faults source "$top/tools/lib/nvmf.sh"
nvmf_tgt_bin=${WHARF_NVMF_TGT:-$top/bazel-bin/targets/nvmf/wharf-nvmf-tgt}
nvmf_perf_bin=${WHARF_NVMF_PERF:-$top/bazel-bin/initiators/nvmf/wharf-nvmf-perf}
# wharf-nvmf-perf: two I/O queues of QD 8 (16 slots, each owning 2 MiB of
# the 64 MiB namespace) for a fixed time: 20 s under netem (on for the
# whole run), 60 s for a kill or a flap, which must meet the run and
# leave it time to recover (on a loaded machine node b took 17 s from
# perf's start to its first progress line and node a 24 s more from that
# word to the kill).  Its deadline leaves room for the final read-back
# and a slow reconnect.  Reconnects 0.5 s after a loss (doubling, at
# most 4 s), for at most 60 s (perf takes nvme-cli's seconds).
nvmf_perf_time=20
nvmf_perf_fault_time=60
# With a kill or a flap the run ends sooner once it has shown what it is
# for: the host lost the controller after the fault, and completed I/O in
# this many progress lines (one a second) after its last state change;
# then SIGINT ends perf as if its time were up (drain, read-back, report).
nvmf_perf_after=5
nvmf_perf_queues=2
nvmf_perf_qd=8
nvmf_perf_limit=180
nvmf_perf_delay=0.5
nvmf_perf_loss=60

# Node a: wharf-nvmf-tgt on FILE, logging to LOG; sets tgt_pid.
nvmf_tgt_up() { # log file
	nvmf_tgt_start "$1" "$nvmf_tgt_bin" -l "$WHARF_ADDR:$nvmf_port" \
		-s "$nvmf_nqn" -n "1 file:$2" -A
}

# Node a: the last stats line of LOG as "key=value" words.
nvmf_stats() {
	grep 'wharf-nvmf-tgt: stats' "$1" | tail -n 1 | sed 's/.*stats[^:]*: //'
}

# Node a: "ok" once the target's counters are back to zero (SIGUSR1, 30 s
# at most), else what is left.
nvmf_tgt_zero() { # log
	local i s
	for i in $(seq 60); do
		kill -USR1 "$tgt_pid" 2>/dev/null || {
			echo "target gone"
			return
		}
		sleep 0.5
		s=$(nvmf_stats "$1")
		if tr ' ' '\n' <<<"$s" | grep -qxE \
			'(ctrls|queues|reqs|held|bufs|deferred)=[1-9][0-9]*'; then
			continue
		fi
		[ -z "$s" ] || {
			echo ok
			return
		}
	done
	echo "left: $(tr ' ' '\n' <<<"$s" | grep -E \
		'^(ctrls|queues|reqs|held|bufs|deferred)=[1-9]' | tr '\n' ' ')"
}

# Node a: the target's side of case NAME with FAULT, after the target
# started; resumed here after node a's own crash.  KIND: the host on node
# b, kernel (nvme-rdma + fio, the default) or perf (wharf-nvmf-perf).
# Prints the verdict.
nvmf_target_finish() { # name fault log t0 [kind]
	local name=$1 f=$2 log=$3 t0=$4 kind=${5:-kernel} cv why="" z rc i
	cv=$("$rv" wait "$name.client" 400) || cv="125"
	local w0
	w0=$(cat "$res/$name.before" 2>/dev/null)
	z=$(nvmf_tgt_zero "$log")
	kill -TERM "$tgt_pid" 2>/dev/null
	for i in $(seq 100); do
		kill -0 "$tgt_pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$tgt_pid" 2>/dev/null && why+="target hung at SIGTERM; "
	wait "$tgt_pid"
	rc=$?
	local created crc=${cv%% *}
	created=$(nvmf_stats "$log" | tr ' ' '\n' | sed -n 's/^ctrls_created=//p')
	[ "$crc" != 125 ] || why+="host never ran; "
	# The kernel host's gate: capsules; wharf-nvmf-perf's: its own
	# word that completions flow (nvmf_perf_flowing).
	if [ "$crc" != 125 ] && [ "$kind" = kernel ]; then
		[ "${w0:-0}" -ge "$nvmf_before" ] ||
			why+="${w0:-0} capsules before the fault, not $nvmf_before (60 s); "
	fi
	[ "$z" = ok ] || why+="target: $z; "
	[ "$rc" = 0 ] || why+="target exit $rc; "
	case "$f" in
	tgt-*) [ "${created:-0}" -ge 1 ] ||
		why+="no controller on the restarted target; " ;;
	esac
	# Leaks (--asan): each target that exited by itself; the one killed
	# or crashed with its node (tgt1 of tgt-kill, tgt-crash) cannot
	# report; the host's wharf-nvmf-perf on node b.
	local rc1=$rc procs=()
	case "$f" in
	tgt-kill\ *) rc1=137 ;;
	tgt-crash\ *) rc1=crashed ;;
	esac
	procs+=("tgt1|$res/$name.tgt1.log|$rc1")
	[ ! -f "$res/$name.tgt2.log" ] || procs+=("tgt2|$res/$name.tgt2.log|$rc")
	[ "$kind" != perf ] ||
		procs+=("perf|$WHARF_PAIR_SHARE/node-b/results/$name.host.log|$crc")
	leak_check "${procs[@]}"
	why+=$leak_why
	if [ "$kind" = perf ]; then
		nvmf_perf_row "$name" "$f" "$t0" "$rc" "${created:-0}" "$why" "$cv"
	else
		nvmf_kernel_row "$name" "$t0" "$rc" "${created:-0}" "$why" "$cv"
	fi
}

# Node a: the kernel host's checks on its word CV (nvmf_host_case), the
# case's row in faults.tsv and its verdict, printed.
nvmf_kernel_row() { # name t0 target_rc created why cv
	local name=$1 t0=$2 rc=$3 created=$4 why=$5
	local crc nrec outage recover state err wb rb hs
	read -r crc nrec outage recover state err wb rb hs <<<"$6"
	if [ "$crc" != 125 ]; then
		[ "$crc" = 0 ] || why+="fio exit $crc; "
		[ "$err" = 0 ] || why+="fio error $err; "
		[ "$wb" -gt 0 ] && [ "$wb" = "$rb" ] ||
			why+="verify read $rb of $wb bytes written; "
		[ "$nrec" -ge 1 ] || why+="the host never reconnected; "
		[ "$state" = live ] || why+="host controller $state at the end; "
		[ "$hs" = gone ] || why+="host controller left after disconnect; "
	fi
	local attempts
	attempts=$(grep -c 'reconnect attempt\|Successfully reconnected' \
		"$WHARF_PAIR_SHARE/node-b/results/$name.dmesg" 2>/dev/null)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" \
		"$((1 + ${attempts:-0}))" "$((1 + ${nrec:-0}))" "$crc" "$rc" \
		"$(secs_since "$t0")" "$(secs_since "$t0")" "${outage:--1}" \
		"reconnected ${nrec:-0}, fio wrote $((${wb:-0} / 1048576)) MiB, verified $((${rb:-0} / 1048576)) MiB" \
		"ctrls_created $created" "${recover:--1}" "$leak_txt" >>"$res/faults.tsv"
	printf '%s\t%s\n' "$name" "${why:-ok}" >>"$res/faults.verdicts"
	printf '%s' "${why:-ok}"
}

# Node a: wharf-nvmf-perf's checks on its word CV (nvmf_perf_case), the
# case's row and its verdict, printed.
nvmf_perf_row() { # name fault t0 target_rc created why cv
	local name=$1 f=$2 t0=$3 rc=$4 created=$5 why=$6
	local crc nrec outage recover failed ios err verr rechk losses retried
	local flow met
	read -r crc nrec outage recover failed ios err verr rechk losses \
		retried flow met <<<"$7"
	local want=$((nvmf_perf_queues * nvmf_perf_qd))
	if [ "$crc" != 125 ]; then
		case "$crc" in
		124 | 137) why+="wharf-nvmf-perf hung (killed at ${nvmf_perf_limit} s); " ;;
		0) ;;
		*) why+="wharf-nvmf-perf exit $crc; " ;;
		esac
		[ "${ios:-0}" -gt 0 ] || why+="no I/O completed; "
		[ "${flow:--1}" != -1 ] ||
			why+="no completion within 60 s: the fault met no I/O; "
		[ "${met:-0}" = 1 ] ||
			why+="the fault came after wharf-nvmf-perf's run; "
		[ "${err:--1}" = 0 ] || why+="$err command errors; "
		[ "${verr:--1}" = 0 ] || why+="$verr verify mismatches; "
		[ "${rechk:--1}" = "$want" ] ||
			why+="read back ${rechk:-?} of $want last acknowledged writes; "
		case "$f" in
		tgt-kill\ *) [ "${nrec:-0}" -ge 1 ] || why+="the host never reconnected; " ;;
		esac
		[ "${nrec:-0}" -ge "${losses:-0}" ] ||
			why+="$losses losses but $nrec reconnects; "
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" \
		"$((1 + ${nrec:-0} + ${failed:-0}))" "$((1 + ${nrec:-0}))" "$crc" "$rc" \
		"$(secs_since "$t0")" "$(secs_since "$t0")" "${outage:--1}" \
		"losses ${losses:-0}, reconnected ${nrec:-0}, ${ios:-0} I/Os, retried ${retried:-0}, rechecked ${rechk:-0}/$want, errors ${err:-?}, mismatches ${verr:-?}" \
		"ctrls_created $created" "${recover:--1}" "$leak_txt" >>"$res/faults.tsv"
	printf '%s\t%s\n' "$name" "${why:-ok}" >>"$res/faults.verdicts"
	printf '%s' "${why:-ok}"
}

# Node a: capsules= of the last stats line in LOG, into nvmf_caps (0:
# none yet).  Builtins only: the gate below reads it twice a second on a
# node busy with the target, where each process started (grep, sed) cost
# enough that the gate once saw the writes 11 s late, after fio's 8 MiB.
nvmf_capsules() { # log
	local l line=""
	while IFS= read -r l || [ -n "$l" ]; do
		case "$l" in *"wharf-nvmf-tgt: stats"*) line=$l ;; esac
	done <"$1"
	nvmf_caps=0
	case "$line" in *" capsules="*) line=${line#* capsules=} ;; *) return ;; esac
	nvmf_caps=${line%% *}
}

# Node a: once the host's fio started, waits (60 s at most) until the
# target took nvmf_before capsules (the writes are flowing: the fault must
# meet them), records how many in RES/NAME.before and says "writing".
nvmf_writing() { # name log
	local n=0 end
	"$rv" wait "$1.started" 120 >/dev/null || return 1
	end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		kill -USR1 "$tgt_pid" 2>/dev/null || break
		sleep 0.5
		nvmf_capsules "$2"
		n=$nvmf_caps
		[ "${n:-0}" -lt "$nvmf_before" ] || break
	done
	echo "${n:-0}" >"$res/$1.before"
	"$rv" post "$1.writing"
}

# Node a, the perf cases: node b's word that its completions flow (a
# progress line with completions), then "writing" at once.  (The capsule
# gate above polls the target from node a: on a loaded machine each
# process node a starts takes seconds, and it passed 20 s after
# wharf-nvmf-perf's writes began.)
nvmf_perf_flowing() { # name log
	"$rv" wait "$1.flowing" 180 >/dev/null || return 1
	"$rv" post "$1.writing"
}

# Node a: the target's side of case NAME, the host KIND on node b (kernel
# or perf); prints the verdict.
nvmf_target_case() { # name fault [kind]
	local name=$1 f=$2 kind=${3:-kernel} img=$res/$1.img log=$res/$1.tgt1.log t0
	# The namespace's file on node a's tmpfs, which survives the
	# target's kill: wharf-nvmf-perf writes without a rate limit, and
	# on the share its writes kept node a's 9p channel so busy that the
	# fault came 20 s late.
	# The kernel host's cases too, but for the crash of node a, whose
	# file must outlive it (the share): on the share the verify read
	# 16 MiB at 330 IOPS, a third of the case's time.
	case "$f" in tgt-crash\ *) ;; *) img=/tmp/$name.img ;; esac
	t0=$(now)
	rm -f "$img"
	truncate -s 64M "$img"
	# A target that did not start: the host does not run, the verdict
	# says both.
	if ! nvmf_tgt_up "$log" "$img" 2>/dev/null; then
		"$rv" post "$name.listening" fail
		nvmf_target_finish "$name" "$f" "$log" "$t0" "$kind"
		return
	fi
	"$rv" post "$name.listening" ok
	local gate=nvmf_writing
	[ "$kind" != perf ] || gate=nvmf_perf_flowing
	case "$f" in
	flap\ * | netem\ *) "$gate" "$name" "$log" ;;
	tgt-kill\ *)
		"$gate" "$name" "$log" && sleep 3
		"$rv" post "$name.fault"
		"$fault" kill "$tgt_pid"
		wait "$tgt_pid" 2>/dev/null
		sleep "${f#tgt-kill }"
		log=$res/$name.tgt2.log
		nvmf_tgt_up "$log" "$img" 2>/dev/null
		"$rv" post "$name.restarted"
		;;
	tgt-crash\ *)
		nvmf_writing "$name" "$log" && sleep 3
		echo "$name" >"$res/faults.crashed"
		sync
		"$rv" post "$name.fault"
		"$fault" crash "${f#tgt-crash }"
		;;
	esac
	nvmf_target_finish "$name" "$f" "$log" "$t0" "$kind"
	[ "$kind" != perf ] || rm -f "$img"
}

# Node a, booted again after crashing in case NAME: the target again on
# the same file, then the rest of the case.  Prints the verdict.
nvmf_target_resume() { # name fault
	local name=$1 log=$res/$1.tgt2.log
	nvmf_tgt_up "$log" "$res/$name.img" 2>/dev/null
	"$rv" post "$name.restarted"
	nvmf_target_finish "$name" "$2" "$log" "$(now)"
}

# Node b: the controller (nvmeN) connected to the case's NQN, or nothing.
nvmf_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$nvmf_nqn" ] || continue
		basename "$c"
		return 0
	done
	return 1
}

# Node b: the host's side of case NAME with FAULT.
nvmf_host_case() { # name fault
	local name=$1 f=$2 log=$res/$1.host.log ctrl="" dev="" i
	: >"$log"
	if [ "$("$rv" wait "$name.listening" 60)" != ok ]; then
		"$rv" post "$name.client" 125
		return
	fi
	modprobe -a nvme_rdma nvme_fabrics
	# A controller an earlier case could not delete would take this
	# case's connect ("already connected"): delete it first, and say so.
	if nvmf_ctrl >/dev/null; then
		echo "faults: $name: a controller left from before" >>"$log"
		timeout 120 nvme disconnect -n "$nvmf_nqn" >>"$log" 2>&1
	fi
	local base
	base=$(dmesg | wc -l)
	timeout 60 nvme connect -t rdma -a "$WHARF_PEER_ADDR" -s "$nvmf_port" \
		-n "$nvmf_nqn" --reconnect-delay=1 \
		--ctrl-loss-tmo="$nvmf_ctrl_loss" >>"$log" 2>&1
	for i in $(seq 100); do
		ctrl=$(nvmf_ctrl) && dev=$(nvmf_dev_of "$nvmf_nqn") &&
			[ -b "$dev" ] && break
		dev=""
		sleep 0.1
	done
	if [ -z "$dev" ]; then
		echo "faults: no block device for $nvmf_nqn" >>"$log"
		"$rv" post "$name.client" 125
		return
	fi
	# The fault's start on this node's clock (the kernel's, dmesg's):
	# node a's word that it kills or crashes, seen within 0.2 s.
	rm -f "$res/$name.fault_t"
	case "$f" in
	tgt-*)
		("$rv" wait "$name.fault" 300 >/dev/null &&
			now >"$res/$name.fault_t") &
		;;
	esac
	timeout -k 5 "$nvmf_fio_limit" fio --name="$name" --filename="$dev" \
		--ioengine=libaio --direct=1 --bs=4k --iodepth=16 \
		--rw=randwrite --size="$nvmf_size" --rate=",$nvmf_rate" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		--output-format=json --output="$res/$name.fio.json" >>"$log" 2>&1 &
	local fpid=$!
	"$rv" post "$name.started"
	case "$f" in
	flap\ *)
		# Node a says when its target has taken writes.
		"$rv" wait "$name.writing" 200 >/dev/null
		sleep 2
		now >"$res/$name.fault_t"
		"$fault" link-down "${f#flap }"
		;;
	esac
	wait "$fpid"
	local rc=$?
	local state
	state=$(cat "/sys/class/nvme/$ctrl/state" 2>/dev/null || echo gone)
	timeout 60 nvme disconnect -n "$nvmf_nqn" >>"$log" 2>&1
	local hs=gone
	for i in $(seq 100); do
		[ -e "/sys/class/nvme/$ctrl" ] || break
		sleep 0.1
	done
	[ ! -e "/sys/class/nvme/$ctrl" ] || hs=left
	wait
	dmesg | tail -n +"$((base + 1))" >"$res/$name.dmesg"
	local nrec err wb rb
	nrec=$(grep -c 'Successfully reconnected' "$res/$name.dmesg")
	read -r err wb rb <<<"$(python3 -c '
import json, sys
try:
    j = json.load(open(sys.argv[1]))["jobs"][0]
    print(j["error"], j["write"]["io_bytes"], j["read"]["io_bytes"])
except Exception:
    print(-1, 0, 0)' "$res/$name.fio.json")"
	# From the kernel's log: outage, its first "starting error recovery"
	# until its last "Successfully reconnected"; recover, the fault's
	# start until then.
	local outage recover
	read -r outage recover <<<"$(awk -v f="$(cat "$res/$name.fault_t" \
		2>/dev/null || echo -1)" '
		{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
		/starting error recovery/ && d == "" { d = t }
		/Successfully reconnected/ { l = t }
		END {
			if (l == "" || d == "") { print -1, -1; exit }
			printf "%.1f %.1f\n", l - d, (f < 0 ? -1 : l - f)
		}' "$res/$name.dmesg")"
	echo "faults: $name: fio exit $rc, reconnected $nrec, outage $outage s," \
		"recover $recover s, state $state" >>"$log"
	"$rv" post "$name.client" \
		"$rc $nrec $outage $recover $state $err $wb $rb $hs"
}

# The number after "KEY": in the JSON object of FILE (wharf-nvmf-perf
# --json), or nothing.
nvmf_json_num() { # file key
	sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1" 2>/dev/null | head -n 1
}

# Node b: each line of stdin stamped with $EPOCHREALTIME (a builtin: no
# process per line, so a busy one-vCPU node stamps a line when it comes;
# faults.sh's stamp runs awk for each and fell seconds behind).
nvmf_stamp() {
	local l
	while IFS= read -r l; do
		printf '%s %s\n' "$EPOCHREALTIME" "$l"
	done
}

# Node b: the progress lines with completions in perf's stamped LOG after
# its last state change (1 s after it), once a loss came after SINCE; 0
# before.  SINCE is 2 s before the fault's start as node b learns it (not
# before its word "flowing"): node a kills right after its word, and node
# b's watcher (a poll on the share) wrote its stamp half a second after
# perf's own loss, so that loss never counted and perf ran its whole time.
nvmf_perf_back() { # log since
	awk -v f="$2" '
		/nvmf host: .* -> [a-z_]+ on / {
			if (/ live -> resetting / && $1 >= f) lost = 1
			lt = $1; n = 0; next
		}
		/ IOPS / {
			for (i = 2; i < NF; i++) if ($(i + 1) == "IOPS") v = $i
			if (lost && $1 >= lt + 1 && v > 0) n++
		}
		END { print (lost ? n : 0) }' "$1"
}

# Node b: wharf-nvmf-perf's side of case NAME with FAULT (stderr stamped
# in RES/NAME.host.log, the JSON result in RES/NAME.perf.json).  Tells
# node a "flowing" (the seconds from perf's start to its first progress
# line with completions, -1 if none within 60 s), then the fault meets
# them: node a kills 3 s after that word; node b's own link goes down 2 s
# after it.
nvmf_perf_case() { # name fault
	local name=$1 f=$2 log=$res/$1.host.log out=$res/$1.perf.json
	local rcf=$res/$1.perf.rc
	: >"$log"
	rm -f "$out" "$rcf" "$res/$name.fault_t"
	if [ "$("$rv" wait "$name.listening" 60)" != ok ]; then
		"$rv" post "$name.client" 125
		return
	fi
	# The fault's start on this node's clock: node a's word that it
	# kills, seen within 0.2 s; the link going down here.  netem has no
	# start (it is on for the whole run): no recover time.
	local wp=""
	case "$f" in
	tgt-*)
		("$rv" wait "$name.fault" 300 >/dev/null &&
			echo "$EPOCHREALTIME" >"$res/$name.fault_t") &
		wp=$!
		;;
	esac
	local p0=$EPOCHREALTIME ptime=$nvmf_perf_fault_time
	[ "${f%% *}" != netem ] || ptime=$nvmf_perf_time
	{
		timeout -k 5 "$nvmf_perf_limit" "$nvmf_perf_bin" \
			--traddr "$WHARF_PEER_ADDR" --trsvcid "$nvmf_port" \
			--subnqn "$nvmf_nqn" --queues "$nvmf_perf_queues" \
			--qd "$nvmf_perf_qd" --io-size 4k --pattern randwrite \
			--verify --time "$ptime" \
			--reconnect-delay "$nvmf_perf_delay" \
			--ctrl-loss-tmo "$nvmf_perf_loss" --json >"$out"
		echo $? >"$rcf"
	} 2>&1 | nvmf_stamp >"$log" &
	local ppid=$!
	"$rv" post "$name.started"
	local flow=-1 end=$((SECONDS + 60)) l
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$ppid" 2>/dev/null; do
		l=$(grep -m 1 -E ' [1-9][0-9]* IOPS ' "$log") && {
			flow=$(awk -v a="$p0" -v b="${l%% *}" \
				'BEGIN { printf "%.1f", b - a }')
			break
		}
		sleep 0.2
	done
	local flow_t=$EPOCHREALTIME
	"$rv" post "$name.flowing" "$flow"
	case "$f" in
	flap\ *)
		sleep 2
		echo "$EPOCHREALTIME" >"$res/$name.fault_t"
		"$fault" link-down "${f#flap }"
		;;
	esac
	if [ "${f%% *}" != netem ]; then
		local since=""
		while kill -0 "$ppid" 2>/dev/null; do
			[ -n "$since" ] || [ ! -f "$res/$name.fault_t" ] ||
				since=$(awk -v f="$(cat "$res/$name.fault_t")" \
					-v a="$flow_t" \
					'BEGIN { printf "%.6f", (f - 2 > a ? f - 2 : a) }')
			if [ -n "$since" ] &&
				[ "$(nvmf_perf_back "$log" "$since")" -ge \
					"$nvmf_perf_after" ]; then
				pkill -INT -x wharf-nvmf-perf
				break
			fi
			sleep 0.5
		done
	fi
	wait "$ppid"
	# Did the fault meet the run: its start seen while perf ran (netem:
	# on throughout).  No fault word after perf ended: it never comes.
	local met=1
	[ "${f%% *}" = netem ] || [ -f "$res/$name.fault_t" ] || met=0
	[ -z "$wp" ] || kill "$wp" 2>/dev/null
	wait
	local rc
	rc=$(cat "$rcf" 2>/dev/null || echo 125)
	local ios err verr rechk nrec retried losses failed
	ios=$(nvmf_json_num "$out" ios)
	err=$(nvmf_json_num "$out" errors)
	verr=$(nvmf_json_num "$out" verify_errors)
	rechk=$(nvmf_json_num "$out" rechecked)
	nrec=$(nvmf_json_num "$out" reconnects)
	retried=$(nvmf_json_num "$out" retried)
	losses=$(grep -c 'nvmf host: .* live -> resetting' "$log")
	failed=$(grep -c 'nvmf host: .* connecting -> resetting' "$log")
	# Outage: the first loss until the first progress line (IOPS over
	# the second before it) that starts after the last state change
	# logged; recover: the fault's start until then.
	local outage recover
	read -r outage recover <<<"$(awk -v f="$(cat "$res/$name.fault_t" \
		2>/dev/null || echo -1)" '
		/nvmf host: .* -> [a-z_]+ on / {
			if (d == "" && / live -> resetting /) d = $1
			lt = $1; next
		}
		/ IOPS / {
			for (i = 2; i < NF; i++) if ($(i + 1) == "IOPS") v = $i
			n++; t[n] = $1; io[n] = v
		}
		END {
			if (d == "") { print -1, -1; exit }
			for (i = 1; i <= n; i++)
				if (t[i] >= lt + 1 && io[i] > 0) { r = t[i]; break }
			if (r == "") { print -1, -1; exit }
			printf "%.1f %.1f\n", r - d, (f < 0 ? -1 : r - f)
		}' "$log")"
	echo "faults: $name: wharf-nvmf-perf exit $rc, losses $losses," \
		"reconnected ${nrec:-?}, outage $outage s, recover $recover s" \
		>>"$log"
	"$rv" post "$name.client" "$rc ${nrec:-0} $outage $recover $failed \
${ios:-0} ${err:--1} ${verr:--1} ${rechk:--1} $losses ${retried:-0} $flow $met"
}
