// wharf-nbd against two targets in one guest: nvmet-rdma (configfs, a file
// namespace on tmpfs) and wharf-nvmf-tgt (a RAM namespace).
//
// Kernel mode, on each target: /dev/nbd0 with two connections on two
// queues (the wharf target: a 32 KiB transfer limit, so every 128 KiB
// kernel request is split); fio randwrite with verify=crc32c and then
// with verify=md5 (exit status 0, the verify reads seen); blkdiscard of
// written blocks reading back as zeroes where the namespace promises it;
// mkfs.ext4, mount, files written, umount, fsck.ext4 -fn clean; SIGUSR1
// and SIGTERM: the stats lines, exit 0, the device released.  A second
// wharf-nbd on the busy device and one on a missing device fail with a
// clear reason.
//
// Socket mode, on the wharf target: a client in this file speaks the NBD
// protocol: an unknown option refused with NBD_REP_ERR_UNSUP, INFO, GO
// with the block size; write, read back, FLUSH, TRIM and WRITE_ZEROES
// reading as zeroes, errors for requests past the end, unaligned and of
// an unknown type (the connection lives on); an oversize WRITE answered
// and the connection closed; a wrong magic closes; EXPORT_NAME and
// ABORT; then SIGTERM and exit 0.
#include <arpa/inet.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/guest_env.h"
#include "tests/guest/guest_proc.h"
#include "tests/guest/nvmf_guest_util.h"
#include "tests/unit/nbd_wire_util.h"

namespace
{

using namespace nbd_wire;

using namespace nvmf_guest;
using wharf_guest::Clock;
using wharf_guest::Proc;

const char kAddr[] = "198.18.0.1";
const char kNvmetSub[] = "nqn.2024-01.io.wharf:nbd-nvmet";
const char kWharfSub[] = "nqn.2024-01.io.wharf:nbd-wharf";
const char kCfs[] = "/sys/kernel/config/nvmet";
const char kImg[] = "/dev/shm/nbd_test.img";
const char kPortId[] = "31";
// Ports no other guest test uses (a kernel nvmet port outlives the test
// process that configured it).
const uint16_t kNvmetPort = 4442, kWharfPort = 4443;
const uint64_t kNsBytes = 64ull << 20;
const char kSock[] = "/tmp/nbd_test.sock";

struct Target {
	const char *name;
	uint16_t port;
	const char *sub;
	const char *max_io; // --max-io-size
};

const Target kTargets[] = {
	{"nvmet", kNvmetPort, kNvmetSub, "128k"},
	{"wharf", kWharfPort, kWharfSub, "32k"},
};

std::string NbdPath()
{
	return wharf_guest::built_program("initiators/nbd/wharf-nbd");
}

std::vector<std::string> NbdArgs(const Target &t)
{
	return {NbdPath(),
		"--traddr",
		kAddr,
		"--trsvcid",
		std::to_string(t.port),
		"--subnqn",
		t.sub,
		"--shards",
		"2",
		"--queues",
		"2",
		"--max-io-size",
		t.max_io};
}

class Nbd : public ::testing::TestWithParam<Target>
{
      protected:
	static Tgt *tgt_;
	static bool nvmet_up_, nbd_up_;

	static void NvmetTeardown()
	{
		std::string c = kCfs, p = c + "/ports/" + kPortId;
		Sh("rm -f " + p + "/subsystems/*; rmdir " + p + "; echo 0 > " +
		   c + "/subsystems/" + kNvmetSub +
		   "/namespaces/1/enable; rmdir " + c + "/subsystems/" +
		   kNvmetSub + "/namespaces/1 " + c + "/subsystems/" +
		   kNvmetSub + "; rm -f " + kImg);
	}

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		std::string out, c = kCfs, s = c + "/subsystems/" + kNvmetSub,
				 p = c + "/ports/" + kPortId;
		NvmetTeardown();
		nvmet_up_ =
			Sh("set -e; modprobe -a nvmet nvmet_rdma; mountpoint "
			   "-q "
			   "/sys/kernel/config || mount -t configfs none "
			   "/sys/kernel/config; truncate -s 64M " +
				   std::string(kImg) + "; mkdir " + s + " " +
				   s + "/namespaces/1; echo -n " + kImg +
				   " > " + s +
				   "/namespaces/1/device_path; echo 1 > " + s +
				   "/namespaces/1/buffered_io; echo 1 > " + s +
				   "/namespaces/1/enable; echo 1 > " + s +
				   "/attr_allow_any_host; mkdir " + p +
				   "; echo rdma > " + p +
				   "/addr_trtype; echo ipv4 > " + p +
				   "/addr_adrfam; echo " + kAddr + " > " + p +
				   "/addr_traddr; echo " +
				   std::to_string(kNvmetPort) + " > " + p +
				   "/addr_trsvcid; ln -s " + s + " " + p +
				   "/subsystems/",
			   &out) == 0;
		if (!nvmet_up_) {
			ADD_FAILURE() << "nvmet setup: " << out;
		}
		nbd_up_ = Sh("modprobe nbd && test -b /dev/nbd0", &out) == 0;
		if (!nbd_up_) {
			ADD_FAILURE() << "modprobe nbd: " << out;
		}
		tgt_ = new Tgt();
		::testing::AssertionResult started = tgt_->Start(
			"nbd_test", std::string("listen ") + kAddr + " " +
					    std::to_string(kWharfPort) +
					    "\nshards 1\nsubsystem " +
					    kWharfSub +
					    "\n  namespace 1 ram:64M\n"
					    "  allow-any-host\n");
		if (!started) {
			ADD_FAILURE() << started.message();
		}
	}

	static void TearDownTestSuite()
	{
		if (tgt_) {
			EXPECT_TRUE(tgt_->Stop());
			delete tgt_;
			tgt_ = nullptr;
		}
		if (nvmet_up_)
			NvmetTeardown();
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_FALSE(NbdPath().empty()) << "wharf-nbd not built";
		ASSERT_TRUE(nbd_up_);
		ASSERT_NE(nullptr, tgt_);
		if (GetParam().port == kNvmetPort) {
			ASSERT_TRUE(nvmet_up_);
		}
	}

	// SIGTERM, a clean exit within the deadline, the final stats.
	static void Stop(Proc *p)
	{
		ASSERT_GT(p->pid, 0) << p->Output();
		kill(p->pid, SIGTERM);
		ASSERT_TRUE(p->Wait(Clock::now() + std::chrono::seconds(60)))
			<< "wharf-nbd did not exit:\n"
			<< p->Output();
		EXPECT_TRUE(p->Exited0()) << p->status << "\n" << p->Output();
		EXPECT_NE(std::string::npos, p->Output().find("stats at exit"))
			<< p->Output();
	}
};

Tgt *Nbd::tgt_;
bool Nbd::nvmet_up_, Nbd::nbd_up_;

// A test that stops early still unmounts and stops its wharf-nbd (with a
// deadline), so that the next one finds the device free.
struct Cleanup {
	Proc *p;
	~Cleanup()
	{
		Sh("umount /tmp/nbd_test_mnt 2>/dev/null");
		if (p->pid > 0 && waitpid(p->pid, &p->status, WNOHANG) == 0) {
			kill(p->pid, SIGTERM);
			p->Wait(Clock::now() + std::chrono::seconds(60));
		}
	}
};

TEST_P(Nbd, KernelDeviceFioDiscardExt4)
{
	const Target &t = GetParam();
	std::string out;
	Proc p;
	Cleanup cleanup{&p};
	auto args = NbdArgs(t);
	args.insert(args.end(), {"--device", "/dev/nbd0"});
	p.Start(args, "/tmp/nbd_test_" + std::string(t.name) + ".log");
	ASSERT_TRUE(p.WaitFor("serving /dev/nbd0",
			      Clock::now() + std::chrono::seconds(60)))
		<< p.Output();
	EXPECT_NE(std::string::npos, p.Output().find("2 connection(s)"));
	// The size the namespace has (the driver reports 512-byte sectors).
	ASSERT_TRUE(Poll([&] {
		return ReadFile("/sys/block/nbd0/size").find("131072") == 0;
	})) << ReadFile("/sys/block/nbd0/size");

	// The busy device and a missing one: a clear reason, no damage.
	{
		std::string err;
		auto a2 = NbdArgs(t);
		a2.insert(a2.end(), {"--device", "/dev/nbd0"});
		Proc q;
		q.Start(a2, "/tmp/nbd_test_busy.log");
		ASSERT_TRUE(q.Wait(Clock::now() + std::chrono::seconds(60)));
		EXPECT_FALSE(q.Exited0());
		EXPECT_NE(std::string::npos, q.Output().find("busy"))
			<< q.Output();
		a2.back() = "/dev/nbd_missing";
		Proc m;
		m.Start(a2, "/tmp/nbd_test_missing.log");
		ASSERT_TRUE(m.Wait(Clock::now() + std::chrono::seconds(60)));
		EXPECT_FALSE(m.Exited0());
		EXPECT_NE(std::string::npos, m.Output().find("modprobe nbd"))
			<< m.Output();
	}

	// fio with both checksums; each job writes, then reads back and
	// verifies (the READ line is the verify phase).
	for (const char *v : {"crc32c", "md5"}) {
		std::string fio =
			std::string("fio --name=v --filename=/dev/nbd0 "
				    "--ioengine=libaio --direct=1 --iodepth=16 "
				    "--bsrange=4k-128k --size=8M "
				    "--rw=randwrite --do_verify=1 "
				    "--verify_fatal=1 --verify=") +
			v;
		ASSERT_EQ(0, Sh(fio, &out, 300)) << out;
		EXPECT_NE(std::string::npos, out.find("err= 0")) << out;
		EXPECT_NE(std::string::npos, out.find("READ: bw=")) << out;
		EXPECT_NE(std::string::npos, out.find("WRITE: bw=")) << out;
	}

	// Discard: written blocks read back as zeroes (where promised; both
	// targets here: a RAM namespace and a tmpfs file with holes punched).
	ASSERT_EQ(0, Sh("head -c 1048576 /dev/urandom > /tmp/nbd_test.rnd && "
			"dd if=/tmp/nbd_test.rnd of=/dev/nbd0 bs=64k seek=160 "
			"oflag=direct status=none && "
			"blkdiscard -o 10485760 -l 1048576 /dev/nbd0 && "
			"dd if=/dev/nbd0 bs=64k skip=160 count=16 iflag=direct "
			"status=none | cmp - /dev/zero -n 1048576",
			&out))
		<< out;

	// A file system: make, mount, write, unmount, check.
	ASSERT_EQ(0,
		  Sh("mkfs.ext4 -q -F /dev/nbd0 && mkdir -p /tmp/nbd_test_mnt "
		     "&& mount /dev/nbd0 /tmp/nbd_test_mnt && "
		     "for i in 1 2 3 4 5 6 7 8; do head -c 1000000 "
		     "/dev/urandom > /tmp/nbd_test_mnt/f$i; done && "
		     "md5sum /tmp/nbd_test_mnt/f* > /tmp/nbd_test.md5 && sync "
		     "&& umount /tmp/nbd_test_mnt && echo 3 > "
		     "/proc/sys/vm/drop_caches && fsck.ext4 -fn /dev/nbd0 "
		     "&& mount /dev/nbd0 /tmp/nbd_test_mnt && md5sum -c "
		     "--quiet /tmp/nbd_test.md5 && umount /tmp/nbd_test_mnt",
		     &out, 300))
		<< out;

	kill(p.pid, SIGUSR1);
	EXPECT_TRUE(
		p.WaitFor("stats: ", Clock::now() + std::chrono::seconds(30)))
		<< p.Output();
	Stop(&p);
	std::string log = p.Output();
	EXPECT_GT(Stat(log, "reads"), 0u) << log;
	EXPECT_GT(Stat(log, "writes"), 0u) << log;
	EXPECT_GT(Stat(log, "flushes"), 0u) << "ext4 and sync flush" << log;
	EXPECT_GT(Stat(log, "trims"), 0u) << log;
	EXPECT_EQ(0u, Stat(log, "errors")) << log;
	EXPECT_EQ(0u, Stat(log, "nvme_errors")) << log;
	if (t.port == kWharfPort) {
		EXPECT_GT(Stat(log, "nvme_cmds"),
			  Stat(log, "reads") + Stat(log, "writes"))
			<< "32 KiB pieces of larger requests" << log;
	}
	EXPECT_TRUE(Poll([] { return access("/sys/block/nbd0/pid", F_OK); }))
		<< "the device is still connected";
}

INSTANTIATE_TEST_SUITE_P(Targets, Nbd, ::testing::ValuesIn(kTargets),
			 [](const ::testing::TestParamInfo<Target> &i) {
				 return std::string(i.param.name);
			 });

// ---- socket mode: an NBD client ----------------------------------------

struct Client {
	int fd = -1;
	~Client()
	{
		if (fd >= 0)
			close(fd);
	}
	bool Connect()
	{
		sockaddr_un a = {};
		a.sun_family = AF_UNIX;
		strcpy(a.sun_path, kSock);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		timeval tv = {30, 0};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		return connect(fd, (sockaddr *)&a, sizeof(a)) == 0;
	}
	bool Send(const Bytes &b)
	{
		return send(fd, b.data(), b.size(), MSG_NOSIGNAL) ==
		       (ssize_t)b.size();
	}
	// @n bytes, or fewer at EOF / timeout.
	Bytes Recv(size_t n)
	{
		Bytes b(n);
		size_t got = 0;
		while (got < n) {
			ssize_t r = recv(fd, b.data() + got, n - got, 0);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		b.resize(got);
		return b;
	}
	bool Eof()
	{
		uint8_t c;
		return recv(fd, &c, 1, 0) == 0;
	}
	// Greeting and flags (fixed newstyle, no zeroes).
	void Hello()
	{
		Bytes g = Recv(18);
		ASSERT_EQ(18u, g.size());
		ASSERT_EQ(0, memcmp(g.data(), "NBDMAGICIHAVEOPT", 16));
		ASSERT_EQ(3u, Get(&g[16], 2));
		Bytes f;
		Put(&f, 3, 4);
		ASSERT_TRUE(Send(f));
	}
	void Option(uint32_t opt, const Bytes &payload)
	{
		Bytes o;
		Put(&o, 0x49484156454F5054ull, 8);
		Put(&o, opt, 4);
		Put(&o, payload.size(), 4);
		o.insert(o.end(), payload.begin(), payload.end());
		ASSERT_TRUE(Send(o));
	}
	// One option reply: its type, its data in *data.
	uint32_t Reply(uint32_t opt, Bytes *data = nullptr)
	{
		Bytes h = Recv(20);
		if (h.size() != 20)
			return 0;
		EXPECT_EQ(0x3e889045565a9ull, Get(&h[0], 8));
		EXPECT_EQ(opt, Get(&h[8], 4));
		Bytes d = Recv(Get(&h[16], 4));
		if (data)
			*data = d;
		return (uint32_t)Get(&h[12], 4);
	}
	// A request; its reply's error (UINT32_MAX when none came), the
	// data of a successful READ in *data.
	uint32_t Cmd(uint16_t type, uint64_t off, uint32_t len,
		     const Bytes &payload = {}, Bytes *data = nullptr,
		     uint16_t flags = 0, uint32_t magic = 0x25609513)
	{
		static uint64_t handle = 1000;
		Bytes r;
		Put(&r, magic, 4);
		Put(&r, flags, 2);
		Put(&r, type, 2);
		Put(&r, ++handle, 8);
		Put(&r, off, 8);
		Put(&r, len, 4);
		r.insert(r.end(), payload.begin(), payload.end());
		if (!Send(r))
			return UINT32_MAX;
		Bytes h = Recv(16);
		if (h.size() != 16)
			return UINT32_MAX;
		EXPECT_EQ(0x67446698u, Get(&h[0], 4));
		EXPECT_EQ(handle, Get(&h[8], 8));
		uint32_t err = (uint32_t)Get(&h[4], 4);
		if (type == 0 && err == 0) {
			Bytes d = Recv(len);
			EXPECT_EQ(len, d.size());
			if (data)
				*data = d;
		}
		return err;
	}
};

class NbdSocket : public Nbd
{
};

TEST_P(NbdSocket, ProtocolDataAndErrors)
{
	const Target &t = GetParam();
	Proc p;
	Cleanup cleanup{&p};
	auto args = NbdArgs(t);
	args.insert(args.end(), {"--socket", kSock, "--export-name", "disk"});
	p.Start(args, "/tmp/nbd_test_socket.log");
	ASSERT_TRUE(p.WaitFor("serving disk",
			      Clock::now() + std::chrono::seconds(60)))
		<< p.Output();

	Client c;
	ASSERT_TRUE(c.Connect());
	c.Hello();
	c.Option(3, {}); // NBD_OPT_LIST: not served
	EXPECT_EQ(0x80000001u, c.Reply(3));
	c.Option(6, GoPayload("nope", {}));
	EXPECT_EQ(0x80000006u, c.Reply(6)) << "unknown export";
	c.Option(6, GoPayload("disk", {}));
	Bytes d;
	ASSERT_EQ(3u, c.Reply(6, &d)) << "NBD_REP_INFO";
	ASSERT_EQ(12u, d.size());
	EXPECT_EQ(kNsBytes, Get(&d[2], 8));
	uint16_t tflags = (uint16_t)Get(&d[10], 2);
	EXPECT_TRUE(tflags & (1u << 2)) << "flush";
	EXPECT_TRUE(tflags & (1u << 5)) << "trim";
	EXPECT_TRUE(tflags & (1u << 6)) << "write zeroes";
	EXPECT_EQ(1u, c.Reply(6)) << "ACK";
	c.Option(7, GoPayload("", {3})); // the default export, block size
	ASSERT_EQ(3u, c.Reply(7, &d));
	ASSERT_EQ(3u, c.Reply(7, &d));
	ASSERT_EQ(14u, d.size());
	uint32_t bs = (uint32_t)Get(&d[2], 4);
	EXPECT_TRUE(bs == 512 || bs == 4096) << bs;
	EXPECT_EQ(1u, c.Reply(7));

	// Data: 256 KiB (eight 32 KiB NVMe writes) at 1 MiB, read back.
	Bytes data(262144);
	for (size_t i = 0; i < data.size(); i++)
		data[i] = (uint8_t)(i * 7 + i / 4096);
	const uint64_t at = 1 << 20;
	ASSERT_EQ(0u, c.Cmd(1, at, (uint32_t)data.size(), data));
	ASSERT_EQ(0u, c.Cmd(3, 0, 0)) << "flush";
	Bytes back;
	ASSERT_EQ(0u, c.Cmd(0, at, (uint32_t)data.size(), {}, &back));
	EXPECT_TRUE(back == data);
	// TRIM the first 64 KiB, WRITE_ZEROES the last (NO_HOLE): zeroes.
	ASSERT_EQ(0u, c.Cmd(4, at, 65536));
	ASSERT_EQ(0u, c.Cmd(6, at + 196608, 65536, {}, nullptr, 2));
	ASSERT_EQ(0u, c.Cmd(0, at, (uint32_t)data.size(), {}, &back));
	ASSERT_EQ(data.size(), back.size());
	EXPECT_TRUE(std::all_of(back.begin(), back.begin() + 65536,
				[](uint8_t b) { return b == 0; }))
		<< "trimmed";
	EXPECT_TRUE(std::equal(back.begin() + 65536, back.begin() + 196608,
			       data.begin() + 65536));
	EXPECT_TRUE(std::all_of(back.begin() + 196608, back.end(),
				[](uint8_t b) { return b == 0; }))
		<< "zeroed";

	// Errors, the connection lives on.
	EXPECT_EQ(22u, c.Cmd(0, kNsBytes, 4096)) << "read past the end";
	EXPECT_EQ(28u, c.Cmd(1, kNsBytes - 512, 1024, Bytes(1024, 1)))
		<< "write past the end";
	EXPECT_EQ(22u, c.Cmd(0, 100, 4096)) << "unaligned";
	EXPECT_EQ(22u, c.Cmd(9, 0, 4096)) << "unknown command";
	EXPECT_EQ(28u, c.Cmd(4, kNsBytes - 4096, 8192)) << "trim past the end";
	ASSERT_EQ(0u, c.Cmd(0, at + 65536, 4096, {}, &back));
	EXPECT_TRUE(std::equal(back.begin(), back.end(), data.begin() + 65536));
	// An oversize WRITE: answered, then the connection is closed (its
	// 64 MiB payload is never sent).
	EXPECT_EQ(75u, c.Cmd(1, 0, 64u << 20)) << "EOVERFLOW";
	EXPECT_TRUE(c.Eof());

	// A wrong magic closes the connection.
	Client w;
	ASSERT_TRUE(w.Connect());
	w.Hello();
	w.Option(7, GoPayload("disk", {}));
	while (w.Reply(7) == 3) {
	}
	EXPECT_EQ(UINT32_MAX, w.Cmd(0, 0, 4096, {}, nullptr, 0, 0x12345678));
	EXPECT_TRUE(w.Eof());

	// EXPORT_NAME (with the 124 zero bytes) and DISC; ABORT.
	Client e;
	ASSERT_TRUE(e.Connect());
	Bytes g = e.Recv(18);
	ASSERT_EQ(18u, g.size());
	Bytes f;
	Put(&f, 1, 4); // fixed newstyle, zeroes wanted
	ASSERT_TRUE(e.Send(f));
	e.Option(1, Bytes{'d', 'i', 's', 'k'});
	Bytes x = e.Recv(134);
	ASSERT_EQ(134u, x.size());
	EXPECT_EQ(kNsBytes, Get(&x[0], 8));
	ASSERT_EQ(0u, e.Cmd(0, at + 65536, 4096, {}, &back));
	EXPECT_TRUE(std::equal(back.begin(), back.end(), data.begin() + 65536));
	Bytes disc;
	Put(&disc, 0x25609513, 4);
	Put(&disc, 0, 2);
	Put(&disc, 2, 2);
	Put(&disc, 1, 8);
	Put(&disc, 0, 8);
	Put(&disc, 0, 4);
	ASSERT_TRUE(e.Send(disc));
	EXPECT_TRUE(e.Eof());
	Client ab;
	ASSERT_TRUE(ab.Connect());
	ab.Hello();
	ab.Option(2, {});
	EXPECT_EQ(1u, ab.Reply(2));
	EXPECT_TRUE(ab.Eof());

	Stop(&p);
	std::string log = p.Output();
	EXPECT_EQ(0u, Stat(log, "nvme_errors")) << log;
	EXPECT_EQ(6u, Stat(log, "errors")) << log;
	EXPECT_EQ(2u, Stat(log, "trims")) << "one past the end" << log;
	EXPECT_EQ(1u, Stat(log, "write_zeroes")) << log;
	EXPECT_EQ(1u, Stat(log, "disconnects")) << log;
	EXPECT_EQ(3u, Stat(log, "conns"))
		<< "GO, wrong magic, EXPORT_NAME" << log;
}

INSTANTIATE_TEST_SUITE_P(WharfTarget, NbdSocket, ::testing::Values(kTargets[1]),
			 [](const ::testing::TestParamInfo<Target> &i) {
				 return std::string(i.param.name);
			 });

} // namespace
