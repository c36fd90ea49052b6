#!/usr/bin/env bash
# Faults on a node of `run.sh --nodes 2`, for tests and benchmarks.  Acts
# on this guest's NIC (the wire to the other node, $WHARF_NIC); refuses to
# run outside a guest, so the host's network is never touched.
#
#   fault.sh netem OPTS...   netem on the NIC's egress, replacing any
#                            before: loss 5% | delay 20ms 10ms |
#                            reorder 25% delay 5ms | duplicate 2% |
#                            corrupt 1% (tc-netem(8)); apply it on both
#                            nodes to hit both directions
#   fault.sh clear           removes the netem qdisc (no-op without one)
#   fault.sh link-down SECS  link down (carrier lost to rxe), SECS later up
#   fault.sh cut SECS        every packet dropped for SECS (netem loss
#                            100%: the cable cut, the link stays up), then
#                            clear
#   fault.sh kill PID...     kill -9, and reaps nothing: the caller waits
#   fault.sh crash SECS      this node crashes: run.sh kills its qemu at
#                            once (no shutdown, nothing flushed, no DREQ
#                            sent) and boots it again SECS later; the
#                            node's command starts anew with WHARF_BOOT
#                            one higher.  Does not return (exit 1 if the
#                            host has not acted within 60 s)
#   fault.sh show            the NIC's qdisc and link state
#
# Options (first): --dev NIC (default $WHARF_NIC).  Waits are bounded by
# their SECS; every command returns when its fault is in place (link-down
# and cut: when it is over).
set -euo pipefail

usage() {
	sed -n '2,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}
dev=${WHARF_NIC:-}
if [ "${1:-}" = --dev ]; then
	[ $# -ge 2 ] || {
		usage >&2
		exit 2
	}
	dev=$2
	shift 2
fi
case "${1:-}" in
-h | --help)
	usage
	exit 0
	;;
netem | clear | link-down | cut | kill | crash | show) ;;
*)
	usage >&2
	exit 2
	;;
esac
# PID 1 of wharf's guest is guest-init.sh; on the host it never is.
[ "${WHARF_GUEST:-}" = 1 ] && grep -q guest-init /proc/1/cmdline || {
	echo "fault.sh: only inside the guest (run.sh --nodes 2)" >&2
	exit 2
}
[ -n "$dev" ] || {
	echo "fault.sh: no NIC (WHARF_NIC or --dev)" >&2
	exit 2
}
op=$1
shift

secs() {
	case "${1:-}" in
	'' | *[!0-9.]*)
		echo "fault.sh: $op takes seconds" >&2
		exit 2
		;;
	esac
}

clear_qdisc() {
	tc qdisc del dev "$dev" root 2>/dev/null || true
}

case "$op" in
netem)
	[ $# -gt 0 ] || {
		usage >&2
		exit 2
	}
	modprobe sch_netem 2>/dev/null || true
	tc qdisc replace dev "$dev" root netem "$@"
	;;
clear) clear_qdisc ;;
link-down)
	secs "${1:-}"
	ip link set "$dev" down
	sleep "$1"
	ip link set "$dev" up
	;;
cut)
	secs "${1:-}"
	modprobe sch_netem 2>/dev/null || true
	tc qdisc replace dev "$dev" root netem loss 100%
	sleep "$1"
	clear_qdisc
	;;
kill)
	[ $# -gt 0 ] || {
		usage >&2
		exit 2
	}
	kill -KILL "$@"
	;;
crash)
	secs "${1:-}"
	own=${WHARF_GUEST_SHARE:?}
	printf '%s\n' "${1%%.*}" >"$own/.crash"
	mv "$own/.crash" "$own/crash"
	sleep 60
	echo "fault.sh: crash: the host did not kill this node" >&2
	exit 1
	;;
show)
	tc qdisc show dev "$dev"
	ip -br link show dev "$dev"
	;;
esac
