/*
 * targets/nvmf/bdev.c - RAM, file and null backings of namespaces (see
 * bdev.h).
 */
#include "targets/nvmf/bdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "targets/nvmf/bdev_geom.h"

/* Aligned for O_DIRECT writes of it. */
const uint8_t nvmf_bdev_zeroes[NVMF_BDEV_ZERO_CHUNK]
	__attribute__((aligned(4096)));

/* The LBA sizes namespaces support. */
static bool block_ok(uint32_t bs)
{
	return bs == 512 || bs == 4096;
}

/* Whether [off, off + len) lies in the backing (no overflow). */
static bool in_range(const struct nvmf_bdev *b, uint64_t off, uint64_t len)
{
	return off <= b->size && len <= b->size - off;
}

/*
 * The RAM ordering word (see struct nvmf_bdev), in ThreadSanitizer builds
 * only: elsewhere the verbs calls between a write's completion and the
 * read the host issues after it already order the CPU accesses, and an
 * atomic read-modify-write on one line shared by every shard would only
 * cost.  ram_acquire() before an access, ram_release() after it.
 */
#if defined(__SANITIZE_THREAD__)
static void ram_acquire(struct nvmf_bdev *b)
{
	(void)__atomic_load_n(&b->order, __ATOMIC_ACQUIRE);
}

static void ram_release(struct nvmf_bdev *b)
{
	(void)__atomic_fetch_add(&b->order, 1, __ATOMIC_RELEASE);
}
#else
static void ram_acquire(struct nvmf_bdev *b)
{
	(void)b;
}

static void ram_release(struct nvmf_bdev *b)
{
	(void)b;
}
#endif

/* RAM and null backings: SIZE bytes, a whole number of blocks. */
static bool sized_ok(const struct nvmf_bdev *b, uint64_t size,
		     uint32_t block_size)
{
	return b && block_ok(block_size) && size && !(size % block_size);
}

static void sized_init(struct nvmf_bdev *b, enum nvmf_bdev_kind kind,
		       uint64_t size, uint32_t block_size, uint8_t *ram)
{
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->size = size;
	b->block_size = block_size;
	b->ram = ram;
	b->fd = -1;
	b->dealloc_zeroes = true;
}

int nvmf_bdev_open_ram(struct nvmf_bdev *b, uint64_t size, uint32_t block_size)
{
	void *p;

	if (!sized_ok(b, size, block_size) || size > (uint64_t)SIZE_MAX)
		return -EINVAL;
	p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	sized_init(b, NVMF_BDEV_RAM, size, block_size, p);
	return 0;
}

int nvmf_bdev_open_null(struct nvmf_bdev *b, uint64_t size, uint32_t block_size)
{
	if (!sized_ok(b, size, block_size))
		return -EINVAL;
	sized_init(b, NVMF_BDEV_NULL, size, block_size, NULL);
	return 0;
}

static int say(char *err, size_t errlen, int rc, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", what, strerror(-rc));
	return rc;
}

/* The text of block device @dev's queue/@attr (a partition has no queue
 * of its own: its disk's is one directory up); false if there is none. */
static bool queue_attr(dev_t dev, const char *attr, char *text, size_t len)
{
	static const char *const fmt[] = {
		"/sys/dev/block/%u:%u/queue/%s",
		"/sys/dev/block/%u:%u/../queue/%s",
	};
	char path[128];

	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), fmt[i], major(dev), minor(dev),
			 attr);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fread(text, 1, len - 1, f);
		fclose(f);
		text[n] = '\0';
		return true;
	}
	return false;
}

/* A number in block device @dev's queue/@attr, or 0. */
static uint64_t queue_num(dev_t dev, const char *attr)
{
	char text[32];

	return queue_attr(dev, attr, text, sizeof(text))
		       ? strtoull(text, NULL, 10)
		       : 0;
}

/* A file's direct I/O offset alignment: statx STATX_DIOALIGN (Linux
 * 6.1, where the file system says), else the logical block size of the
 * device the file system is on, else 0 (unknown). */
static uint32_t dio_align(int fd, dev_t fs_dev)
{
#ifdef STATX_DIOALIGN
	struct statx sx;

	if (!statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align)
		return sx.stx_dio_offset_align;
#else
	(void)fd;
#endif
	return (uint32_t)queue_num(fs_dev, "logical_block_size");
}

/* Fill @p from a block device's ioctls. */
static int probe_block(int fd, const struct stat *st, struct nvmf_blk_probe *p)
{
	unsigned int io_opt = 0;
	int lbs = 0, pbs = 0;
	char text[32];
	int ro = 0;

	if (ioctl(fd, BLKGETSIZE64, &p->bytes) || ioctl(fd, BLKSSZGET, &lbs) ||
	    ioctl(fd, BLKPBSZGET, &pbs) || ioctl(fd, BLKROGET, &ro))
		return -errno;
	if (ioctl(fd, BLKIOOPT, &io_opt))
		io_opt = 0;
	p->is_block = true;
	p->lbs = (uint32_t)lbs;
	p->pbs = (uint32_t)pbs;
	p->io_opt = io_opt;
	p->read_only = p->read_only || ro;
	p->write_cache =
		queue_attr(st->st_rdev, "write_cache", text, sizeof(text))
			? nvmf_write_cache_parse(text)
			: -1;
	p->write_zeroes = queue_num(st->st_rdev, "write_zeroes_max_bytes") > 0;
	return 0;
}

int nvmf_bdev_open_path(struct nvmf_bdev *b, const char *path,
			uint32_t block_size, enum nvmf_bdev_io io, char *err,
			size_t errlen)
{
	struct nvmf_blk_probe p = {0};
	struct nvmf_bdev_geom g;
	struct stat st;
	int flags = O_CLOEXEC;
	int fd, rc;

	if (!b || !path || (block_size && !block_ok(block_size)) ||
	    io > NVMF_BDEV_IO_DIRECT)
		return say(err, errlen, -EINVAL, "bad arguments");
	if (stat(path, &st))
		return say(err, errlen, -errno, "stat");
	if (S_ISDIR(st.st_mode))
		return say(err, errlen, -EISDIR, "not a file or block device");
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return say(err, errlen, -ENOTSUP, "not a file or block device");
	p.direct = io == NVMF_BDEV_IO_DIRECT ||
		   (io == NVMF_BDEV_IO_DEFAULT && S_ISBLK(st.st_mode));
	if (p.direct)
		flags |= O_DIRECT;
	fd = open(path, flags | O_RDWR);
	if (fd < 0 && (errno == EROFS || errno == EACCES || errno == EPERM)) {
		p.read_only = true;
		fd = open(path, flags | O_RDONLY);
	}
	if (fd < 0)
		return say(err, errlen, -errno,
			   p.direct && errno == EINVAL
				   ? "open O_DIRECT (not supported here: "
				     "try io=buffered)"
				   : "open");
	if (fstat(fd, &st)) { /* the file opened, not the name stat saw */
		rc = say(err, errlen, -errno, "fstat");
		goto fail;
	}
	if (S_ISBLK(st.st_mode)) {
		rc = probe_block(fd, &st, &p);
		if (rc) {
			say(err, errlen, rc, "block device ioctl");
			goto fail;
		}
	} else if (S_ISREG(st.st_mode)) {
		p.bytes = st.st_size > 0 ? (uint64_t)st.st_size : 0;
		p.pbs = st.st_blksize > 0 ? (uint32_t)st.st_blksize : 0;
		p.write_cache = 1;
		p.lbs = p.direct ? dio_align(fd, st.st_dev) : 0;
		if (!p.bytes) {
			rc = say(err, errlen, -EINVAL, "the file is empty");
			goto fail;
		}
	} else {
		rc = say(err, errlen, -ENOTSUP, "not a file or block device");
		goto fail;
	}
	rc = nvmf_bdev_geom_derive(&p, block_size, &g, err, errlen);
	if (rc)
		goto fail;
	if (!p.is_block &&
	    g.size != p.bytes) { /* a device is cut, not a file */
		rc = say(err, errlen, -EINVAL,
			 "the file's size is not a whole number of blocks");
		goto fail;
	}
	memset(b, 0, sizeof(*b));
	b->kind = p.is_block ? NVMF_BDEV_BLOCK : NVMF_BDEV_FILE;
	b->size = g.size;
	b->block_size = g.block_size;
	b->fd = fd;
	b->npwg = g.npwg;
	b->nows = g.nows;
	b->read_only = g.read_only;
	b->vwc = g.vwc;
	b->direct = p.direct;
	b->dealloc_zeroes = g.dealloc_zeroes;
	return 0;
fail:
	close(fd);
	return rc;
}

int nvmf_bdev_open_file(struct nvmf_bdev *b, const char *path,
			uint32_t block_size)
{
	if (!block_size)
		return -EINVAL;
	return nvmf_bdev_open_path(b, path, block_size, NVMF_BDEV_IO_DEFAULT,
				   NULL, 0);
}

void nvmf_bdev_close(struct nvmf_bdev *b)
{
	if (!b)
		return;
	if (b->kind == NVMF_BDEV_RAM && b->ram)
		munmap(b->ram, (size_t)b->size);
	if ((b->kind == NVMF_BDEV_FILE || b->kind == NVMF_BDEV_BLOCK) &&
	    b->fd >= 0)
		close(b->fd);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

int nvmf_bdev_read(struct nvmf_bdev *b, void *buf, uint64_t off, size_t len)
{
	uint8_t *p = buf;

	if (!in_range(b, off, len))
		return -ERANGE;
	if (b->kind == NVMF_BDEV_RAM) {
		ram_acquire(b);
		memcpy(buf, b->ram + off, len);
		ram_release(b);
		return 0;
	}
	if (b->kind == NVMF_BDEV_NULL) {
		memset(buf, 0, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(b->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) { /* past a shrunk file's end */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* pwrite(2) until done; 0 or -errno (-EIO on a zero write). */
static int pwrite_all(int fd, const uint8_t *p, uint64_t off, size_t len)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int nvmf_bdev_write(struct nvmf_bdev *b, const void *buf, uint64_t off,
		    size_t len, bool fua)
{
	int rc;

	if (!in_range(b, off, len))
		return -ERANGE;
	if (b->kind == NVMF_BDEV_RAM) {
		ram_acquire(b);
		memcpy(b->ram + off, buf, len);
		ram_release(b);
		return 0;
	}
	if (b->kind == NVMF_BDEV_NULL)
		return 0;
	if (b->read_only)
		return -EROFS;
	rc = pwrite_all(b->fd, buf, off, len);
	if (!rc && fua && fdatasync(b->fd))
		rc = -errno;
	return rc;
}

/* RAM: drop whole pages, clear the partial ones at either end. */
static void ram_zero(struct nvmf_bdev *b, uint64_t off, uint64_t len,
		     bool deallocate)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t first = (off + pg - 1) / pg * pg;
	uint64_t last = (off + len) / pg * pg;

	if (!deallocate || first >= last) {
		memset(b->ram + off, 0, len);
		return;
	}
	memset(b->ram + off, 0, first - off);
	if (madvise(b->ram + first, last - first, MADV_DONTNEED))
		memset(b->ram + first, 0, last - first);
	memset(b->ram + last, 0, off + len - last);
}

/* Zero a file range by writing zeroes (fallocate fallback). */
static int file_zero_write(struct nvmf_bdev *b, uint64_t off, uint64_t len)
{
	while (len) {
		size_t n = len < NVMF_BDEV_ZERO_CHUNK ? (size_t)len
						      : NVMF_BDEV_ZERO_CHUNK;
		int rc = pwrite_all(b->fd, nvmf_bdev_zeroes, off, n);

		if (rc)
			return rc;
		off += n;
		len -= n;
	}
	return 0;
}

int nvmf_bdev_zero(struct nvmf_bdev *b, uint64_t off, uint64_t len,
		   bool deallocate)
{
	int mode;

	if (!in_range(b, off, len))
		return -ERANGE;
	if (!len || b->kind == NVMF_BDEV_NULL)
		return 0;
	if (b->kind == NVMF_BDEV_RAM) {
		ram_acquire(b);
		ram_zero(b, off, len, deallocate);
		ram_release(b);
		return 0;
	}
	if (b->read_only)
		return -EROFS;
	mode = deallocate ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
			  : FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
	if (!fallocate(b->fd, mode, (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
		return -errno;
	return file_zero_write(b, off, len);
}

int nvmf_bdev_flush(struct nvmf_bdev *b)
{
	if (nvmf_bdev_async(b) && fdatasync(b->fd))
		return -errno;
	return 0;
}
