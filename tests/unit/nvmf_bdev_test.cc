// Unit tests for targets/nvmf/bdev: RAM and file backings of namespaces —
// read / write / FUA / zero / deallocate (reads back zeroes) / flush, range
// checks, and the errors of opening a file; the null backing discards
// writes and reads zeroes.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/bdev.h"
}

namespace
{

std::vector<uint8_t> Pattern(size_t n, uint8_t seed)
{
	std::vector<uint8_t> v(n);
	for (size_t i = 0; i < n; i++)
		v[i] = (uint8_t)(seed + i * 7);
	return v;
}

void Exercise(nvmf_bdev *b)
{
	const uint64_t size = b->size;
	std::vector<uint8_t> in = Pattern(3 * 4096 + 512, 3), out(in.size());

	// Fresh storage reads as zeroes.
	ASSERT_EQ(0, nvmf_bdev_read(b, out.data(), 0, 4096));
	for (size_t i = 0; i < 4096; i++)
		ASSERT_EQ(0, out[i]);
	ASSERT_EQ(0, nvmf_bdev_write(b, in.data(), 512, in.size(), false));
	ASSERT_EQ(0, nvmf_bdev_read(b, out.data(), 512, out.size()));
	EXPECT_EQ(in, out);
	ASSERT_EQ(0, nvmf_bdev_write(b, in.data(), size - 512, 512, true));

	// Zero without and with deallocation, partial pages at both ends.
	ASSERT_EQ(0, nvmf_bdev_zero(b, 1024, 512, false));
	ASSERT_EQ(0, nvmf_bdev_zero(b, 2048, 2 * 4096, true));
	ASSERT_EQ(0, nvmf_bdev_read(b, out.data(), 512, out.size()));
	for (size_t i = 0; i < out.size(); i++) {
		uint64_t pos = 512 + i;
		bool zeroed = (pos >= 1024 && pos < 1536) ||
			      (pos >= 2048 && pos < 2048 + 2 * 4096);
		ASSERT_EQ(zeroed ? 0 : in[i], out[i]) << pos;
	}
	ASSERT_EQ(0, nvmf_bdev_zero(b, 0, 0, true));
	ASSERT_EQ(0, nvmf_bdev_flush(b));

	// Out of range, including overflow of off + len.
	EXPECT_EQ(-ERANGE, nvmf_bdev_read(b, out.data(), size - 511, 512));
	EXPECT_EQ(-ERANGE, nvmf_bdev_write(b, in.data(), size, 1, false));
	EXPECT_EQ(-ERANGE, nvmf_bdev_zero(b, size + 1, 0, false));
	EXPECT_EQ(-ERANGE, nvmf_bdev_zero(b, 512, UINT64_MAX, true));
	EXPECT_EQ(0, nvmf_bdev_read(b, out.data(), size - 512, 512));
	EXPECT_EQ(0, memcmp(out.data(), in.data(), 512));
}

TEST(NvmfBdev, Ram)
{
	nvmf_bdev b;
	ASSERT_EQ(0, nvmf_bdev_open_ram(&b, 1 << 20, 512));
	EXPECT_EQ(NVMF_BDEV_RAM, b.kind);
	EXPECT_EQ(1u << 20, b.size);
	Exercise(&b);
	nvmf_bdev_close(&b);
	nvmf_bdev_close(&b);
}

TEST(NvmfBdev, RamAndNullArguments)
{
	for (auto open : {nvmf_bdev_open_ram, nvmf_bdev_open_null}) {
		nvmf_bdev b;
		EXPECT_EQ(-EINVAL, open(&b, 0, 512));
		EXPECT_EQ(-EINVAL, open(&b, 1000, 512));
		EXPECT_EQ(-EINVAL, open(&b, 6144, 4096));
		EXPECT_EQ(-EINVAL, open(&b, 4096, 1024));
		EXPECT_EQ(-EINVAL, open(nullptr, 4096, 512));
	}
}

TEST(NvmfBdev, NullDiscardsWritesAndReadsZeroes)
{
	nvmf_bdev b;
	ASSERT_EQ(0, nvmf_bdev_open_null(&b, 1ull << 40, 4096));
	EXPECT_EQ(NVMF_BDEV_NULL, b.kind);
	EXPECT_EQ(1ull << 40, b.size);
	EXPECT_EQ(nullptr, b.ram);
	std::vector<uint8_t> in = Pattern(8192, 5), out(8192, 0xA5);
	ASSERT_EQ(0, nvmf_bdev_write(&b, in.data(), 4096, in.size(), true));
	ASSERT_EQ(0, nvmf_bdev_read(&b, out.data(), 4096, out.size()));
	for (uint8_t v : out)
		ASSERT_EQ(0, v);
	EXPECT_EQ(0, nvmf_bdev_zero(&b, 0, 1 << 20, true));
	EXPECT_EQ(0, nvmf_bdev_flush(&b));
	EXPECT_EQ(-ERANGE,
		  nvmf_bdev_write(&b, in.data(), b.size - 4095, 4096, false));
	EXPECT_EQ(-ERANGE, nvmf_bdev_read(&b, out.data(), b.size, 1));
	EXPECT_EQ(-ERANGE, nvmf_bdev_zero(&b, 4096, UINT64_MAX, false));
	nvmf_bdev_close(&b);
	EXPECT_EQ(0, b.kind);
}

TEST(NvmfBdev, File)
{
	char path[] = "/tmp/nvmf_bdev_testXXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, 1 << 20));
	close(fd);

	nvmf_bdev b;
	ASSERT_EQ(0, nvmf_bdev_open_file(&b, path, 4096));
	EXPECT_EQ(NVMF_BDEV_FILE, b.kind);
	EXPECT_EQ(1u << 20, b.size);
	Exercise(&b);
	// A file shrunk behind our back reads zeroes past its end.
	ASSERT_EQ(0, truncate(path, 512 * 1024));
	std::vector<uint8_t> out(4096, 0xFF);
	EXPECT_EQ(0, nvmf_bdev_read(&b, out.data(), 600 * 1024, out.size()));
	for (uint8_t v : out)
		ASSERT_EQ(0, v);
	nvmf_bdev_close(&b);
	unlink(path);
}

TEST(NvmfBdev, FileOpenErrors)
{
	nvmf_bdev b;
	char path[] = "/tmp/nvmf_bdev_testXXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(-EINVAL, nvmf_bdev_open_file(&b, path, 512)); // empty
	ASSERT_EQ(0, truncate(path, 1000));
	EXPECT_EQ(-EINVAL, nvmf_bdev_open_file(&b, path, 512)); // not blocks
	ASSERT_EQ(0, truncate(path, 4096));
	EXPECT_EQ(-EINVAL, nvmf_bdev_open_file(&b, path, 2048));
	EXPECT_EQ(0, nvmf_bdev_open_file(&b, path, 512));
	nvmf_bdev_close(&b);
	unlink(path);
	EXPECT_EQ(-ENOENT, nvmf_bdev_open_file(&b, path, 512));
	EXPECT_EQ(-EISDIR, nvmf_bdev_open_file(&b, "/tmp", 512));
	EXPECT_EQ(-ENOTSUP, nvmf_bdev_open_file(&b, "/dev/null", 512));
	EXPECT_EQ(-EINVAL, nvmf_bdev_open_file(&b, nullptr, 512));
}

} // namespace
