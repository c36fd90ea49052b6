// NVM commands on file namespaces through the queue's io_uring, the way
// the RDMA binding drives them: every command that touches the file
// returns NVMF_ACT_ASYNC and completes only through the engine's callback
// and nvmf_req_backend_done(); in-capsule writes are copied out first
// (NVMF_ACT_COPY); Read / Write / FUA / Flush (one and all) / Write
// Zeroes / Dataset Management land in the file; a read past a shrunk
// file's end reads zeroes; a file-size limit reaches the host as Capacity
// Exceeded, counted.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tests/unit/core_test_util.h"
#include "tests/unit/nvmf_test_util.h"

namespace
{

using namespace nvmf_test;

class NvmfIoUring : public NvmfTest
{
      protected:
	wharf_ctx *ctx_ = nullptr;
	wharf_shard *shard_ = nullptr;
	nvmf_queue *admin_ = nullptr, *io_ = nullptr;
	uint16_t cntlid_ = 0;
	uint16_t cid_ = 100;
	char path1_[64] = "/tmp/nvmf_uring_aXXXXXX";
	char path2_[64] = "/tmp/nvmf_uring_bXXXXXX";
	std::vector<std::pair<nvmf_aio_op *, int>> done_;
	unsigned async_steps_ = 0;

	static void OnDone(nvmf_aio_op *op, int res, void *arg)
	{
		static_cast<NvmfIoUring *>(arg)->done_.push_back({op, res});
	}

	static void MakeFile(char *path, off_t size)
	{
		int fd = mkstemp(path);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(0, ftruncate(fd, size));
		close(fd);
	}

	void SetUp() override
	{
		MakeFile(path1_, 1 << 20);
		MakeFile(path2_, 1 << 20);
		ctx_ = wharf_test::MakeAppDriven(1);
		ASSERT_NE(nullptr, ctx_);
		shard_ = wharf_ctx_shard(ctx_, 0);
		int rc = nvmf_aio_create(shard_, 4, OnDone, this, &aio_);
		if (rc == -ENOSYS || rc == -EPERM)
			GTEST_SKIP() << "io_uring unavailable";
		ASSERT_EQ(0, rc);
		wait_backend_ = [this](nvmf_queue *q, Slot *s) {
			return Wait(q, s);
		};
		Create(std::string("listen 10.0.0.1\nqueue-depth 64\n"
				   "subsystem ") +
		       kSub + "\n namespace 1 file:" + path1_ +
		       " block=4096\n namespace 2 file:" + path2_ +
		       "\n namespace 3 ram:64K\n allow-any-host\n");
		admin_ = Admin(kSub, &cntlid_);
		io_ = Io(1, cntlid_, 32);
	}

	void TearDown() override
	{
		NvmfTest::TearDown();
		EXPECT_EQ(0, nvmf_aio_destroy(aio_, 5000));
		if (ctx_) {
			EXPECT_EQ(0, wharf_ctx_destroy(ctx_));
		}
		unlink(path1_);
		unlink(path2_);
	}

	// The binding's part: poll the shard until @s's operation is back,
	// then hand it to the core.
	nvmf_act Wait(nvmf_queue *q, Slot *s)
	{
		uint64_t deadline = wharf_now_ms() + 10000;

		async_steps_++;
		while (wharf_now_ms() < deadline) {
			for (size_t i = 0; i < done_.size(); i++) {
				if (done_[i].first != &s->req.aio)
					continue;
				int res = done_[i].second;
				done_.erase(done_.begin() + (long)i);
				return nvmf_req_backend_done(q, &s->req, res);
			}
			wharf_shard_poll(shard_, 64);
		}
		// The kernel still owns the operation and the stack buffer it
		// points into: going on would be a use after free.
		fprintf(stderr, "the backend never completed an operation\n");
		abort();
	}

	Capsule Rw(uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb)
	{
		Capsule c = Cmd(opc, cid_++, nsid);
		c.sqe.cdw10 = (uint32_t)slba;
		c.sqe.cdw11 = (uint32_t)(slba >> 32);
		c.sqe.cdw12 = nlb - 1;
		return c;
	}

	static std::vector<uint8_t> Pattern(size_t n, uint8_t seed)
	{
		std::vector<uint8_t> v(n);
		for (size_t i = 0; i < n; i++)
			v[i] = (uint8_t)(seed ^ (i * 7));
		return v;
	}

	static std::vector<uint8_t> FileBytes(const char *path, off_t off,
					      size_t n)
	{
		std::vector<uint8_t> v(n, 0xEE);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		EXPECT_GE(fd, 0);
		EXPECT_EQ((ssize_t)n, pread(fd, v.data(), n, off));
		close(fd);
		return v;
	}

	nvmf_req Read(uint32_t nsid, uint64_t slba, std::vector<uint8_t> *d,
		      uint32_t bytes, uint32_t bs)
	{
		d->assign(bytes, 0xEE);
		Capsule c = Rw(NVME_IO_READ, nsid, slba, bytes / bs);
		SetKeyed(&c.sqe, d->data(), bytes);
		return Exec(io_, c);
	}
};

TEST_F(NvmfIoUring, KeyedAndInCapsuleWritesReachTheFileThroughTheRing)
{
	std::vector<uint8_t> in = Pattern(8192, 3), icd = Pattern(4096, 9);
	Capsule w = Rw(NVME_IO_WRITE, 1, 2, 2);
	SetKeyed(&w.sqe, in.data(), 8192);
	Slot s;
	// The data comes by RDMA READ first; then the write goes async.
	ASSERT_EQ(NVMF_ACT_READ,
		  nvmf_req_recv(io_, &s.req, w.Bytes().data(), 64));
	s.buf = in;
	s.req.data = s.buf.data();
	ASSERT_EQ(NVMF_ACT_ASYNC, nvmf_req_exec(io_, &s.req));
	EXPECT_EQ(1u, Stats().reqs);
	ASSERT_EQ(NVMF_ACT_RESPOND, Wait(io_, &s));
	EXPECT_EQ(0, Status(s.req));
	EXPECT_EQ(in, FileBytes(path1_, 2 * 4096, 8192));

	// In-capsule data must outlive the capsule: COPY, then ASYNC.
	Capsule ic = Rw(NVME_IO_WRITE, 1, 7, 1);
	ic.icd = icd;
	SetInCapsule(&ic.sqe, 0, 4096);
	std::vector<uint8_t> bytes = ic.Bytes();
	Slot t;
	ASSERT_EQ(NVMF_ACT_COPY,
		  nvmf_req_recv(io_, &t.req, bytes.data(), bytes.size()));
	t.buf.assign((uint8_t *)t.req.data, (uint8_t *)t.req.data + 4096);
	memset(bytes.data() + 64, 0, 4096); // the capsule buffer is reused
	t.req.data = t.buf.data();
	ASSERT_EQ(NVMF_ACT_ASYNC, nvmf_req_exec(io_, &t.req));
	ASSERT_EQ(NVMF_ACT_RESPOND, Wait(io_, &t));
	EXPECT_EQ(icd, FileBytes(path1_, 7 * 4096, 4096));

	std::vector<uint8_t> out;
	ASSERT_EQ(0, Status(Read(1, 2, &out, 8192, 4096)));
	EXPECT_EQ(in, out);
	// A RAM namespace on the same queue never goes async.
	async_steps_ = 0;
	ASSERT_EQ(0, Status(Read(3, 0, &out, 4096, 512)));
	EXPECT_EQ(0u, async_steps_);
}

TEST_F(NvmfIoUring, FuaFlushOneAndFlushAll)
{
	std::vector<uint8_t> in = Pattern(4096, 5);
	Capsule w = Rw(NVME_IO_WRITE, 1, 0, 1);
	w.sqe.cdw12 |= NVME_RW_FUA;
	SetKeyed(&w.sqe, in.data(), 4096);
	EXPECT_EQ(0, Status(Exec(io_, w)));
	EXPECT_EQ(in, FileBytes(path1_, 0, 4096));
	async_steps_ = 0;
	EXPECT_EQ(0, Status(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, 2))));
	EXPECT_EQ(1u, async_steps_);
	// NSID FFFFFFFFh: the two files one after the other (RAM in place).
	async_steps_ = 0;
	EXPECT_EQ(0,
		  Status(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, NVME_NSID_ALL))));
	EXPECT_EQ(2u, async_steps_);
}

TEST_F(NvmfIoUring, WriteZeroesAndDatasetManagement)
{
	std::vector<uint8_t> ones(64 * 1024, 0xFF);
	Capsule w = Rw(NVME_IO_WRITE, 2, 0, 128); // 512-byte LBAs
	SetKeyed(&w.sqe, ones.data(), (uint32_t)ones.size());
	ASSERT_EQ(0, Status(Exec(io_, w)));

	Capsule wz = Rw(NVME_IO_WRITE_ZEROES, 2, 8, 8);
	ASSERT_EQ(0, Status(Exec(io_, wz)));
	Capsule wzd = Rw(NVME_IO_WRITE_ZEROES, 2, 24, 8);
	wzd.sqe.cdw12 |= NVME_RW_DEAC;
	ASSERT_EQ(0, Status(Exec(io_, wzd)));

	// Three ranges, one of them empty (skipped), in the capsule.
	nvme_dsm_range r[3] = {};
	r[0].slba = 40;
	r[0].nlb = 8;
	r[1].slba = 60;
	r[1].nlb = 0;
	r[2].slba = 100;
	r[2].nlb = 4;
	Capsule d = Cmd(NVME_IO_DSM, cid_++, 2);
	d.sqe.cdw10 = 2; // NR, 0's based
	d.sqe.cdw11 = NVME_DSM_AD;
	d.icd.assign((uint8_t *)r, (uint8_t *)r + sizeof(r));
	SetInCapsule(&d.sqe, 0, sizeof(r));
	async_steps_ = 0;
	ASSERT_EQ(0, Status(Exec(io_, d)));
	EXPECT_EQ(2u, async_steps_); // one per non-empty range

	std::vector<uint8_t> f = FileBytes(path2_, 0, 64 * 1024);
	auto zero = [&](size_t lba, size_t n) {
		for (size_t i = lba * 512; i < (lba + n) * 512; i++)
			if (f[i])
				return false;
		return true;
	};
	EXPECT_TRUE(zero(8, 8));
	EXPECT_TRUE(zero(24, 8));
	EXPECT_TRUE(zero(40, 8));
	EXPECT_TRUE(zero(100, 4));
	EXPECT_EQ(0xFF, f[8 * 512 - 1]);
	EXPECT_EQ(0xFF, f[16 * 512]);
	EXPECT_EQ(0xFF, f[60 * 512]);
	EXPECT_EQ(0xFF, f[104 * 512]);
}

TEST_F(NvmfIoUring, ReadPastAShrunkFileReadsZeroes)
{
	std::vector<uint8_t> in = Pattern(8192, 1), out;
	Capsule w = Rw(NVME_IO_WRITE, 1, 100, 2);
	SetKeyed(&w.sqe, in.data(), 8192);
	ASSERT_EQ(0, Status(Exec(io_, w)));
	// Cut the file in the middle of those two blocks.
	ASSERT_EQ(0, truncate(path1_, 100 * 4096 + 4096));
	ASSERT_EQ(0, Status(Read(1, 100, &out, 8192, 4096)));
	EXPECT_EQ(0, memcmp(out.data(), in.data(), 4096));
	EXPECT_EQ(std::vector<uint8_t>(4096, 0),
		  std::vector<uint8_t>(out.begin() + 4096, out.end()));
}

TEST_F(NvmfIoUring, AFileSizeLimitIsCapacityExceeded)
{
	struct rlimit old, lim;
	ASSERT_EQ(0, getrlimit(RLIMIT_FSIZE, &old));
	lim = old;
	lim.rlim_cur = 512 * 1024;
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &lim));
	std::vector<uint8_t> in = Pattern(4096, 2);
	Capsule w = Rw(NVME_IO_WRITE, 1, 200, 1); // at 800 KiB
	SetKeyed(&w.sqe, in.data(), 4096);
	nvmf_req r = Exec(io_, w);
	ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &old));
	signal(SIGXFSZ, prev);
	EXPECT_EQ(NVME_SCT_GENERIC, Sct(r));
	EXPECT_EQ(NVME_SC_CAP_EXCEEDED, Sc(r));
	EXPECT_TRUE(Dnr(r));
	EXPECT_EQ(1u, Stats().capacity_errors);
	EXPECT_EQ(0u, Stats().media_errors);
}

} // namespace
