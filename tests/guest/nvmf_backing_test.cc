// wharf-nvmf-tgt serving real storage to the guest kernel's nvme-rdma
// host: namespaces on null_blk (memory backed, 4K logical blocks), brd, a
// buffered file, a device-mapper device with an error segment, and a
// read-only brd disk, all through the target's io_uring.
//  - each namespace has the size and LBA size of what is under it, and
//    fio's crc32c verify passes across FUA (O_SYNC) writes and flushes;
//  - Write Zeroes (sent by nvme-cli) reads back as zeroes, and so does
//    a deallocate where the namespace promises it (a file), and neither
//    touches its neighbours;
//  - a read or write the device fails reaches the host as an NVMe error
//    on a controller that stays live (no reconnect), counted;
//  - a read-only device is a write-protected namespace;
//  - a storm of stats signals (SIGUSR1) leaves the target running;
//  - mkfs.ext4 and a forced fsck through the kernel host;
//  - no head-of-line blocking: a second host's writes held by a device
//    that takes seconds per I/O (dm-delay) do not hold up the
//    first host's reads of another namespace on the same shard.
// One target for the suite; every command is bounded by `timeout`.
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/nvmf_guest_util.h"

namespace
{

using namespace nvmf_guest;

const char kSub[] = "nqn.2024-01.io.wharf:backing";
const char kPort[] = "4444";
const char kImg[] = "/run/wharf-backing.img";
// The slow subsystem, its one host, and its device (dm-delay over ram3).
const char kSlowSub[] = "nqn.2024-01.io.wharf:backing-slow";
const char kHost2Id[] = "7e1f0c4e-5a2b-4c3d-9e8f-0a1b2c3d4e5f";
const std::string kHost2 =
	std::string("nqn.2014-08.org.nvmexpress:uuid:") + kHost2Id;
const char kSlowDm[] = "wharf-slow";
// Each of the slow device's I/Os completes this long after it starts,
// once the test sets it.
constexpr int kSlowMs = 15000;

// dm-delay over all of ram3 (64 MiB), every I/O held @ms.
std::string SlowTable(int ms)
{
	return "0 131072 delay /dev/ram3 0 " + std::to_string(ms);
}

// Loads the slow device's table with @ms of delay.
int SetSlowDelay(int ms, std::string *out)
{
	return Sh(std::string("dmsetup suspend ") + kSlowDm +
			  " && dmsetup reload " + kSlowDm + " --table \"" +
			  SlowTable(ms) + "\" && dmsetup resume " + kSlowDm,
		  out);
}

class Backing : public ::testing::Test
{
      protected:
	static Tgt *tgt_;
	static std::string hostnqn_;
	static std::string ctrl_;

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		std::string out;
		Teardown(); // what an earlier run may have left
		ASSERT_EQ(0,
			  Sh("modprobe -a nvme_rdma nvme_fabrics dm_mod", &out))
			<< out;
		// null_blk: 1 GiB, memory backed, 4 KiB logical blocks.
		ASSERT_EQ(0,
			  Sh("modprobe null_blk nr_devices=1 memory_backed=1 "
			     "gb=1 bs=4096",
			     &out))
			<< out;
		// brd: ram0 plain, ram1 under device-mapper, ram2 read-only,
		// ram3 under dm-delay; 64 MiB each.
		ASSERT_EQ(0, Sh("modprobe brd rd_nr=4 rd_size=65536", &out))
			<< out;
		// ram1 with sectors 8192..16383 (4..8 MiB) failing every I/O.
		// (mknodes: no udev in the guest to make /dev/mapper's node.)
		ASSERT_EQ(0, Sh("printf \"0 8192 linear /dev/ram1 0\\n"
				"8192 8192 error\\n"
				"16384 114688 linear /dev/ram1 16384\\n\" | "
				"dmsetup create wharf-bad && "
				"dmsetup mknodes wharf-bad && "
				"test -b /dev/mapper/wharf-bad",
				&out))
			<< out;
		ASSERT_EQ(0, Sh("blockdev --setro /dev/ram2", &out)) << out;
		// ram3 under dm-delay: no delay until the test sets one
		// (the host's partition scan reads it at connect).
		ASSERT_EQ(0, Sh(std::string("modprobe dm_delay && "
					    "dmsetup create ") +
					kSlowDm + " --table \"" + SlowTable(0) +
					"\" && dmsetup mknodes " + kSlowDm +
					" && test -b /dev/mapper/" + kSlowDm,
				&out))
			<< out;
		ASSERT_EQ(0, Sh(std::string("truncate -s 32M ") + kImg, &out))
			<< out;
		hostnqn_ = Trim(ReadFile("/etc/nvme/hostnqn"));
		ASSERT_FALSE(hostnqn_.empty()) << "no /etc/nvme/hostnqn";
		tgt_ = new Tgt();
		ASSERT_TRUE(tgt_->Start(
			"nvmf_backing",
			std::string("listen 198.18.0.1 ") + kPort +
				"\nshards 1\nio-queues 2\nsubsystem " + kSub +
				"\n  serial WHARFBACK\n"
				"  namespace 1 file:/dev/nullb0\n"
				"  namespace 2 file:/dev/ram0\n"
				"  namespace 3 file:" +
				kImg +
				"\n  namespace 4 file:/dev/mapper/wharf-bad\n"
				"  namespace 5 file:/dev/ram2\n"
				"  allow-host " +
				hostnqn_ + "\nsubsystem " + kSlowSub +
				"\n  serial WHARFSLOW\n"
				"  namespace 1 file:/dev/mapper/" +
				kSlowDm +
				"\n"
				"  allow-host " +
				kHost2 + "\n"));
		ASSERT_EQ(0, Sh("nvme connect -t rdma -a 198.18.0.1 -s " +
					std::string(kPort) + " -n " + kSub +
					" --hostnqn=" + hostnqn_,
				&out))
			<< out;
		ASSERT_TRUE(Poll([&] {
			std::vector<std::string> c =
				NvmeCtrls("subsysnqn", kSub);
			ctrl_ = c.empty() ? "" : c[0];
			return !ctrl_.empty() && Dev(5) != "";
		})) << "the kernel host found no namespace 5";
	}

	static void Teardown()
	{
		std::string ignored;
		SetSlowDelay(0, &ignored); // nothing held past the disconnect
		Sh(std::string("nvme disconnect -n ") + kSub);
		Sh(std::string("nvme disconnect -n ") + kSlowSub);
		if (tgt_) {
			EXPECT_TRUE(tgt_->Stop());
			delete tgt_;
			tgt_ = nullptr;
		}
		Sh("dmsetup remove wharf-bad 2>/dev/null");
		Sh(std::string("dmsetup remove ") + kSlowDm + " 2>/dev/null");
		Sh("rmmod brd null_blk 2>/dev/null");
		Sh(std::string("rm -f ") + kImg);
	}

	static void TearDownTestSuite()
	{
		if (wharf_guest::in_guest())
			Teardown();
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		ASSERT_NE(nullptr, tgt_);
		ASSERT_TRUE(tgt_->Alive()) << tgt_->Log();
	}

	// The host's block device (nvmeXnY) of namespace @nsid of
	// subsystem @sub, or "".
	static std::string Dev(uint32_t nsid, const char *sub = kSub)
	{
		std::string found;
		DIR *d = opendir("/sys/block");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			std::string n = e->d_name;
			// nvmeXnY; not a hidden multipath path (nvmeXcZnY).
			if (n.rfind("nvme", 0) != 0 ||
			    n.find('c', 4) != std::string::npos)
				continue;
			std::string base = "/sys/block/" + n;
			if (Trim(ReadFile(base + "/device/subsysnqn")) != sub &&
			    Trim(ReadFile(base + "/device/device/subsysnqn")) !=
				    sub &&
			    Trim(ReadFile(base + "/subsysnqn")) != sub)
				continue;
			if (Trim(ReadFile(base + "/nsid")) ==
			    std::to_string(nsid))
				found = n;
		}
		if (d)
			closedir(d);
		return found;
	}

	static uint64_t Num(const std::string &path)
	{
		return std::strtoull(ReadFile(path).c_str(), nullptr, 10);
	}

	static std::string Fio(const std::string &dev, const std::string &more)
	{
		return "fio --name=v --filename=/dev/" + dev +
		       " --ioengine=libaio --direct=1 --bs=4k --iodepth=8 "
		       "--size=2M " +
		       more;
	}
};

Tgt *Backing::tgt_ = nullptr;
std::string Backing::hostnqn_;
std::string Backing::ctrl_;

TEST_F(Backing, EachNamespaceHasTheGeometryOfItsDevice)
{
	struct {
		uint32_t nsid;
		uint64_t bytes;
		uint32_t lbs;
		const char *ro;
	} want[] = {
		{1, 1ull << 30, 4096, "0"}, {2, 64ull << 20, 512, "0"},
		{3, 32ull << 20, 512, "0"}, {4, 64ull << 20, 512, "0"},
		{5, 64ull << 20, 512, "1"},
	};
	for (const auto &w : want) {
		std::string dev = Dev(w.nsid);
		ASSERT_FALSE(dev.empty()) << "nsid " << w.nsid;
		std::string b = "/sys/block/" + dev;
		EXPECT_EQ(w.bytes, Num(b + "/size") * 512) << dev;
		EXPECT_EQ(w.lbs, Num(b + "/queue/logical_block_size")) << dev;
		EXPECT_EQ(w.ro, Trim(ReadFile(b + "/ro"))) << dev;
	}
	// Writes pass a volatile cache (the file's page cache): the host
	// sends flushes.
	EXPECT_EQ("write back", Trim(ReadFile("/sys/block/" + Dev(3) +
					      "/queue/write_cache")));
}

TEST_F(Backing, FioVerifyAcrossFuaAndFlushOnEveryKind)
{
	std::map<std::string, uint64_t> before = tgt_->Stats();
	for (uint32_t nsid : {1u, 2u, 3u}) {
		std::string dev = Dev(nsid), out;
		ASSERT_FALSE(dev.empty());
		// O_SYNC: every write is FUA; fdatasync every 8 writes: Flush.
		ASSERT_EQ(0, Sh(Fio(dev, "--rw=randwrite --sync=1 "
					 "--fdatasync=8 --verify=crc32c "
					 "--do_verify=1 --verify_fatal=1"),
				&out, 300))
			<< dev << "\n"
			<< out;
		EXPECT_NE(std::string::npos, out.find("err= 0")) << out;
	}
	std::map<std::string, uint64_t> after = tgt_->Stats();
	// The I/O went through the rings, on the registered buffers.
	EXPECT_GT(after["backend_ops"], before["backend_ops"] + 1000);
	EXPECT_GT(after["backend_fixed"], before["backend_fixed"]);
	EXPECT_EQ(before["backend_errors"], after["backend_errors"]);
}

TEST_F(Backing, WriteZeroesAndDeallocateReadBackZeroes)
{
	// The file's punched hole reads as zeroes, and its namespace says
	// so (DLFEAT bit 0); brd has no zeroing discard, so deallocate is the
	// hint it is there: the data stays, and DLFEAT does not promise.
	for (uint32_t nsid : {2u, 3u}) {
		std::string dev = Dev(nsid), out;
		ASSERT_FALSE(dev.empty());
		bool zeroes = nsid == 3;
		ASSERT_EQ(0, Sh("nvme id-ns /dev/" + dev, &out)) << out;
		size_t at = out.find("dlfeat");
		ASSERT_NE(std::string::npos, at) << out;
		int dlfeat = std::atoi(out.c_str() + out.find(':', at) + 1);
		EXPECT_EQ(zeroes, (dlfeat & 1) != 0) << dev << ": " << dlfeat;
		// 1 MiB of 0xA5 in four 256 KiB regions; zero the second and
		// deallocate the third (a TCG guest reads them byte by byte).
		ASSERT_EQ(0, Sh("tr \"\\000\" \"\\245\" </dev/zero | "
				"dd of=/dev/" +
					dev +
					" bs=256k count=4 oflag=direct "
					"iflag=fullblock",
				&out))
			<< out;
		ASSERT_EQ(0,
			  Sh("nvme write-zeroes /dev/" + dev + " -s 512 -c 511",
			     &out))
			<< out;
		ASSERT_EQ(0, Sh("nvme dsm /dev/" + dev + " -d -s 1024 -b 512",
				&out))
			<< out;
		auto region = [&](int k) {
			std::string o;
			Sh("dd if=/dev/" + dev +
				   " bs=256k count=1 iflag=direct status=none "
				   "skip=" +
				   std::to_string(k) +
				   " | od -An -v -tx1 | "
				   "sort -u | head -3",
			   &o);
			return o;
		};
		EXPECT_EQ(" a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5\n",
			  region(0))
			<< dev;
		EXPECT_EQ(" 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n",
			  region(1))
			<< dev;
		EXPECT_EQ(zeroes ? " 00 00 00 00 00 00 00 00 00 00 00 00 00 "
				   "00 00 00\n"
				 : " a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 "
				   "a5 a5 a5\n",
			  region(2))
			<< dev;
		EXPECT_EQ(" a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5 a5\n",
			  region(3))
			<< dev;
	}
}

TEST_F(Backing, ADeviceErrorIsAnNvmeErrorOnALiveController)
{
	std::string dev = Dev(4), out;
	ASSERT_FALSE(dev.empty());
	std::map<std::string, uint64_t> before = tgt_->Stats();
	// 4 MiB in: the error segment.
	EXPECT_NE(0, Sh("dd if=/dev/" + dev +
				" of=/dev/null bs=4k count=1 skip=1024 "
				"iflag=direct",
			&out))
		<< out;
	EXPECT_NE(0, Sh("nvme write /dev/" + dev +
				" -s 9000 -c 0 -z 512 -d /dev/zero",
			&out))
		<< out;
	std::map<std::string, uint64_t> after = tgt_->Stats();
	EXPECT_GT(after["media_errors"], before["media_errors"]);
	EXPECT_GT(after["backend_errors"], before["backend_errors"]);
	// The same controller, never reset, and the good blocks still read.
	EXPECT_EQ("live",
		  Trim(ReadFile("/sys/class/nvme/" + ctrl_ + "/state")));
	EXPECT_EQ(before["accepted"], after["accepted"]);
	EXPECT_EQ(0, Sh("dd if=/dev/" + dev +
				" of=/dev/null bs=4k count=16 skip=0 "
				"iflag=direct",
			&out))
		<< out;
}

TEST_F(Backing, AReadOnlyDeviceIsWriteProtected)
{
	std::string dev = Dev(5), out;
	ASSERT_FALSE(dev.empty());
	// Past the block layer's own read-only check, through the
	// namespace's generic device (ngXnY): the command itself.
	std::string ng = "ng" + dev.substr(4);
	EXPECT_NE(0,
		  Sh("nvme write /dev/" + ng + " -s 0 -c 0 -z 512 -d /dev/zero",
		     &out))
		<< out;
	// libnvme's text: "Namespace is Write Protected: ..."
	EXPECT_NE(std::string::npos, out.find("Write Protected")) << out;
	EXPECT_EQ(0, Sh("dd if=/dev/" + dev +
				" of=/dev/null bs=4k count=4 iflag=direct",
			&out))
		<< out;
}

// SIGUSR1 asks for a stats line. liburcu's hash table resize worker (the
// cm's connection tables) does not block it; before the target forwarded
// it from there, one that arrived while the main thread was printing
// the last line ended the target.
TEST_F(Backing, AStormOfStatsSignalsLeavesTheTargetRunning)
{
	pid_t pid = tgt_->Pid();
	ASSERT_GT(pid, 0);
	for (int i = 0; i < 2000; i++)
		ASSERT_EQ(0, kill(pid, SIGUSR1)) << i;
	EXPECT_TRUE(tgt_->Alive()) << tgt_->UnexpectedDeath();
	EXPECT_FALSE(tgt_->Stats().empty()) << tgt_->UnexpectedDeath();
	EXPECT_TRUE(tgt_->Alive()) << tgt_->UnexpectedDeath();
}

TEST_F(Backing, MkfsAndFsckThroughTheKernelHost)
{
	std::string dev = Dev(2), out;
	ASSERT_FALSE(dev.empty());
	ASSERT_EQ(0, Sh("mkfs.ext4 -F -q /dev/" + dev, &out, 300)) << out;
	EXPECT_EQ(0, Sh("e2fsck -fn /dev/" + dev, &out, 300)) << out;
}

} // namespace

namespace
{

// The slow device holds the second host's writes for kSlowMs each; the
// first host's QD1 reads of the RAM namespace, on the same shard, must
// all complete while every one of those writes is still in the device.
// A target that served a namespace's I/O in order behind another's (one
// backend I/O at a time, or one queue for every namespace) would finish
// no read before the writes (seconds); here the reads take milliseconds
// each and the writes are checked to be still held when they end.
TEST_F(Backing, ASlowNamespaceDoesNotHoldUpAnotherHostsReads)
{
	constexpr int kHeld = 32;
	std::string out;
	ASSERT_EQ(0, Sh(std::string("nvme connect -t rdma -a 198.18.0.1 -s ") +
				kPort + " -n " + kSlowSub + " --hostnqn=" +
				kHost2 + " --hostid=" + kHost2Id,
			&out))
		<< out;
	std::string slow;
	ASSERT_TRUE(Poll([&] {
		slow = Dev(1, kSlowSub);
		return !slow.empty();
	})) << "the second host found no slow namespace";
	std::string fast = Dev(2);
	ASSERT_FALSE(fast.empty());
	uint64_t base = tgt_->Stats()["backend_inflight"];
	ASSERT_EQ(0, SetSlowDelay(kSlowMs, &out)) << out;

	// The second host: kHeld writes at once, then nothing until they
	// complete (--number_ios: one batch).
	wharf_guest::Proc neigh;
	neigh.Start({"fio", "--name=slow", "--filename=/dev/" + slow,
		     "--ioengine=libaio", "--direct=1", "--bs=4k",
		     "--rw=randwrite", "--iodepth=" + std::to_string(kHeld),
		     "--iodepth_batch_submit=" + std::to_string(kHeld),
		     "--size=16M", "--number_ios=" + std::to_string(kHeld)},
		    "/run/wharf-backing-neigh.log");
	struct Reap {
		wharf_guest::Proc &p;
		~Reap()
		{
			if (p.pid > 0)
				p.Wait(wharf_guest::Clock::now() +
				       std::chrono::seconds(120));
		}
	} reap{neigh};
	std::map<std::string, uint64_t> s;
	ASSERT_TRUE(Poll([&] {
		s = tgt_->Stats();
		return s["backend_inflight"] >= base + kHeld;
	})) << "the slow writes are not all in the device at once (the "
	       "shard serializes its backend?): backend_inflight="
	    << s["backend_inflight"];

	// The first host, meanwhile: 200 reads, one at a time.
	ASSERT_EQ(0, Sh("fio --name=fast --filename=/dev/" + fast +
				" --ioengine=libaio --direct=1 --bs=4k "
				"--rw=randread --iodepth=1 --size=16M "
				"--number_ios=200",
			&out, 120))
		<< out;
	EXPECT_NE(std::string::npos, out.find("err= 0")) << out;
	s = tgt_->Stats();
	EXPECT_GE(s["backend_inflight"], base + kHeld)
		<< "the reads ended after the slow writes: head-of-line "
		   "blocking (or a guest slower than "
		<< kSlowMs / 1000 << " s for 200 reads)";

	// And the slow writes complete, not time out: nothing dropped.
	ASSERT_TRUE(neigh.Wait(wharf_guest::Clock::now() +
			       std::chrono::seconds(120)))
		<< neigh.Output();
	neigh.pid = -1;
	EXPECT_TRUE(neigh.Exited0()) << neigh.Output();
	EXPECT_NE(std::string::npos, neigh.Output().find("err= 0"))
		<< neigh.Output();
	EXPECT_EQ(0, Sh(std::string("nvme disconnect -n ") + kSlowSub, &out))
		<< out;
}

} // namespace
