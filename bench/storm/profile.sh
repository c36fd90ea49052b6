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
# (samples.txt), user space alone by symbol (user.txt), and the CPU per connection of the kernel paths a
# connection takes, from all threads of the node (paths.txt: each
# path's inclusive share, and that share of the node's samples as
# microseconds per connection; the paths overlap where one calls
# another, e.g. softirq work inside a syscall).
#
# Run it on two soft-RoCE guests (perf from the host's linux-perf):
#   bazel build -c opt //bench/storm:storm
#   ./wharf vm --nodes 2 --share "$PWD/out/share" \
#       --node-a 'bench/storm/profile.sh -o /run/wharf/node-a' \
#       --node-b 'bench/storm/profile.sh -o /run/wharf/node-b'
# Options: -c CONNS (default 1000), -o OUTDIR (default out/profile),
#          -v VARIANTS (default wharf; cmtime profiles the stock cmtime's
#             server on node a and its client on node b the same way),
#          -x 'STORM OPTIONS' (added to the server's storm command),
#          -f HZ (samples per second and CPU, default 1000)
set -uo pipefail
conns=1000
out=out/profile
extra=""
hz=1000
variants=wharf
while getopts "c:o:v:x:f:h" o; do
	case $o in
	c) conns=$OPTARG ;;
	o) out=$OPTARG ;;
	v) variants=$OPTARG ;;
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
	# User space alone, by object and symbol (self).
	perf report -i "$data/p.data" --stdio --no-children --sort comm,dso,sym \
		-g none --percent-limit 0.03 2>/dev/null | grep "%" |
		grep -v "\[k\]" | head -80 >"$out/user.txt"
	# Inclusive: a syscall's share with everything under it.
	perf report -i "$data/p.data" --stdio --children --sort comm,sym \
		-g none --percent-limit 0.5 2>/dev/null | grep "%" | head -120 >"$out/children.txt"
	# Exact: perf's header rounds to thousands.
	n=$(perf script -i "$data/p.data" -F comm 2>/dev/null | wc -l)
	echo "samples $n conns $conns" >"$out/samples.txt"
	perf report -i "$data/p.data" --stdio --children --sort sym -g none \
		--percent-limit 0 2>/dev/null | grep "%" >"$data/all.txt"
	{
		printf '%-44s %8s %12s\n' "path (inclusive, every thread)" share "us/conn"
		for s in native_safe_halt ucma_write ib_uverbs_modify_qp \
			ib_uverbs_handler_UVERBS_METHOD_QP_CREATE \
			ib_uverbs_handler_UVERBS_METHOD_QP_DESTROY \
			ib_uverbs_destroy_qp ksys_mmap_pgoff __x64_sys_munmap \
			cm_work_handler handle_softirqs rxe_do_task \
			ib_uverbs_event_read ucma_get_event do_epoll_wait; do
			awk -v s="$s" -v n="$n" -v hz="$hz" -v c="$conns" '
				$NF == s { p = $1; sub("%", "", p)
					printf "%-44s %7.2f%% %12.1f\n", s, p,
						p / 100 * n * 1e6 / hz / c; f = 1; exit }
				END { if (!f) printf "%-44s %8s %12s\n", s, "-", "-" }' \
				"$data/all.txt"
		done
	} >"$out/paths.txt"
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
		"$storm" --clients-at "198.18.0.2:$port" --variants "$variants" \
		--conns "$conns" $extra >"$out/storm.txt" 2>&1
	rc=$?
	report
	grep -E "create->established|CPU|storm:" "$out/storm.txt"
	cat "$out/paths.txt"
	echo "storm profile: node a: $(cat "$out/samples.txt")"
	exit $rc
	;;
*)
	echo "storm profile: run on two nodes (WHARF_NODE a or b)" >&2
	exit 2
	;;
esac
