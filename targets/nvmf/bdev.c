/*
 * targets/nvmf/bdev.c - RAM, file and null backings of namespaces (see
 * bdev.h).
 */
#include "targets/nvmf/bdev.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZERO_CHUNK (64 * 1024)

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

int nvmf_bdev_open_file(struct nvmf_bdev *b, const char *path,
			uint32_t block_size)
{
	struct stat st;
	int fd;

	if (!b || !path || !block_ok(block_size))
		return -EINVAL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOTSUP;
	}
	if (st.st_size <= 0 || (uint64_t)st.st_size % block_size) {
		close(fd);
		return -EINVAL;
	}
	memset(b, 0, sizeof(*b));
	b->kind = NVMF_BDEV_FILE;
	b->size = (uint64_t)st.st_size;
	b->block_size = block_size;
	b->fd = fd;
	return 0;
}

void nvmf_bdev_close(struct nvmf_bdev *b)
{
	if (!b)
		return;
	if (b->kind == NVMF_BDEV_RAM && b->ram)
		munmap(b->ram, (size_t)b->size);
	if (b->kind == NVMF_BDEV_FILE && b->fd >= 0)
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
	static const uint8_t zeroes[ZERO_CHUNK];

	while (len) {
		size_t n = len < ZERO_CHUNK ? (size_t)len : ZERO_CHUNK;
		int rc = pwrite_all(b->fd, zeroes, off, n);

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
	if (b->kind == NVMF_BDEV_FILE && fdatasync(b->fd))
		return -errno;
	return 0;
}
