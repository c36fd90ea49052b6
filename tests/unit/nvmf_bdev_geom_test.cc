// What a namespace on a block device or file looks like, from what the
// kernel reports (no device needed): LBA size rules, sizes cut to whole
// blocks, NPWG / NOWS from the physical block and optimal I/O size, the
// volatile write cache from the device's setting, read-only; the
// write_cache sysfs text; and every backend errno's NVMe status and class.
#include <errno.h>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/bdev_geom.h"
#include "targets/nvmf/bdev_status.h"
#include "proto/nvme/spec.h"
}

namespace
{

nvmf_blk_probe Disk(uint64_t bytes, uint32_t lbs, uint32_t pbs,
		    uint32_t io_opt = 0, int wc = 1)
{
	nvmf_blk_probe p = {};
	p.is_block = true;
	p.bytes = bytes;
	p.lbs = lbs;
	p.pbs = pbs;
	p.io_opt = io_opt;
	p.write_cache = wc;
	p.direct = true;
	return p;
}

TEST(NvmfBdevGeom, ABlockDeviceTakesItsOwnLogicalBlock)
{
	nvmf_bdev_geom g;
	char err[128] = "";
	nvmf_blk_probe p = Disk(1ull << 30, 512, 4096);

	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, err, sizeof(err)));
	EXPECT_EQ(512u, g.block_size);
	EXPECT_EQ(1ull << 30, g.size);
	EXPECT_EQ(7u, g.npwg); // 4096 / 512 - 1
	EXPECT_EQ(7u, g.nows); // no optimal size: the granularity
	EXPECT_TRUE(g.vwc);
	EXPECT_FALSE(g.read_only);

	p = Disk(1ull << 30, 4096, 4096, 128 * 1024, 0);
	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, err, sizeof(err)));
	EXPECT_EQ(4096u, g.block_size);
	EXPECT_EQ(0u, g.npwg);
	EXPECT_EQ(31u, g.nows);		// 128K / 4K - 1
	EXPECT_FALSE(g.vwc);		// write through
	EXPECT_FALSE(g.dealloc_zeroes); // no Write Zeroes on the device
	// The same device buffered: the page cache is a volatile cache.
	p.direct = false;
	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, err, sizeof(err)));
	EXPECT_TRUE(g.vwc);
	p.write_zeroes = true;
	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, err, sizeof(err)));
	EXPECT_TRUE(g.dealloc_zeroes);
}

TEST(NvmfBdevGeom, LbaSizeRules)
{
	nvmf_bdev_geom g;
	char err[160] = "";
	nvmf_blk_probe p = Disk(1ull << 30, 4096, 4096);

	// Direct I/O cannot address half a device block.
	EXPECT_EQ(-EINVAL,
		  nvmf_bdev_geom_derive(&p, 512, &g, err, sizeof(err)));
	EXPECT_NE(nullptr, strstr(err, "logical block size 4096")) << err;
	// Buffered, the page cache can.
	p.direct = false;
	EXPECT_EQ(0, nvmf_bdev_geom_derive(&p, 512, &g, err, sizeof(err)));
	EXPECT_EQ(512u, g.block_size);
	// Larger than the device's: fine.
	p = Disk(1ull << 30, 512, 512);
	EXPECT_EQ(0, nvmf_bdev_geom_derive(&p, 4096, &g, err, sizeof(err)));
	EXPECT_EQ(4096u, g.block_size);
	EXPECT_EQ(-EINVAL,
		  nvmf_bdev_geom_derive(&p, 1024, &g, err, sizeof(err)));
	// A device that reports nonsense.
	p = Disk(1ull << 30, 0, 0);
	EXPECT_EQ(-EINVAL, nvmf_bdev_geom_derive(&p, 0, &g, err, sizeof(err)));
	p = Disk(1ull << 30, 520, 520);
	EXPECT_EQ(-EINVAL, nvmf_bdev_geom_derive(&p, 0, &g, nullptr, 0));
	// A file opened O_DIRECT on a 4Kn disk: the same rule.
	nvmf_blk_probe f = {};
	f.bytes = 1 << 20;
	f.lbs = 4096; // statx dio_offset_align
	f.direct = true;
	EXPECT_EQ(-EINVAL, nvmf_bdev_geom_derive(&f, 512, &g, nullptr, 0));
	EXPECT_EQ(0, nvmf_bdev_geom_derive(&f, 0, &g, nullptr, 0));
	EXPECT_EQ(4096u, g.block_size);
	// A 64K physical block is 16 LBAs of 4K.
	p = Disk(1ull << 30, 512, 65536, 0);
	EXPECT_EQ(0, nvmf_bdev_geom_derive(&p, 4096, &g, err, sizeof(err)));
	EXPECT_EQ(15u, g.npwg);
}

TEST(NvmfBdevGeom, SizesAreCutToWholeBlocks)
{
	nvmf_bdev_geom g;
	char err[128] = "";
	nvmf_blk_probe p = Disk(10 * 4096 + 3 * 512, 512, 512);

	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 4096, &g, err, sizeof(err)));
	EXPECT_EQ(10u * 4096, g.size);
	p = Disk(3 * 512, 512, 512);
	EXPECT_EQ(-EINVAL,
		  nvmf_bdev_geom_derive(&p, 4096, &g, err, sizeof(err)));
	EXPECT_NE(nullptr, strstr(err, "smaller than one 4096-byte block"));
}

TEST(NvmfBdevGeom, OptimalSizeNotInBlocksFallsBackToTheGranularity)
{
	nvmf_bdev_geom g;
	nvmf_blk_probe p = Disk(1ull << 30, 512, 4096, 6000);

	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, nullptr, 0));
	EXPECT_EQ(7u, g.nows);
	// Huge optimal sizes clamp to the 16-bit field.
	p = Disk(1ull << 40, 512, 512, 1u << 30);
	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, nullptr, 0));
	EXPECT_EQ(0xFFFFu, g.nows);
}

TEST(NvmfBdevGeom, CacheAndReadOnly)
{
	nvmf_bdev_geom g;
	nvmf_blk_probe p = Disk(1 << 20, 512, 512, 0, -1);

	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, nullptr, 0));
	EXPECT_TRUE(g.vwc); // unknown: Flush is kept
	p.read_only = true;
	ASSERT_EQ(0, nvmf_bdev_geom_derive(&p, 0, &g, nullptr, 0));
	EXPECT_TRUE(g.read_only);

	nvmf_blk_probe f = {};
	f.bytes = 1 << 20;
	f.pbs = 4096; // st_blksize
	f.write_cache = 1;
	ASSERT_EQ(0, nvmf_bdev_geom_derive(&f, 0, &g, nullptr, 0));
	EXPECT_EQ(512u, g.block_size); // a file's default LBA
	EXPECT_EQ(7u, g.npwg);
	EXPECT_TRUE(g.vwc);	       // the page cache
	EXPECT_TRUE(g.dealloc_zeroes); // a punched hole reads as zeroes
	// Direct, alignment unknown: 4096 unless told.
	f.direct = true;
	ASSERT_EQ(0, nvmf_bdev_geom_derive(&f, 0, &g, nullptr, 0));
	EXPECT_EQ(4096u, g.block_size);
}

TEST(NvmfBdevGeom, WriteCacheText)
{
	EXPECT_EQ(1, nvmf_write_cache_parse("write back\n"));
	EXPECT_EQ(1, nvmf_write_cache_parse("write back"));
	EXPECT_EQ(0, nvmf_write_cache_parse("write through\n"));
	EXPECT_EQ(-1, nvmf_write_cache_parse("write backs\n"));
	EXPECT_EQ(-1, nvmf_write_cache_parse(""));
	EXPECT_EQ(-1, nvmf_write_cache_parse(nullptr));
}

TEST(NvmfBdevStatus, EveryClass)
{
	nvmf_bdev_err c;

	uint16_t s = nvmf_bdev_status(-EIO, true, &c);
	EXPECT_EQ(NVMF_BDEV_ERR_MEDIA, c);
	EXPECT_EQ(NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_UNRECOVERED_READ), s);
	EXPECT_EQ(0, s & NVME_DNR); // a retry may succeed
	s = nvmf_bdev_status(-EIO, false, &c);
	EXPECT_EQ(NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT), s);
	nvmf_bdev_status(EILSEQ, false, &c); // positive errno too
	EXPECT_EQ(NVMF_BDEV_ERR_MEDIA, c);
	EXPECT_EQ(NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_WRITE_FAULT),
		  nvmf_bdev_status(0, false, &c)); // moved nothing

	s = nvmf_bdev_status(-ENOSPC, false, &c);
	EXPECT_EQ(NVMF_BDEV_ERR_CAPACITY, c);
	EXPECT_EQ(NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CAP_EXCEEDED) |
			  NVME_DNR,
		  s);
	EXPECT_EQ(s, nvmf_bdev_status(-EFBIG, false, nullptr));
	EXPECT_EQ(s, nvmf_bdev_status(-EDQUOT, false, nullptr));

	s = nvmf_bdev_status(-EROFS, false, &c);
	EXPECT_EQ(NVMF_BDEV_ERR_WRITE_PROTECT, c);
	EXPECT_EQ(NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_NS_WRITE_PROT) |
			  NVME_DNR,
		  s);

	// A read refused by permissions is not write protection.
	s = nvmf_bdev_status(-EACCES, true, &c);
	EXPECT_EQ(NVMF_BDEV_ERR_INTERNAL, c);
	nvmf_bdev_status(-EPERM, false, &c);
	EXPECT_EQ(NVMF_BDEV_ERR_WRITE_PROTECT, c);

	s = nvmf_bdev_status(-EAGAIN, true, &c);
	EXPECT_EQ(NVMF_BDEV_ERR_INTERNAL, c);
	EXPECT_EQ(NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL), s);
	s = nvmf_bdev_status(-EINVAL, true, &c);
	EXPECT_EQ(NVMF_BDEV_ERR_INTERNAL, c);
	EXPECT_EQ(NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) | NVME_DNR,
		  s);
}

} // namespace
