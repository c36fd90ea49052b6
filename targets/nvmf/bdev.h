/*
 * targets/nvmf/bdev.h - the storage behind a namespace: RAM (anonymous
 * memory, zero until written), a regular file, a block device, or null
 * (writes are discarded, reads return zeroes: the transport measured
 * without a data copy on the target, as the kernel's null_blk does for
 * nvmet). Byte-addressed; the namespace layer converts LBAs and checks
 * ranges before calling in.
 *
 * Files and block devices are opened here and their geometry probed
 * (bdev_geom.h); on the target's shards their I/O goes through the
 * shard's io_uring (aio.h, io.c), never through the blocking calls below,
 * which serve tools and tests. A block device is opened O_DIRECT unless
 * told otherwise, a file buffered unless told otherwise (as nvmet's
 * buffered_io). A device or file that cannot be opened for writing is
 * exported read-only.
 *
 * Deallocated ranges read back as zeroes (the namespace reports DLFEAT
 * "read as zeroes"): RAM drops whole pages with madvise(MADV_DONTNEED) and
 * clears the partial ones; a file punches a hole, falling back to zeroing
 * when the filesystem cannot.
 */
#ifndef WHARF_TARGETS_NVMF_BDEV_H
#define WHARF_TARGETS_NVMF_BDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A block of zeroes (4096-aligned) for writing zeroes where a file system
 * cannot allocate them. */
#define NVMF_BDEV_ZERO_CHUNK (64 * 1024)
extern const uint8_t nvmf_bdev_zeroes[NVMF_BDEV_ZERO_CHUNK];

enum nvmf_bdev_kind {
	NVMF_BDEV_RAM = 1,
	NVMF_BDEV_FILE = 2,
	NVMF_BDEV_NULL = 3,
	NVMF_BDEV_BLOCK = 4,
};

/* How a file or block device is accessed. */
enum nvmf_bdev_io {
	NVMF_BDEV_IO_DEFAULT = 0, /* direct for a device, buffered for a file */
	NVMF_BDEV_IO_BUFFERED,
	NVMF_BDEV_IO_DIRECT,
};

struct nvmf_bdev {
	enum nvmf_bdev_kind kind;
	uint64_t size;	     /* bytes, a multiple of block_size */
	uint32_t block_size; /* 512 or 4096 */
	uint8_t *ram;	     /* RAM: the mapping */
	int fd;		     /* FILE, BLOCK: the descriptor, else -1 */
	uint16_t npwg;	     /* preferred write granularity, 0's based */
	uint16_t nows;	     /* optimal write size, 0's based */
	bool read_only;	     /* writes fail with -EROFS */
	bool vwc;	     /* a volatile write cache: Flush is needed */
	bool direct;	     /* opened O_DIRECT: buffers block-aligned */
	bool dealloc_zeroes; /* deallocated blocks read as zeroes */
	/*
	 * RAM, TSan builds: every access acquires this before and
	 * releases it after.
	 * Queues on different shards touch the same bytes only when the
	 * host ordered them (a read issued after the write's completion
	 * reached it); that order runs through the fabric, where a race
	 * detector cannot see it, so it is restated here.  Accesses the
	 * host did not order still race, and are still reported.  Only
	 * touched through __atomic builtins (this header is C++-clean).
	 */
	uint64_t order;
};

/**
 * nvmf_bdev_open_ram() - a RAM backing of @size bytes, all zero.
 * @b: the backing to initialise.
 * @size: bytes; > 0 and a multiple of @block_size.
 * @block_size: 512 or 4096.
 *
 * Memory is reserved lazily (MAP_NORESERVE): pages exist once written.
 *
 * Return: 0; -EINVAL for a NULL @b or bad sizes; -ENOMEM.
 * Context: any thread; allocates.
 */
int nvmf_bdev_open_ram(struct nvmf_bdev *b, uint64_t size, uint32_t block_size);

/**
 * nvmf_bdev_open_null() - a null backing of @size bytes: writes are
 * range-checked and discarded, reads fill the buffer with zeroes.
 * @b: the backing to initialise.
 * @size: bytes; > 0 and a multiple of @block_size.
 * @block_size: 512 or 4096.
 *
 * For benchmarks of the transport (no copy into storage on writes); data
 * written is lost, so a verifying workload fails on it by design.
 *
 * Return: 0; -EINVAL for a NULL @b or bad sizes.
 * Context: any thread; does not allocate.
 */
int nvmf_bdev_open_null(struct nvmf_bdev *b, uint64_t size,
			uint32_t block_size);

/**
 * nvmf_bdev_open_path() - a file or block device backing.
 * @b: the backing to initialise.
 * @path: an existing regular file or block device.
 * @block_size: the LBA size, 512 or 4096; 0 for the device's logical block
 *	size (512 for a file).
 * @io: buffered or direct (enum nvmf_bdev_io).
 * @err: receives a message on failure (may be NULL).
 * @errlen: its size.
 *
 * A file's size is its length and must be a whole number of blocks; a
 * device's is BLKGETSIZE64, cut down to whole blocks. Opened read-write,
 * or read-only (b->read_only) when writing is refused (EROFS, EACCES,
 * EPERM) or the device is set read-only (BLKROGET).
 *
 * Return: 0; -EINVAL for a NULL argument, a bad @block_size, an empty
 * file, a size not in blocks, or an LBA below a direct device's logical
 * block; -EISDIR; -ENOTSUP for anything but a file or block device;
 * -errno of stat(2) / open(2) / ioctl(2) (-EINVAL from open: the file
 * system cannot do O_DIRECT). @err says which.
 * Context: any thread; blocks on the filesystem and the device.
 */
int nvmf_bdev_open_path(struct nvmf_bdev *b, const char *path,
			uint32_t block_size, enum nvmf_bdev_io io, char *err,
			size_t errlen);

/**
 * nvmf_bdev_open_file() - nvmf_bdev_open_path(@b, @path, @block_size,
 * NVMF_BDEV_IO_DEFAULT, NULL, 0).
 */
int nvmf_bdev_open_file(struct nvmf_bdev *b, const char *path,
			uint32_t block_size);

/**
 * nvmf_bdev_async() - whether @b's I/O goes through an io_uring (a file
 * or block device) rather than being done in place (RAM, null).
 * Context: any thread; pure.
 */
static inline bool nvmf_bdev_async(const struct nvmf_bdev *b)
{
	return b->kind == NVMF_BDEV_FILE || b->kind == NVMF_BDEV_BLOCK;
}

/**
 * nvmf_bdev_close() - release a backing (RAM contents are lost).
 * @b: the backing; a zeroed or already closed one is a no-op.
 *
 * Context: any thread, once no I/O is in flight on @b.
 */
void nvmf_bdev_close(struct nvmf_bdev *b);

/**
 * nvmf_bdev_read() - copy @len bytes at @off into @buf.
 * @b: the backing.
 * @buf: the destination.
 * @off: byte offset; @off + @len <= size (checked).
 * @len: bytes.
 *
 * File bytes past the end of a (shrunk) file read as zeroes. On a
 * direct backing @buf, @off and @len must be block-aligned (as for
 * pread(2) on O_DIRECT).
 *
 * Return: 0; -ERANGE out of range; -errno of pread(2) (-EIO ...).
 * Context: any thread (concurrent calls are safe); blocks on a file.
 */
int nvmf_bdev_read(struct nvmf_bdev *b, void *buf, uint64_t off, size_t len);

/**
 * nvmf_bdev_write() - copy @len bytes from @buf to @off.
 * @b: the backing.
 * @buf: the source.
 * @off: byte offset; @off + @len <= size (checked).
 * @len: bytes.
 * @fua: force unit access: on a file, fdatasync(2) before returning.
 *
 * Return: 0; -ERANGE out of range; -EROFS on a read-only backing; -errno
 * of pwrite(2) / fdatasync(2).
 * Context: any thread (concurrent calls are safe); blocks on a file.
 */
int nvmf_bdev_write(struct nvmf_bdev *b, const void *buf, uint64_t off,
		    size_t len, bool fua);

/**
 * nvmf_bdev_zero() - make a range read as zeroes.
 * @b: the backing.
 * @off: byte offset; @off + @len <= size (checked).
 * @len: bytes.
 * @deallocate: also release the storage where possible.
 *
 * Return: 0; -ERANGE out of range; -EROFS on a read-only backing; -errno
 * of fallocate(2) / pwrite(2).
 * Context: any thread; blocks on a file.
 */
int nvmf_bdev_zero(struct nvmf_bdev *b, uint64_t off, uint64_t len,
		   bool deallocate);

/**
 * nvmf_bdev_flush() - make completed writes durable.
 * @b: the backing (RAM: nothing to do).
 *
 * Return: 0; -errno of fdatasync(2).
 * Context: any thread; blocks on a file.
 */
int nvmf_bdev_flush(struct nvmf_bdev *b);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_BDEV_H */
