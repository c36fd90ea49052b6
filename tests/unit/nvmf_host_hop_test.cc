// The NVMe-oF host's off-shard I/O message and registration bounds
// (nvmf_host/hop.h): a message carries the whole command, and a
// Dataset Management's ranges as its own copy; a buffer is inside a
// registration only when every byte is, whatever the overflow.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gtest/gtest.h>

#include "nvmf_host/hop.h"

namespace
{

void Cb(int, uint16_t, void *)
{
}

TEST(NvmfHostHop, ReadCarriesTheCommand)
{
	int arg = 0;
	char buf[16];
	wnh_io io = {};
	io.q = reinterpret_cast<struct wharf_nvmf_host_queue *>(0x1000);
	io.mem = reinterpret_cast<struct wharf_nvmf_host_mem *>(0x2000);
	io.op = WNH_IO_READ;
	io.nsid = 7;
	io.slba = 1ull << 40;
	io.nlb = 65536;
	io.len = 1u << 25;
	io.buf = buf;
	io.cb = Cb;
	io.arg = &arg;
	io.nr = 3; // not a DSM: no ranges copied
	wnh_hop *m = wnh_hop_new(&io);
	ASSERT_NE(nullptr, m);
	EXPECT_EQ(io.q, m->io.q);
	EXPECT_EQ(io.mem, m->io.mem);
	EXPECT_EQ(WNH_IO_READ, m->io.op);
	EXPECT_EQ(7u, m->io.nsid);
	EXPECT_EQ(1ull << 40, m->io.slba);
	EXPECT_EQ(65536u, m->io.nlb);
	EXPECT_EQ(1u << 25, m->io.len);
	EXPECT_EQ(static_cast<void *>(buf), m->io.buf);
	EXPECT_EQ(&Cb, m->io.cb);
	EXPECT_EQ(&arg, m->io.arg);
	EXPECT_EQ(nullptr, m->io.ranges);
	free(m);
}

TEST(NvmfHostHop, DsmRangesAreCopied)
{
	nvme_dsm_range r[WHARF_NVMF_HOST_DSM_MAX_RANGES];
	for (unsigned i = 0; i < WHARF_NVMF_HOST_DSM_MAX_RANGES; i++) {
		r[i].cattr = 0;
		r[i].nlb = i + 1;
		r[i].slba = 1000ull * i;
	}
	wnh_io io = {};
	io.op = WNH_IO_DSM;
	io.nr = WHARF_NVMF_HOST_DSM_MAX_RANGES;
	io.ranges = r;
	io.deac = true;
	wnh_hop *m = wnh_hop_new(&io);
	ASSERT_NE(nullptr, m);
	ASSERT_NE(r, m->io.ranges) << "the caller's array may go at once";
	EXPECT_EQ(m->ranges, m->io.ranges);
	memset(r, 0xFF, sizeof(r));
	for (unsigned i = 0; i < WHARF_NVMF_HOST_DSM_MAX_RANGES; i++) {
		EXPECT_EQ(i + 1, m->io.ranges[i].nlb);
		EXPECT_EQ(1000ull * i, m->io.ranges[i].slba);
	}
	EXPECT_TRUE(m->io.deac);
	free(m);
}

TEST(NvmfHostHop, BadDsmIsRefused)
{
	nvme_dsm_range r[1] = {};
	wnh_io io = {};
	io.op = WNH_IO_DSM;
	io.nr = WHARF_NVMF_HOST_DSM_MAX_RANGES + 1;
	io.ranges = r;
	EXPECT_EQ(nullptr, wnh_hop_new(&io));
	io.nr = 1;
	io.ranges = nullptr;
	EXPECT_EQ(nullptr, wnh_hop_new(&io));
	EXPECT_EQ(nullptr, wnh_hop_new(nullptr));
}

TEST(NvmfHostHop, BufferInsideTheRegistration)
{
	const uintptr_t b = 0x10000;
	const size_t len = 0x8000;

	EXPECT_TRUE(wnh_mem_contains(b, len, b, len));
	EXPECT_TRUE(wnh_mem_contains(b, len, b, 1));
	EXPECT_TRUE(wnh_mem_contains(b, len, b + len - 1, 1));
	EXPECT_TRUE(wnh_mem_contains(b, len, b + 0x1000, 0x7000));
	EXPECT_FALSE(wnh_mem_contains(b, len, b + 0x1000, 0x7001))
		<< "one byte past the end";
	EXPECT_FALSE(wnh_mem_contains(b, len, b - 1, 2)) << "starts before";
	EXPECT_FALSE(wnh_mem_contains(b, len, b + len, 1)) << "just past";
	EXPECT_FALSE(wnh_mem_contains(b, len, b, len + 1));
	EXPECT_FALSE(wnh_mem_contains(b, len, b, 0)) << "nothing to move";
	EXPECT_FALSE(wnh_mem_contains(b, len, b + 16, UINT64_MAX))
		<< "a length that wraps";
	EXPECT_FALSE(wnh_mem_contains(b, len, UINTPTR_MAX, 2));
	EXPECT_TRUE(wnh_mem_contains(UINTPTR_MAX - 15, 16, UINTPTR_MAX, 1))
		<< "at the top of the address space";
}

} // namespace
