/*
 * targets/nvmf/bdev_status.c - backend errors to NVMe status (see
 * bdev_status.h).
 */
#include "targets/nvmf/bdev_status.h"

#include <errno.h>

#include "proto/nvme/spec.h"

uint16_t nvmf_bdev_status(int err, bool read, enum nvmf_bdev_err *cls)
{
	enum nvmf_bdev_err c;
	uint16_t sts;

	if (err < 0)
		err = -err;
	if (!err)
		err = EIO;
	switch (err) {
	case EIO:
	case ENODATA:
	case EILSEQ:
	case EBADMSG:
	case EREMOTEIO:
		c = NVMF_BDEV_ERR_MEDIA;
		sts = NVME_STATUS(NVME_SCT_MEDIA,
				  read ? NVME_SC_UNRECOVERED_READ
				       : NVME_SC_WRITE_FAULT);
		break;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		c = NVMF_BDEV_ERR_CAPACITY;
		sts = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_CAP_EXCEEDED) |
		      NVME_DNR;
		break;
	case EPERM:
	case EACCES:
		if (read) { /* refused, not write protected */
			c = NVMF_BDEV_ERR_INTERNAL;
			sts = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) |
			      NVME_DNR;
			break;
		}
		/* fall through */
	case EROFS:
		c = NVMF_BDEV_ERR_WRITE_PROTECT;
		sts = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_NS_WRITE_PROT) |
		      NVME_DNR;
		break;
	case EAGAIN:
	case EBUSY:
	case ENOMEM:
	case EINTR:
	case ETIMEDOUT:
	case ECANCELED:
	case ENOLINK:
		c = NVMF_BDEV_ERR_INTERNAL;
		sts = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL);
		break;
	default:
		c = NVMF_BDEV_ERR_INTERNAL;
		sts = NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_INTERNAL) |
		      NVME_DNR;
		break;
	}
	if (cls)
		*cls = c;
	return sts;
}
