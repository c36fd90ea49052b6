#!/usr/bin/env bash
# Prepares the soft-RoCE guest: Debian's stock kernel (never installed on the
# host, only unpacked into a cache) and a busybox initramfs that mounts the
# host's root over 9p.  Idempotent: a prepared cache for the current kernel
# version is reused.  Prints the path of the prepared directory.
#
# Environment: WHARF_VM_CACHE (default ~/.cache/wharf/vm).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${WHARF_VM_CACHE:-$HOME/.cache/wharf/vm}
mkdir -p "$cache"

log() { printf 'vm-prepare: %s\n' "$*" >&2; }

# The metapackage names the current ABI (linux-image-6.1.0-NN-amd64); a
# version bump simply prepares a new directory next to the old one.
kpkg=${WHARF_VM_KERNEL_PKG:-}
if [ -z "$kpkg" ]; then
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
fi
if [ -z "$kpkg" ]; then
	# Offline with a stale apt list: fall back to the newest prepared kernel.
	last=$(ls -1d "$cache"/linux-image-*/ready 2>/dev/null | sort -V | tail -n 1)
	if [ -n "$last" ]; then
		dirname "$last"
		exit 0
	fi
	log "cannot resolve linux-image-amd64 (run apt-get update)"
	exit 1
fi

dir=$cache/$kpkg
if [ -f "$dir/ready" ]; then
	echo "$dir"
	exit 0
fi

log "preparing $kpkg in $dir"
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
(cd "$dir.tmp" && apt-get download "$kpkg" >/dev/null 2>&1) || {
	log "apt-get download $kpkg failed"
	exit 1
}
dpkg -x "$dir.tmp"/"$kpkg"_*.deb "$dir.tmp/root"
rm -f "$dir.tmp"/*.deb
kver=$(ls -1 "$dir.tmp/root/lib/modules" | head -n 1)
depmod -b "$dir.tmp/root" "$kver"
cp "$dir.tmp/root/boot/vmlinuz-$kver" "$dir.tmp/vmlinuz"
echo "$kver" >"$dir.tmp/kver"

# Initramfs: static busybox, the modules needed to mount 9p over virtio in
# dependency order (as modprobe resolves them), and our /init.
ird=$dir.tmp/initramfs
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,modules}
cp /bin/busybox "$ird/bin/busybox"
: >"$ird/modules/order"
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe -d "$dir.tmp/root" -S "$kver" --show-depends "$m" |
		awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
	cp "$ko" "$ird/modules/"
	basename "$ko" >>"$ird/modules/order"
done
cp "$here/initramfs-init" "$ird/init"
chmod 755 "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir.tmp/initrd.gz"
rm -rf "$ird"

touch "$dir.tmp/ready"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
log "ready: kernel $kver"
echo "$dir"
