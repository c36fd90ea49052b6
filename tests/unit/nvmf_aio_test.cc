// The target's io_uring engine on a real ring over a temporary file, on
// an app-driven shard polled by the test: reads and writes land, the
// FIFO holds what does not fit and keeps its order, malformed operations
// fail later and never inside submit, the registered region is used for
// the buffers in it and only for those, fallocate and fsync complete, and
// destroy completes what is left.
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <vector>

#include "tests/unit/core_test_util.h"

extern "C" {
#include "targets/nvmf/aio.h"
}

namespace
{

using wharf_test::MakeAppDriven;

// A ring of DEPTH, or the test skipped where io_uring is unavailable
// (seccomp, kernel.io_uring_disabled) and failed on any other error.
#define START_OR_SKIP(depth)                                                   \
	do {                                                                   \
		int rc_ = Start(depth);                                        \
		if (rc_ == -ENOSYS || rc_ == -EPERM)                           \
			GTEST_SKIP() << "io_uring unavailable here";           \
		ASSERT_EQ(0, rc_);                                             \
	} while (0)

struct Done {
	nvmf_aio_op *op;
	int res;
};

class NvmfAio : public ::testing::Test
{
      protected:
	wharf_ctx *ctx_ = nullptr;
	wharf_shard *shard_ = nullptr;
	nvmf_aio *aio_ = nullptr;
	std::vector<Done> done_;
	char path_[64] = "/tmp/nvmf_aio_testXXXXXX";
	int fd_ = -1;

	static void OnDone(nvmf_aio_op *op, int res, void *arg)
	{
		static_cast<NvmfAio *>(arg)->done_.push_back({op, res});
	}

	void SetUp() override
	{
		fd_ = mkstemp(path_);
		ASSERT_GE(fd_, 0);
		ASSERT_EQ(0, ftruncate(fd_, 1 << 20));
		ctx_ = MakeAppDriven(1);
		ASSERT_NE(nullptr, ctx_);
		shard_ = wharf_ctx_shard(ctx_, 0);
	}

	// Creates the ring: 0 or -errno.
	int Start(unsigned depth)
	{
		return nvmf_aio_create(shard_, depth, OnDone, this, &aio_);
	}

	void TearDown() override
	{
		EXPECT_EQ(0, nvmf_aio_destroy(aio_, 5000));
		if (ctx_) {
			EXPECT_EQ(0, wharf_ctx_destroy(ctx_));
		}
		if (fd_ >= 0)
			close(fd_);
		unlink(path_);
	}

	// Poll until @n completions are in (10 s at most).
	void WaitFor(size_t n)
	{
		uint64_t deadline = wharf_now_ms() + 10000;

		while (done_.size() < n && wharf_now_ms() < deadline)
			wharf_shard_poll(shard_, 64);
		ASSERT_EQ(n, done_.size());
	}

	static nvmf_aio_op Op(uint8_t kind, int fd, void *buf, uint32_t len,
			      uint64_t off)
	{
		nvmf_aio_op op = {};
		op.kind = kind;
		op.fd = fd;
		op.buf = buf;
		op.len = len;
		op.off = off;
		return op;
	}

	nvmf_aio_stats Stats()
	{
		nvmf_aio_stats s;
		nvmf_aio_get_stats(aio_, &s);
		return s;
	}
};

TEST_F(NvmfAio, WritesBeyondTheDepthWaitAndKeepTheirOrder)
{
	START_OR_SKIP(1);
	// One at a time in the kernel: completions come in submission order
	// only if the FIFO hands them over in that order.
	std::vector<std::vector<uint8_t>> data(16);
	std::vector<nvmf_aio_op> ops(16);
	for (size_t i = 0; i < ops.size(); i++) {
		data[i].assign(4096, (uint8_t)(i + 1));
		ops[i] =
			Op(NVMF_AIO_WRITE, fd_, data[i].data(), 4096, i * 4096);
		nvmf_aio_submit(aio_, &ops[i]);
	}
	EXPECT_TRUE(done_.empty()); // never from within submit
	EXPECT_EQ(16u, nvmf_aio_busy(aio_));
	WaitFor(16);
	for (size_t i = 0; i < done_.size(); i++) {
		EXPECT_EQ(&ops[i], done_[i].op) << i;
		EXPECT_EQ(4096, done_[i].res) << i;
	}
	nvmf_aio_stats s = Stats();
	EXPECT_EQ(16u, s.completed);
	EXPECT_EQ(15u, s.waited);
	EXPECT_EQ(0u, s.errors);
	EXPECT_EQ(0u, nvmf_aio_busy(aio_));
	for (size_t i = 0; i < data.size(); i++) {
		std::vector<uint8_t> back(4096);
		ASSERT_EQ(4096, pread(fd_, back.data(), 4096, i * 4096));
		EXPECT_EQ(data[i], back) << i;
	}
}

TEST_F(NvmfAio, MalformedOperationsFailInTheNextPass)
{
	START_OR_SKIP(8);
	uint8_t b[512];
	nvmf_aio_op bad_fd = Op(NVMF_AIO_READ, -1, b, 512, 0);
	nvmf_aio_op no_len = Op(NVMF_AIO_WRITE, fd_, b, 0, 0);
	nvmf_aio_op bad_kind = Op(99, fd_, b, 512, 0);
	nvmf_aio_op bad_falloc = Op(NVMF_AIO_FALLOCATE, fd_, nullptr, 0, 0);
	for (nvmf_aio_op *op : {&bad_fd, &no_len, &bad_kind, &bad_falloc})
		nvmf_aio_submit(aio_, op);
	EXPECT_TRUE(done_.empty());
	WaitFor(4);
	for (const Done &d : done_)
		EXPECT_EQ(-EINVAL, d.res);
	EXPECT_EQ(4u, Stats().errors);
}

TEST_F(NvmfAio, KernelErrorsComeBackAsNegativeErrno)
{
	START_OR_SKIP(8);
	int rfd = open(path_, O_RDONLY | O_CLOEXEC);
	ASSERT_GE(rfd, 0);
	uint8_t b[512] = {1};
	nvmf_aio_op w = Op(NVMF_AIO_WRITE, rfd, b, 512, 0);
	nvmf_aio_submit(aio_, &w);
	WaitFor(1);
	EXPECT_EQ(-EBADF, done_[0].res);
	close(rfd);
}

TEST_F(NvmfAio, TheRegisteredRegionIsUsedForItsBuffersOnly)
{
	START_OR_SKIP(8);
	void *region = nullptr;
	// 128 KiB allocated, the first 64 KiB registered.
	ASSERT_EQ(0, posix_memalign(&region, 4096, 128 * 1024));
	int rc = nvmf_aio_set_region(aio_, region, 64 * 1024);
	if (rc == -ENOMEM) {
		free(region);
		GTEST_SKIP() << "RLIMIT_MEMLOCK too small to register 64 KiB";
	}
	ASSERT_EQ(0, rc);
	EXPECT_EQ(-EBUSY, nvmf_aio_set_region(aio_, region, 4096));
	uint8_t *r = static_cast<uint8_t *>(region);
	memset(r, 0x5A, 8192);
	std::vector<uint8_t> outside(4096, 0xA5);
	nvmf_aio_op in = Op(NVMF_AIO_WRITE, fd_, r + 4096, 4096, 0);
	in.dsync = true;
	nvmf_aio_op out = Op(NVMF_AIO_WRITE, fd_, outside.data(), 4096, 4096);
	// Starts inside, ends past the region: the plain path.
	nvmf_aio_op tail = Op(NVMF_AIO_READ, fd_, r + 60 * 1024, 8192, 0);
	nvmf_aio_submit(aio_, &in);
	nvmf_aio_submit(aio_, &out);
	WaitFor(2);
	EXPECT_EQ(4096, done_[0].res);
	EXPECT_EQ(4096, done_[1].res);
	EXPECT_EQ(1u, Stats().fixed);
	nvmf_aio_op back = Op(NVMF_AIO_READ, fd_, r + 32 * 1024, 8192, 0);
	nvmf_aio_submit(aio_, &back);
	WaitFor(3);
	EXPECT_EQ(8192, done_[2].res);
	EXPECT_EQ(2u, Stats().fixed);
	EXPECT_EQ(0x5A, r[32 * 1024]);
	EXPECT_EQ(0xA5, r[36 * 1024]);
	// [60K, 68K) is not wholly registered: as fixed, the kernel would
	// fail it (EFAULT); it goes the plain way and succeeds.
	nvmf_aio_submit(aio_, &tail);
	WaitFor(4);
	EXPECT_EQ(8192, done_[3].res);
	EXPECT_EQ(2u, Stats().fixed);
	free(region);
}

TEST_F(NvmfAio, FallocateAndFsync)
{
	START_OR_SKIP(4);
	std::vector<uint8_t> d(8192, 0x77);
	ASSERT_EQ(8192, pwrite(fd_, d.data(), d.size(), 0));
	nvmf_aio_op punch = {};
	punch.kind = NVMF_AIO_FALLOCATE;
	punch.fd = fd_;
	punch.mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	punch.off = 4096;
	punch.flen = 4096;
	nvmf_aio_op sync = {};
	sync.kind = NVMF_AIO_FSYNC;
	sync.fd = fd_;
	nvmf_aio_submit(aio_, &punch);
	nvmf_aio_submit(aio_, &sync);
	WaitFor(2);
	EXPECT_EQ(0, done_[0].res);
	EXPECT_EQ(0, done_[1].res);
	std::vector<uint8_t> back(8192);
	ASSERT_EQ(8192, pread(fd_, back.data(), back.size(), 0));
	EXPECT_EQ(0x77, back[4095]);
	EXPECT_EQ(std::vector<uint8_t>(4096, 0),
		  std::vector<uint8_t>(back.begin() + 4096, back.end()));
}

TEST_F(NvmfAio, DestroyCompletesWhatIsLeft)
{
	START_OR_SKIP(2);
	std::vector<uint8_t> b(4096 * 8);
	std::vector<nvmf_aio_op> ops(8);
	for (size_t i = 0; i < ops.size(); i++) {
		ops[i] = Op(NVMF_AIO_READ, fd_, b.data() + i * 4096, 4096,
			    i * 4096);
		nvmf_aio_submit(aio_, &ops[i]);
	}
	EXPECT_EQ(0, nvmf_aio_destroy(aio_, 5000));
	aio_ = nullptr;
	EXPECT_EQ(8u, done_.size());
	for (const Done &d : done_)
		EXPECT_EQ(4096, d.res);
}

TEST(NvmfAioArgs, BadArguments)
{
	nvmf_aio *a = nullptr;
	auto cb = [](nvmf_aio_op *, int, void *) {};
	EXPECT_EQ(-EINVAL, nvmf_aio_create(nullptr, 8, cb, nullptr, &a));
	wharf_ctx *ctx = MakeAppDriven(1);
	ASSERT_NE(nullptr, ctx);
	wharf_shard *sh = wharf_ctx_shard(ctx, 0);
	EXPECT_EQ(-EINVAL, nvmf_aio_create(sh, 0, cb, nullptr, &a));
	EXPECT_EQ(-EINVAL, nvmf_aio_create(sh, 8192, cb, nullptr, &a));
	EXPECT_EQ(-EINVAL, nvmf_aio_create(sh, 8, nullptr, nullptr, &a));
	EXPECT_EQ(-EINVAL, nvmf_aio_create(sh, 8, cb, nullptr, nullptr));
	EXPECT_EQ(-EINVAL, nvmf_aio_set_region(nullptr, &a, 1));
	EXPECT_EQ(0, nvmf_aio_destroy(nullptr, 0));
	EXPECT_EQ(0, wharf_ctx_destroy(ctx));
}

} // namespace
