#!/usr/bin/env bash
# tools/vm/exec_cost.sh - what starting a process costs in the guest: the
# mean wall time of N execs of /bin/true, `bash -c :` and `python3 -c 1`
# (binaries and libraries read through the guest's root mount), and that
# mount's options.  Under TCG these costs add up over a suite that starts
# thousands of processes (docs/testing.md, "Where the time goes").
#
#   tools/vm/run.sh -- tools/vm/exec_cost.sh [N]     (default N = 100)
set -euo pipefail
case "${1:-}" in
-h | --help)
	sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
esac
n=${1:-100}
ms() { # t0 t1 count
	awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f", (b - a) / n * 1000 }'
}
t0=$EPOCHREALTIME
for _ in $(seq "$n"); do /bin/true; done
t1=$EPOCHREALTIME
for _ in $(seq "$n"); do bash -c :; done
t2=$EPOCHREALTIME
m=$(((n + 9) / 10))
for _ in $(seq "$m"); do python3 -c 1; done
t3=$EPOCHREALTIME
echo "exec /bin/true: $(ms "$t0" "$t1" "$n") ms each ($n)"
echo "exec bash -c :: $(ms "$t1" "$t2" "$n") ms each ($n)"
echo "exec python3 -c 1: $(ms "$t2" "$t3" "$m") ms each ($m)"
echo "root mount: $(awk '$2 == "/" && $3 == "9p" { print $4 }' /proc/mounts)"
