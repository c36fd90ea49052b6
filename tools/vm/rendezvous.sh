#!/usr/bin/env bash
# Lets the two nodes of `run.sh --nodes 2` meet: each step is a file in the
# folder both guests share ($WHARF_PAIR_SHARE/sync), written by one node
# and waited for by the other, with a deadline.
#
#   rendezvous.sh post NAME [VALUE]     this node says NAME (with VALUE)
#   rendezvous.sh wait NAME [SECONDS]   waits (default 120 s) until the
#                                       other node said NAME; prints VALUE;
#                                       exit 1 on timeout
#   rendezvous.sh meet NAME [SECONDS]   post NAME, then wait for it
#
# A name is posted once per run (run.sh empties the folder at boot).
set -euo pipefail

usage() {
	sed -n '2,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}
case "${1:-}" in
-h | --help)
	usage
	exit 0
	;;
post | wait | meet) ;;
*)
	usage >&2
	exit 2
	;;
esac
[ $# -ge 2 ] || {
	usage >&2
	exit 2
}
op=$1 name=$2
node=${WHARF_NODE:?not a node of run.sh --nodes 2}
dir=${WHARF_PAIR_SHARE:?not a node of run.sh --nodes 2}/sync
peer=b
[ "$node" = a ] || peer=a
mkdir -p "$dir"

post() {
	# Written aside, then renamed: the peer never reads half a value.
	printf '%s\n' "${1:-}" >"$dir/.$name.$node"
	mv "$dir/.$name.$node" "$dir/$name.$node"
}

wait_peer() {
	local limit=$1 t0=$SECONDS
	while [ ! -f "$dir/$name.$peer" ]; do
		if [ $((SECONDS - t0)) -ge "$limit" ]; then
			echo "rendezvous: node $peer did not post '$name'" \
				"within ${limit}s" >&2
			return 1
		fi
		sleep 0.2
	done
	cat "$dir/$name.$peer"
}

case "$op" in
post) post "${3:-}" ;;
wait) wait_peer "${3:-120}" ;;
meet)
	post ""
	wait_peer "${3:-120}" >/dev/null
	;;
esac
