#!/usr/bin/env bash
# bench/storm/pairs.sh - wharf against the stock cmtime in PAIRS storms
# run back to back in one boot.  Each pair is one storm with both variants,
# the order alternating (wharf first in odd pairs, cmtime first in even
# ones); the table has each pair's rates (create->established
# connections/s) and their ratio, then the median ratio.  A 1,000-connection
# storm lasts about a second and cmtime's own rate moves by a third from one
# run to the next, so a ratio says something only as the median of pairs
# run back to back.  Each storm's JSON goes to OUTDIR/pairN.json.
#
# One node (server and clients on their own CPUs, as `storm` splits them):
#   bazel build -c opt //bench/storm:storm
#   ./wharf vm --share "$PWD/out/share" -- bench/storm/pairs.sh -n 6 \
#       -o /run/wharf/pairs -j /run/wharf/pairs.json
# Two nodes (the server on node a, the clients on node b, one
# `storm relay` per pair):
#   ./wharf vm --nodes 2 --share "$PWD/out/share" \
#       --node-a 'bench/storm/pairs.sh -n 4 -c 10000 -x "--timeout 600" -o /run/wharf/pairs' \
#       --node-b 'bench/storm/pairs.sh -n 4'
# Options: -n PAIRS (default 5), -c CONNS (default 1000),
#          -x 'STORM OPTIONS' (added to every storm, e.g. '--window 256'),
#          -o OUTDIR (default out/pairs), -j FILE (JSON: every pair and the
#          median), -h (this text)
# Progress on stderr; the table and the summary line on stdout.
set -uo pipefail
pairs=5
conns=1000
extra=""
out=out/pairs
json=""
while getopts "n:c:x:o:j:h" o; do
	case $o in
	n) pairs=$OPTARG ;;
	c) conns=$OPTARG ;;
	x) extra=$OPTARG ;;
	o) out=$OPTARG ;;
	j) json=$OPTARG ;;
	h)
		sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) exit 2 ;;
	esac
done
case $pairs in
'' | *[!0-9]* | 0)
	echo "storm pairs: -n wants a count of at least 1" >&2
	exit 2
	;;
esac
top=$(cd "$(dirname "$0")/../.." && pwd)
storm=$top/bazel-out/k8-opt/bin/bench/storm/storm
[ -x "$storm" ] || storm=$top/bazel-bin/bench/storm/storm
[ -x "$storm" ] || {
	echo "storm pairs: build //bench/storm:storm first" >&2
	exit 2
}
rdv=$top/tools/vm/rendezvous.sh
port0=7600
log() { echo "storm pairs: $*" >&2; }

# Node b: one relay per pair (a relay serves one storm), then wait.
if [ "${WHARF_NODE:-}" = b ]; then
	logs=$(mktemp -d)
	trap 'rm -rf "$logs"' EXIT
	pids=()
	for i in $(seq 0 $((pairs - 1))); do
		"$storm" relay $((port0 + i)) 3600 >"$logs/relay$i.log" 2>&1 &
		pids+=($!)
	done
	for _ in $(seq 200); do
		n=$(grep -l listening "$logs"/relay*.log 2>/dev/null | wc -l)
		[ "$n" -eq "$pairs" ] && break
		sleep 0.1
	done
	"$rdv" post relay
	rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	exit $rc
fi

mkdir -p "$out"
if [ "${WHARF_NODE:-}" = a ]; then
	"$rdv" wait relay 120 >/dev/null || {
		log "node b's relays did not come up"
		exit 1
	}
fi
median() { sort -g | awk '{ v[NR] = $1 } END {
	if (!NR) { print 0; exit }
	print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-5s %-14s %10s %10s %8s\n' pair order "wharf c/s" "cmtime c/s" ratio
ratios="" rows="" rc=0
for i in $(seq 1 "$pairs"); do
	if [ $((i % 2)) -eq 1 ]; then order=wharf,cmtime; else order=cmtime,wharf; fi
	at=()
	[ "${WHARF_NODE:-}" = a ] && at=(--clients-at "198.18.0.2:$((port0 + i - 1))")
	log "pair $i of $pairs: $order, $conns connections"
	# shellcheck disable=SC2086
	"$storm" "${at[@]}" --conns "$conns" --variants "$order" $extra \
		--json "$out/pair$i.json" >"$out/pair$i.txt" 2>&1 || rc=1
	line=$(grep -E '^storm: wharf .* conn/s' "$out/pair$i.txt" | tail -n 1)
	w=$(sed -nE 's/^storm: wharf [^)]*\) ([0-9.]+) conn\/s.*/\1/p' <<<"$line")
	c=$(sed -nE 's/.*; cmtime ([0-9.]+) conn\/s.*/\1/p' <<<"$line")
	if [ -z "$w" ] || [ -z "$c" ] || [ "$c" = 0 ]; then
		log "pair $i: no rate for both tools (see $out/pair$i.txt)"
		rc=1
		continue
	fi
	r=$(awk -v a="$w" -v b="$c" 'BEGIN { printf "%.2f", a / b }')
	printf '%-5s %-14s %10s %10s %7sx\n' "$i" "$order" "$w" "$c" "$r"
	ratios+="$r"$'\n'
	rows+="${rows:+, }{\"pair\": $i, \"order\": \"$order\", \"wharf_conn_per_s\": $w, \"cmtime_conn_per_s\": $c, \"ratio\": $r}"
done
n=$(grep -c . <<<"$ratios")
m=$(printf '%s' "$ratios" | median)
lo=$(printf '%s' "$ratios" | sort -g | head -n 1)
hi=$(printf '%s' "$ratios" | sort -g | tail -n 1)
echo "summary: $conns connections, $n pairs: wharf/cmtime median ${m}x (lowest ${lo:-0}x, highest ${hi:-0}x)"
if [ -n "$json" ]; then
	printf '{"conns": %s, "nodes": %s, "storm_options": "%s", "pairs": [%s], "median_ratio": %s}\n' \
		"$conns" "$([ "${WHARF_NODE:-}" = a ] && echo 2 || echo 1)" \
		"$extra" "$rows" "$m" >"$json"
	log "JSON: $json"
fi
exit $rc
