#!/usr/bin/env bash
# Installs libwharf from its distribution tarball (//:dist), or removes
# exactly what an install put there.
#
#   install.sh install DIST_TAR [--prefix DIR] [--destdir DIR]
#   install.sh uninstall [--prefix DIR] [--destdir DIR]
#
# The prefix (default /usr/local) is where the files are used from: it is
# written into lib/pkgconfig/wharf.pc.  The destdir, for packagers, is
# prepended to every path written.  Every file, link and directory created
# is listed in PREFIX/share/wharf/install-manifest.txt, which uninstall
# reads.
set -euo pipefail

die() {
	echo "install: $*" >&2
	exit 1
}

cmd=${1:-}
shift || true
dist=""
if [ "$cmd" = install ]; then
	dist=${1:?install.sh install DIST_TAR [--prefix DIR] [--destdir DIR]}
	shift
fi
prefix=/usr/local
destdir=""
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=$2; shift ;;
	--prefix=*) prefix=${1#--prefix=} ;;
	--destdir) destdir=$2; shift ;;
	--destdir=*) destdir=${1#--destdir=} ;;
	*) die "unknown option $1" ;;
	esac
	shift
done
case "$prefix" in /*) ;; *) die "--prefix must be absolute: $prefix" ;; esac
root=$destdir$prefix
manifest=share/wharf/install-manifest.txt

do_install() {
	local version
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	tar -xf "$dist" -C "$stage"
	version=$(cut -d' ' -f1 "$stage/share/wharf/VERSION")
	sed -e "s#@PREFIX@#$prefix#" -e "s#@VERSION@#$version#" \
		"$stage/lib/pkgconfig/wharf.pc.in" >"$stage/lib/pkgconfig/wharf.pc"
	rm "$stage/lib/pkgconfig/wharf.pc.in"
	mkdir -p "$stage/share/wharf"
	: >"$stage/$manifest"
	local list rel
	list=$(mktemp)
	if [ ! -d "$root" ]; then
		mkdir -p "$root"
		echo "dir ." >>"$list"
	fi
	# Directories first (parents before children), then files and links.
	(cd "$stage" && find . -mindepth 1 -type d | sort) | while read -r rel; do
		rel=${rel#./}
		if [ ! -d "$root/$rel" ]; then
			mkdir -p "$root/$rel"
			echo "dir $rel" >>"$list"
		fi
	done
	(cd "$stage" && find . \( -type f -o -type l \) | sort) | while read -r rel; do
		rel=${rel#./}
		[ "$rel" = "$manifest" ] && continue
		rm -f "$root/$rel"
		cp -P "$stage/$rel" "$root/$rel"
		echo "file $rel" >>"$list"
	done
	echo "file $manifest" >>"$list"
	# Keep an older install's entries: uninstall removes both.
	[ -f "$root/$manifest" ] && cat "$root/$manifest" >>"$list"
	sort -u "$list" >"$root/$manifest"
	rm -f "$list"
	echo "install: libwharf $version in $root ($(grep -c '^file' \
		"$root/$manifest") files; manifest $prefix/$manifest)"
	if [ -z "$destdir" ] && [ "$(id -u)" = 0 ] && command -v ldconfig \
		>/dev/null; then
		ldconfig "$root/lib" 2>/dev/null || true
	fi
}

do_uninstall() {
	[ -f "$root/$manifest" ] || die "no $root/$manifest: nothing installed there"
	local kind rel n=0 dirs
	# Directories the install created, deepest first, removed when empty.
	dirs=$(grep '^dir ' "$root/$manifest" | cut -d' ' -f2- | sort -r)
	while read -r kind rel; do
		[ "$kind" = file ] || continue
		rm -f "$root/$rel"
		n=$((n + 1))
	done <"$root/$manifest"
	while read -r rel; do
		[ -n "$rel" ] && rmdir "$root/${rel#.}" 2>/dev/null || true
	done <<<"$dirs"
	echo "uninstall: removed $n files from $root"
}

case "$cmd" in
install) do_install ;;
uninstall) do_uninstall ;;
*) die "usage: install.sh install DIST_TAR|uninstall [--prefix DIR] [--destdir DIR]" ;;
esac
