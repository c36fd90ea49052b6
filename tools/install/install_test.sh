#!/usr/bin/env bash
# install_test.sh INSTALL_SH DIST_TAR SERVER_C CLIENT_C
# What a user does with an installed libwharf, checked step by step.
set -euo pipefail
inst=$(realpath "$1") dist=$(realpath "$2")
server_c=$(realpath "$3") client_c=$(realpath "$4")
t=$(mktemp -d "${TEST_TMPDIR:-/tmp}/inst.XXXXXX")
fail() {
	echo "FAIL: $*"
	exit 1
}
step() { echo "--- $*"; }

step "install with --destdir: files land under DESTDIR, the .pc names PREFIX"
"$inst" install "$dist" --prefix /opt/wharf --destdir "$t/stage"
pc=$t/stage/opt/wharf/lib/pkgconfig/wharf.pc
grep -qx 'prefix=/opt/wharf' "$pc" || fail "wharf.pc prefix: $(head -1 "$pc")"
for f in lib/libwharf.so lib/libwharf.so.0 lib/libwharf.a include/wharf/cm.h \
	include/wharf/nvmf_host.h share/man/man3/wharf_nvmf_host_connect.3 \
	share/man/man7/wharf.7 share/man/man3/wharf_accept.3 bin/wharf-echo \
	bin/wharf-nvmf-tgt bin/wharf-nvmf-rpc bin/wharf-nvmf-perf bin/wharf-nbd \
	bin/wharf-ublk bin/storm; do
	[ -e "$t/stage/opt/wharf/$f" ] || fail "not installed: $f"
done
"$inst" uninstall --prefix /opt/wharf --destdir "$t/stage"
[ ! -e "$t/stage/opt/wharf" ] ||
	fail "uninstall left: $(find "$t/stage/opt/wharf" | head -5)"

step "install into a prefix; pkg-config finds it"
p=$t/usr
mkdir -p "$p/lib" && touch "$p/lib/someone-elses.so"
"$inst" install "$dist" --prefix "$p"
export PKG_CONFIG_PATH=$p/lib/pkgconfig
pkg-config --exists wharf || fail "pkg-config does not find wharf"
echo "pkg-config --cflags --libs wharf: $(pkg-config --cflags --libs wharf)"

step "soname and exports of the installed library"
so=$p/lib/libwharf.so.0
readelf -d "$so" | grep 'Library soname: \[libwharf.so.0\]' >/dev/null ||
	fail "soname"
bad=$(nm -D --defined-only "$so" | awk '$3 !~ /^wharf_/ || $2 != "T"')
[ -z "$bad" ] || fail "exported besides wharf_ functions: $bad"
echo "$(nm -D --defined-only "$so" | wc -l) wharf_ functions exported"

step "every public header compiles on its own, as C11 and as C++17"
for h in "$p"/include/wharf/*.h; do
	name=wharf/$(basename "$h")
	echo "#include <$name>" >"$t/hdr.c"
	cc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only \
		$(pkg-config --cflags wharf) "$t/hdr.c" || fail "$name as C11"
	c++ -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only \
		-x c++ $(pkg-config --cflags wharf) "$t/hdr.c" ||
		fail "$name as C++17"
done

step "the examples build with pkg-config alone, and run"
cd "$t"
# A sanitizer build of the library (the suite under --config=asan or
# tsan) needs the sanitizer's runtime in the executable as well.
san=
case "$(readelf -d "$so")" in
*libtsan*) san=-fsanitize=thread ;;
*libasan*) san=-fsanitize=address,undefined ;;
esac
cc $san -Wall -Werror -o server "$server_c" $(pkg-config --cflags --libs wharf) ||
	fail "server.c"
cc $san -Wall -Werror -o client "$client_c" $(pkg-config --cflags --libs wharf) ||
	fail "client.c"
ldd ./server | grep "libwharf.so.0 => $p/lib/libwharf.so.0" >/dev/null ||
	LD_LIBRARY_PATH=$p/lib ldd ./server | grep "libwharf.so.0 => $p/lib" >/dev/null ||
	fail "server does not load the installed libwharf: $(ldd ./server)"
# Without an RDMA device (the host) they load, start and report it.
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	out=$(LD_LIBRARY_PATH=$p/lib ./client 192.0.2.1 2>&1) && fail "client: $out"
	echo "client without a device: $out"
	case "$out" in *"No such device"*) ;; *) fail "client: $out" ;; esac
fi

step "libwharf.a linked in, its dependencies shared (the .pc names them)"
cc $san -o client-static "$client_c" $(pkg-config --cflags wharf) \
	"$p/lib/libwharf.a" $(pkg-config --libs librdmacm libibverbs \
	liburcu-qsbr liburcu-cds jemalloc hwloc) -pthread || fail "static link"
nm client-static | grep ' T wharf_connect$' >/dev/null ||
	fail "static client lacks wharf_connect"

step "the man pages render"
MANWIDTH=80 man -l "$p/share/man/man3/wharf_connect.3" | grep '^NAME' >/dev/null ||
	fail "man -l wharf_connect.3"

step "uninstall removes exactly what was installed"
"$inst" uninstall --prefix "$p"
left=$(cd "$p" && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$left" = "./lib ./lib/someone-elses.so " ] || fail "after uninstall: $left"
echo "PASS"
