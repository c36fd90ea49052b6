#!/usr/bin/env bash
# man_test.sh MAN3_TAR WHARF_7 LIBWHARF_SO
# Fails when an exported function has no section-3 page, or when man -l
# prints a warning (groff -ww) for any page.
set -euo pipefail
tar=$1 page7=$2 so=$3
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/man.XXXXXX")
tar -xf "$tar" -C "$dir"
fail=0
n=0
for fn in $(nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }'); do
	n=$((n + 1))
	if [ ! -f "$dir/man3/$fn.3" ]; then
		echo "no man page for $fn (document it in its header)"
		fail=1
	fi
done
pages=0
for p in "$dir"/man3/*.3 "$page7"; do
	pages=$((pages + 1))
	# One rendering a page (each costs a groff pipeline): the text
	# for its NAME section, the warnings on the side.
	text=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$p" 2>"$dir/warn") ||
		{ echo "man -l $p failed: $(cat "$dir/warn")"; fail=1; continue; }
	if [ -s "$dir/warn" ]; then
		echo "man -l $(basename "$p") warns:"
		cat "$dir/warn"
		fail=1
	fi
	grep -q '^NAME' <<<"$text" ||
		{ echo "$(basename "$p"): no NAME section rendered"; fail=1; }
done
echo "$n exported functions, $pages pages rendered"
exit "$fail"
