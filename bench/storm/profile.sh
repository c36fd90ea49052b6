#!/usr/bin/env bash
# bench/storm/profile.sh - where a connection's CPU goes, on both sides of
# a two-node storm: the storm server on node a and its client processes
# on node b (through `storm relay`), each node under a system-wide
# cpu-clock profile (perf record -a -g) for the whole wharf variant.
# Writes to OUTDIR on each node (node-a: the server, node-b: the
# clients): storm's own output (storm.txt, node a), the share of CPU
# samples by command and object (comm.txt), by command and symbol
# (sym.txt, self; children.txt, with what it calls: the syscalls' and
# the library's entry points), and the samples per connection
# (samples.txt).  With the
# CPU per connection storm prints, a symbol's share is its cost per
# connection.
#
# Run it on two soft-RoCE guests (perf from the host's linux-perf):
#   bazel build -c opt //bench/storm:storm
#   ./wharf vm --nodes 2 --share "$PWD/out/share" \
#       --node-a 'bench/storm/profile.sh -o /run/wharf/node-a' \
#       --node-b 'bench/storm/profile.sh -o /run/wharf/node-b'
# Options: -c CONNS (default 1000), -o OUTDIR (default out/profile),
#          -x 'STORM OPTIONS' (added to the server's storm command),
#          -f HZ (samples per second and CPU, default 1000)
set -uo pipefail
conns=1000
out=out/profile
extra=""
hz=1000
while getopts "c:o:x:f:h" o; do
	case $o in
	c) conns=$OPTARG ;;
	o) out=$OPTARG ;;
	x) extra=$OPTARG ;;
	f) hz=$OPTARG ;;
	h)
		sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
command -v perf >/dev/null || {
	echo "storm profile: no perf (Debian: linux-perf)" >&2
	exit 2
}
top=$(cd "$(dirname "$0")/../.." && pwd)
storm=$top/bazel-out/k8-opt/bin/bench/storm/storm
[ -x "$storm" ] || storm=$top/bazel-bin/bench/storm/storm
rdv=$top/tools/vm/rendezvous.sh
port=7600
mkdir -p "$out"
# perf's data stays in the guest's tmpfs: the 9p share would profile
# perf's own writes.
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
report() {
	perf report -i "$data/p.data" --stdio --no-children --sort comm,dso \
		-g none --percent-limit 0.5 2>/dev/null | grep "%" >"$out/comm.txt"
	perf report -i "$data/p.data" --stdio --no-children --sort comm,sym \
		-g none --percent-limit 0.3 2>/dev/null | grep "%" | head -80 >"$out/sym.txt"
	# Inclusive: a syscall's share with everything under it.
	perf report -i "$data/p.data" --stdio --children --sort comm,sym \
		-g none --percent-limit 0.5 2>/dev/null | grep "%" | head -120 >"$out/children.txt"
	n=$(perf report -i "$data/p.data" --stdio -g none 2>/dev/null |
		awk '/^# Samples:/ { print $3; exit }')
	echo "samples $n conns $conns" >"$out/samples.txt"
}
case "${WHARF_NODE:-}" in
b)
	perf record -a -g -F "$hz" -e cpu-clock -o "$data/p.data" -- \
		"$storm" relay "$port" 900 >"$data/relay.log" 2>&1 &
	pp=$!
	for _ in $(seq 100); do
		grep -q listening "$data/relay.log" 2>/dev/null && break
		sleep 0.1
	done
	"$rdv" post relay
	wait "$pp"
	report
	echo "storm profile: node b: $(cat "$out/samples.txt")"
	;;
a)
	"$rdv" wait relay 120 >/dev/null || exit 1
	# shellcheck disable=SC2086
	perf record -a -g -F "$hz" -e cpu-clock -o "$data/p.data" -- \
		"$storm" --clients-at "198.18.0.2:$port" --variants wharf \
		--conns "$conns" $extra >"$out/storm.txt" 2>&1
	rc=$?
	report
	grep -E "create->established|CPU|storm:" "$out/storm.txt"
	echo "storm profile: node a: $(cat "$out/samples.txt")"
	exit $rc
	;;
*)
	echo "storm profile: run on two nodes (WHARF_NODE a or b)" >&2
	exit 2
	;;
esac
