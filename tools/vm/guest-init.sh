#!/bin/sh
# PID 1 of wharf's guest, started by the initramfs after switch_root onto the
# host's root (read-only 9p).  Brings up soft-RoCE on a veth pair (no NIC:
# nothing leaves the guest), runs the command that run.sh left in the shared
# folder, records its exit status there and powers off.
#
# With wharf.node=a|b on the kernel command line (run.sh --nodes 2) the guest
# is one of two: rxe0 sits on its virtio NIC (the wire to the other node)
# at 198.18.0.1 (a) or 198.18.0.2 (b), and its own files are in node-a/ or
# node-b/ of the shared folder.  wharf.boot=N counts its boots (a node
# crashed by run.sh boots again), exported as WHARF_BOOT.
#
# ttyS0 (the console) carries kernel and setup messages to a log file on the
# host; the command's own output goes to ttyS1, which the host streams.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C

mount -t tmpfs -o mode=755 tmpfs /run
# The guest gets its own writable /tmp; the host's stays reachable (a clone
# under /tmp is re-bound at its own path once the environment is read).
mkdir -p /run/host-tmp
mount --bind /tmp /run/host-tmp
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t devpts devpts /dev/pts
mkdir -p /run/wharf
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 work \
	/run/wharf; then
	echo "guest-init: cannot mount the shared folder"
	poweroff -f
fi
node=$(sed -n 's/.*wharf\.node=\([ab]\).*/\1/p' /proc/cmdline)
boot=$(sed -n 's/.*wharf\.boot=\([0-9]*\).*/\1/p' /proc/cmdline)
own=/run/wharf
[ -z "$node" ] || own=/run/wharf/node-$node
. $own/env
case "$WHARF_CWD" in
/tmp/*)
	mkdir -p "$WHARF_CWD"
	mount --bind "/run/host-tmp/${WHARF_CWD#/tmp/}" "$WHARF_CWD"
	;;
esac

fail() {
	echo "guest-init: $*" | tee /dev/ttyS1
	echo 125 >$own/rc
	sync
	poweroff -f
}

# The kernel's modules live in the host-side cache, not in /lib/modules: a
# modprobe wrapper first in PATH, also registered as the kernel's module
# helper so that request_module() (crc32 for rxe, nvmet transports...) works.
mkdir -p /run/bin
cat >/run/bin/modprobe <<MODPROBE
#!/bin/sh
exec /sbin/modprobe -d "$WHARF_MODROOT" -S "$WHARF_KVER" "\$@"
MODPROBE
chmod 755 /run/bin/modprobe
export PATH=/run/bin:$PATH
echo /run/bin/modprobe >/proc/sys/kernel/modprobe

modprobe -a veth rdma_rxe ib_uverbs rdma_ucm ib_umad ||
	fail "modprobe failed"
ip link set lo up
if [ -z "$node" ]; then
	nic=veth0
	ip link add veth0 type veth peer name veth1 || fail "veth"
	ip addr add 198.18.0.1/24 dev veth0
	ip link set veth0 up
	ip link set veth1 up
else
	modprobe -a virtio_net sch_netem || fail "modprobe virtio_net sch_netem"
	nic=""
	for i in $(seq 50); do
		nic=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
		[ -z "$nic" ] || break
		sleep 0.1
	done
	[ -n "$nic" ] || fail "node $node: no NIC"
	me=1 peer=2
	[ "$node" = a ] || { me=2 peer=1; }
	ip addr add 198.18.0.$me/24 dev "$nic"
	ip link set "$nic" up
	export WHARF_NODE=$node WHARF_BOOT=${boot:-1} WHARF_NIC=$nic
	export WHARF_PAIR_SHARE=/run/wharf
	export WHARF_ADDR=198.18.0.$me WHARF_PEER_ADDR=198.18.0.$peer
fi
rdma link add rxe0 type rxe netdev "$nic" || fail "rdma link add"
ulimit -l unlimited
ulimit -n 65536
# Every client connection of a storm takes a local port of its own (all
# come from one address to one server port): the guest is a storm test
# bed, so it offers 64,512 of them instead of the kernel's 28,232.
echo "1024 65535" >/proc/sys/net/ipv4/ip_local_port_range
echo "guest-init: rxe0 up on $nic, running the command"

cd "$WHARF_CWD" || fail "no $WHARF_CWD"
cut -d' ' -f1 /proc/uptime >$own/t_start
WHARF_GUEST=1 WHARF_GUEST_SHARE=$own bash $own/cmd.sh \
	</dev/null >/dev/ttyS1 2>&1
rc=$?
cut -d' ' -f1 /proc/uptime >$own/t_end
echo $rc >$own/rc
sync
poweroff -f
