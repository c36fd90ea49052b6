/*
 * targets/nvmf/bdev_status.h - a backend's error as the NVMe status a host
 * expects, and the class it is counted in.
 *
 *   EIO ENODATA EILSEQ EBADMSG EREMOTEIO  media: Unrecovered Read Error
 *                                         (a read) or Write Fault; no DNR
 *                                         (another try may succeed)
 *   ENOSPC EDQUOT EFBIG                   Capacity Exceeded, DNR
 *   EROFS; EPERM EACCES on a write        Namespace Is Write Protected, DNR
 *   EAGAIN EBUSY ENOMEM EINTR ETIMEDOUT
 *   ECANCELED ENOLINK                     Internal Error, no DNR
 *   anything else                         Internal Error, DNR
 */
#ifndef WHARF_TARGETS_NVMF_BDEV_STATUS_H
#define WHARF_TARGETS_NVMF_BDEV_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The class a backend error is counted in. */
enum nvmf_bdev_err {
	NVMF_BDEV_ERR_MEDIA = 0,
	NVMF_BDEV_ERR_CAPACITY,
	NVMF_BDEV_ERR_WRITE_PROTECT,
	NVMF_BDEV_ERR_INTERNAL,
	NVMF_BDEV_ERR_CLASSES
};

/**
 * nvmf_bdev_status() - the status field for a failed backend operation.
 * @err: the error, negative (-EIO) or positive (EIO); 0 is treated as
 *	-EIO (an operation that moved nothing).
 * @read: the command reads (Read); else it writes (Write, Write Zeroes,
 *	Dataset Management, Flush).
 * @cls: receives the class (may be NULL).
 *
 * Return: the 15-bit status field (SCT, SC, DNR as the table above).
 * Context: any thread; pure.
 */
uint16_t nvmf_bdev_status(int err, bool read, enum nvmf_bdev_err *cls);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_BDEV_STATUS_H */
