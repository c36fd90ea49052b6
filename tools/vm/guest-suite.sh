#!/usr/bin/env bash
# Runs inside the guest: every test binary given, one after another, each
# with a hard timeout, its gtest XML and log written to the shared folder
# ($WHARF_GUEST_SHARE/results) for the host to count.  Prints one line per
# binary, and the log of each binary that failed.
#
#   guest-suite.sh [--repeat N] BINARY...
# --repeat N: the whole list N times in this boot (round K's files are
# NAME@K.xml, .log, .rc, .secs; without it NAME.xml ...), for
# ./wharf test --repeat, which counts each case's passes over the rounds.
# Environment: WHARF_GUEST_TEST_TIMEOUT (seconds per binary, default 900:
# nvmf_kernel_host_test runs 20 kernel-host connect cycles and fio, 83-450 s
# in a loaded 2-vCPU TCG guest; the limit is a hang guard, not a budget).
set -u
out=${WHARF_GUEST_SHARE:?run me through tools/vm/run.sh}/results
mkdir -p "$out"
limit=${WHARF_GUEST_TEST_TIMEOUT:-900}
rounds=1
if [ "${1:-}" = --repeat ]; then
	rounds=${2:?--repeat needs a count}
	shift 2
fi
status=0
for round in $(seq "$rounds"); do
	sfx=""
	[ "$rounds" = 1 ] || {
		sfx="@$round"
		echo "guest: round $round of $rounds"
	}
	for bin in "$@"; do
		name=$(basename "$bin")$sfx
		start=$SECONDS
		timeout -k 5 "$limit" "$bin" \
			--gtest_output="xml:$out/$name.xml" \
			--gtest_color=no >"$out/$name.log" 2>&1
		rc=$?
		echo "$rc" >"$out/$name.rc"
		secs=$((SECONDS - start))
		echo "$secs" >"$out/$name.secs"
		if [ "$rc" -eq 0 ]; then
			echo "guest: PASS $name (${secs}s)"
		else
			[ "$rc" -eq 124 ] &&
				echo "guest: $name killed after ${limit}s"
			echo "guest: FAIL $name (exit $rc, ${secs}s); its log:"
			sed 's/^/    /' "$out/$name.log" | tail -n 80
			status=1
		fi
	done
done
exit "$status"
