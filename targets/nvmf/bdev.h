/*
 * targets/nvmf/bdev.h - the storage behind a namespace: RAM (anonymous
 * memory, zero until written), a regular file (pread / pwrite; no
 * O_DIRECT) or null (writes are discarded, reads return zeroes: the
 * transport measured without a data copy on the target, as the kernel's
 * null_blk does for nvmet). Byte-addressed; the namespace layer converts
 * LBAs and checks ranges before calling in.
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

enum nvmf_bdev_kind {
	NVMF_BDEV_RAM = 1,
	NVMF_BDEV_FILE = 2,
	NVMF_BDEV_NULL = 3,
};

struct nvmf_bdev {
	enum nvmf_bdev_kind kind;
	uint64_t size;	     /* bytes, a multiple of block_size */
	uint32_t block_size; /* 512 or 4096 */
	uint8_t *ram;	     /* RAM: the mapping */
	int fd;		     /* FILE: the descriptor, else -1 */
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
 * nvmf_bdev_open_file() - a file backing; its size is the file's size.
 * @b: the backing to initialise.
 * @path: an existing regular file, opened read-write.
 * @block_size: 512 or 4096.
 *
 * Return: 0; -EINVAL for a NULL argument or bad @block_size; -errno of
 * open(2) / fstat(2); -ENOTSUP if @path is not a regular file; -EINVAL if
 * the file is empty or its size is not a multiple of @block_size.
 * Context: any thread; blocks on the filesystem.
 */
int nvmf_bdev_open_file(struct nvmf_bdev *b, const char *path,
			uint32_t block_size);

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
 * File bytes past the end of a (shrunk) file read as zeroes.
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
 * Return: 0; -ERANGE out of range; -errno of pwrite(2) / fdatasync(2).
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
 * Return: 0; -ERANGE out of range; -errno of fallocate(2) / pwrite(2).
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
