#!/usr/bin/env bash
# Prepares the soft-RoCE guest: Debian's stock kernel (never installed on the
# host, only unpacked into a cache) and a busybox initramfs that mounts the
# host's root over 9p.  Idempotent: a prepared cache for the current kernel
# version is reused.  Prints the path of the prepared directory.
#
# Two kernels: 6.1, Debian 12's own (the default), and 6.12 from Debian 12's
# bookworm-backports suite, the generation Debian 13 ships (ublk and NVMe
# in-band authentication are built into it; rxe's post-flap drop is not in
# it: docs/faults.md).  `./wharf deps --guest` adds that suite to apt's
# sources, pinned so that nothing installs from it by itself.
#
# Environment: WHARF_VM_KERNEL (6.1 or 6.12, default 6.1), WHARF_VM_CACHE
# (default ~/.cache/wharf/vm), WHARF_VM_KERNEL_PKG (a linux-image package
# name: overrides WHARF_VM_KERNEL).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${WHARF_VM_CACHE:-$HOME/.cache/wharf/vm}
mkdir -p "$cache"

log() { printf 'vm-prepare: %s\n' "$*" >&2; }

# The suite each kernel comes from (the metapackage's version there).
kernel=${WHARF_VM_KERNEL:-6.1}
case "$kernel" in
6.1) meta=linux-image-amd64 ;;
6.12) meta=linux-image-amd64/bookworm-backports ;;
*)
	log "WHARF_VM_KERNEL takes 6.1 or 6.12, not '$kernel'"
	exit 2
	;;
esac

# The metapackage names the current ABI (linux-image-6.1.0-NN-amd64,
# linux-image-6.12.NN+deb12-amd64); a version bump simply prepares a new
# directory next to the old one.
kpkg=${WHARF_VM_KERNEL_PKG:-}
if [ -z "$kpkg" ]; then
	kpkg=$(apt-cache depends "$meta" 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	case "$kpkg" in
	linux-image-"$kernel".*) ;;
	"") ;;
	*)
		log "$meta resolves to $kpkg, not a $kernel kernel"
		exit 1
		;;
	esac
fi
if [ -z "$kpkg" ]; then
	# Offline with a stale apt list: fall back to the newest prepared
	# kernel of that generation.
	last=$(ls -1d "$cache"/linux-image-"$kernel".*/ready 2>/dev/null |
		sort -V | tail -n 1)
	if [ -n "$last" ]; then
		dirname "$last"
		exit 0
	fi
	if [ "$kernel" = 6.12 ]; then
		log "cannot resolve $meta (run ./wharf deps --guest: it adds" \
			"bookworm-backports to apt's sources)"
	else
		log "cannot resolve $meta (run apt-get update)"
	fi
	exit 1
fi

# Initramfs: static busybox, the modules needed to mount 9p over virtio in
# dependency order (as modprobe resolves them), and our /init.  Written to
# DIR/initrd.gz from the kernel unpacked in DIR/root; DIR/init.sum records
# which initramfs-init it carries, so that a changed one is rebuilt into
# an already prepared kernel's directory.
build_initrd() { # dir
	local d=$1 kv ird m ko
	kv=$(cat "$d/kver")
	ird=$d/initramfs
	rm -rf "$ird"
	mkdir -p "$ird"/{bin,dev,proc,sys,newroot,modules}
	cp /bin/busybox "$ird/bin/busybox"
	: >"$ird/modules/order"
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe -d "$d/root" -S "$kv" --show-depends "$m" |
			awk '$1 == "insmod" {print $2}'
	done | awk '!seen[$0]++' | while read -r ko; do
		# busybox's insmod takes plain modules; 6.12's are
		# xz-compressed (the guest's modprobe, the host's kmod, reads
		# those as they are).
		m=$(basename "$ko")
		case "$m" in
		*.ko.xz) xz -dc "$ko" >"$ird/modules/${m%.xz}" ;;
		*.ko.zst) zstd -qdc "$ko" >"$ird/modules/${m%.zst}" ;;
		*) cp "$ko" "$ird/modules/$m" ;;
		esac
		basename "${m%.ko*}.ko" >>"$ird/modules/order"
	done
	cp "$here/initramfs-init" "$ird/init"
	chmod 755 "$ird/init"
	(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$d/initrd.gz.tmp"
	mv "$d/initrd.gz.tmp" "$d/initrd.gz"
	rm -rf "$ird"
	sha256sum <"$here/initramfs-init" | cut -d' ' -f1 >"$d/init.sum"
}

dir=$cache/$kpkg
if [ -f "$dir/ready" ]; then
	if [ "$(cat "$dir/init.sum" 2>/dev/null)" != \
		"$(sha256sum <"$here/initramfs-init" | cut -d' ' -f1)" ]; then
		log "initramfs-init changed: rebuilding $dir/initrd.gz"
		build_initrd "$dir"
	fi
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

build_initrd "$dir.tmp"

touch "$dir.tmp/ready"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
log "ready: kernel $kver"
echo "$dir"
