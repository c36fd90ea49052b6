/*
 * initiators/ublk/ublk_map.h - wharf-ublk's pure pieces: the device's
 * parameters from the NVMe namespace, and each ublk request as the NVMe
 * command that serves it (ublk_map.c; no I/O, driven by unit tests).
 */
#ifndef WHARF_INITIATORS_UBLK_MAP_H
#define WHARF_INITIATORS_UBLK_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "initiators/ublk/ublk_uapi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The page size the driver's limits are in (x86-64, arm64 with 4 KiB
 * pages: the kernels wharf-ublk runs on). */
#define UBLK_MAP_PAGE 4096u

/* What the namespace and the controller offer. */
struct ublk_geom {
	uint32_t block;	  /* logical block size, bytes (power of two) */
	uint64_t nblocks; /* namespace size, blocks */
	uint32_t max_io;  /* largest transfer of one command, bytes */
	bool dsm;	  /* Dataset Management (deallocate) */
	bool wzeroes;	  /* Write Zeroes */
	uint8_t wzsl;	  /* Write Zeroes size limit: 2^wzsl 4 KiB units */
	uint32_t dmrsl;	  /* blocks of one deallocate range; 0: none */
	uint64_t dmsl;	  /* blocks of one deallocate command; 0: none */
	bool read_only;
};

/*
 * ublk_params_from_geom - the ublk device's parameters (basic, and
 * discard when the namespace deallocates or zeroes): block sizes, the
 * largest request (max_io), the size in 512-byte sectors, a volatile
 * cache (flushes reach the controller; NVMe Flush is harmless where it
 * has none), no FUA (the block layer then flushes after a FUA write).
 * The largest request is max_io rounded down to UBLK_MAP_PAGE (the
 * driver rounds the request buffer so).
 * Return: 0; -EINVAL for a block size that is not a power of two in
 * 512 .. UBLK_MAP_PAGE (the driver's limit: its page size), a max_io
 * below one page, or a size of 0.
 */
int ublk_params_from_geom(const struct ublk_geom *g, struct ublk_params *p);

/* The NVMe command of one ublk request. */
enum ublk_nvme_op {
	UBLK_NVME_READ = 1,
	UBLK_NVME_WRITE,
	UBLK_NVME_FLUSH,
	UBLK_NVME_DEALLOCATE,
	UBLK_NVME_WRITE_ZEROES,
};

struct ublk_nvme_cmd {
	uint8_t op;	 /* enum ublk_nvme_op */
	bool deallocate; /* WRITE_ZEROES: DEAC (not NOUNMAP) */
	uint64_t slba;	 /* first block */
	uint32_t nlb;	 /* blocks (0 for FLUSH) */
	uint32_t bytes;	 /* READ / WRITE: the length, a success's result */
};

/*
 * ublk_cmd_of - the command for request @iod on a device of @g.
 * Return: 0; -EOPNOTSUPP for an operation the device did not announce
 * (WRITE_SAME, DISCARD or WRITE_ZEROES without support); -EINVAL for a
 * range not aligned to the block size, past the end, empty (but for a
 * flush) or larger than one command takes.
 */
int ublk_cmd_of(const struct ublksrv_io_desc *iod, const struct ublk_geom *g,
		struct ublk_nvme_cmd *out);

/* The result to commit for a command that ended with @status (0 or
 * -errno of the host library): on success the byte count of a read or
 * write, 0 for the others (a discard's length may pass 2 GiB: the
 * driver reads any negative result as an error), else an errno
 * the block layer maps to its status (-EIO for an NVMe error, -ENOLINK
 * for a transport that stayed down, -ENODEV for a controller lost). */
int32_t ublk_result_of(const struct ublk_nvme_cmd *c, int status);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_UBLK_MAP_H */
