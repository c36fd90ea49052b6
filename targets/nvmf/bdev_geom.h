/*
 * targets/nvmf/bdev_geom.h - what a namespace on a block device or file
 * looks like to the host, derived from what the kernel reports: size,
 * LBA size, the preferred write granularity and optimal write size
 * (Identify Namespace NPWG / NPWA / NOWS), read-only, and whether writes
 * pass a volatile cache (Identify Controller VWC; Flush matters).
 *
 * Pure functions: the probing (ioctl, sysfs) is in bdev.c; these take its
 * results, so that unit tests drive every case without a device.
 */
#ifndef WHARF_TARGETS_NVMF_BDEV_GEOM_H
#define WHARF_TARGETS_NVMF_BDEV_GEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the kernel said about a block device or file. */
struct nvmf_blk_probe {
	bool is_block;	   /* a block device (else a regular file) */
	uint64_t bytes;	   /* BLKGETSIZE64 / st_size */
	uint32_t lbs;	   /* BLKSSZGET; a direct file: its statx
			   * dio_offset_align; else 0 */
	uint32_t pbs;	   /* BLKPBSZGET; a file: st_blksize */
	uint32_t io_opt;   /* BLKIOOPT (0: none reported) */
	bool read_only;	   /* BLKROGET, or the file is not writable */
	int write_cache;   /* 1 write back, 0 write through, -1 unknown */
	bool write_zeroes; /* the device does Write Zeroes (sysfs
			    * write_zeroes_max_bytes > 0) */
	bool direct;	   /* opened O_DIRECT */
};

/* The namespace derived from it. */
struct nvmf_bdev_geom {
	uint64_t size;	     /* bytes exported: a whole number of blocks */
	uint32_t block_size; /* the LBA size */
	uint16_t npwg;	     /* 0's based, in blocks (also NPWA) */
	uint16_t nows;	     /* 0's based, in blocks */
	bool read_only;
	bool vwc; /* a volatile write cache lies between host and media */
	/* Deallocated blocks read as zeroes (Identify Namespace DLFEAT):
	 * a file's punched hole does; a device's only if it has Write
	 * Zeroes (the kernel's zeroing discard); elsewhere deallocate is
	 * the hint it is in the spec, and may do nothing. */
	bool dealloc_zeroes;
};

/**
 * nvmf_bdev_geom_derive() - the namespace a backing can be.
 * @p: the probe.
 * @want_block: the configured LBA size (512 or 4096), or 0 for the
 *	device's logical block size (a file: its direct I/O alignment when
 *	opened O_DIRECT, else 512).
 * @g: receives the geometry.
 * @err: receives a message on failure (may be NULL).
 * @errlen: its size.
 *
 * Rules: an O_DIRECT device or file cannot take an LBA smaller than its
 * logical block size (a file's direct I/O alignment; unknown: 4096 by
 * default); the LBA size is 512 or 4096; a size that is not a whole
 * number of blocks is cut down to one (the caller refuses that for a
 * file), and nothing below one block is exported. The preferred
 * granularity is the physical block (or the file system block) in LBAs,
 * the optimal write size the device's optimal I/O size when it is a
 * multiple of the LBA, else the granularity. Writes pass a volatile
 * cache on every file (the page cache, or the disk's own under it) and
 * on a buffered device; on a direct device it is the device's own
 * write-cache setting (unknown: assumed present, as Flush is then safe).
 *
 * Return: 0; -EINVAL with @err set.
 * Context: any thread; pure.
 */
int nvmf_bdev_geom_derive(const struct nvmf_blk_probe *p, uint32_t want_block,
			  struct nvmf_bdev_geom *g, char *err, size_t errlen);

/**
 * nvmf_write_cache_parse() - a block device's queue/write_cache file.
 * @text: its contents ("write back\n" or "write through\n").
 *
 * Return: 1 for write back, 0 for write through, -1 for anything else.
 * Context: any thread; pure.
 */
int nvmf_write_cache_parse(const char *text);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_BDEV_GEOM_H */
