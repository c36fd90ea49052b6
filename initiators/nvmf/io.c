/*
 * initiators/nvmf/io.c - the NVM commands of <wharf/nvmf_host.h>: Read,
 * Write, Flush, Write Zeroes and Dataset Management (Deallocate) on an
 * I/O queue, checked against the controller's ONCS, the namespace and
 * the transfer limit, then handed to the queue's slots (queue.c).
 */
#include <errno.h>

#include "initiators/nvmf/host_int.h"
#include "initiators/nvmf/limits.h"

static const struct wharf_nvmf_host_ns *find_ns(const struct wharf_nvmf_host *h,
						uint32_t nsid)
{
	return wnh_ns_find(h, nsid); /* lock-free, ns.c */
}

static int rw(struct wharf_nvmf_host_queue *q, uint8_t opc, uint32_t nsid,
	      uint64_t slba, uint32_t nlb, void *buf, wharf_nvmf_host_cb cb,
	      void *arg)
{
	const struct wharf_nvmf_host_ns *ns;
	union nvmf_cmd c;
	uint64_t len;

	if (!q || !buf || !cb || nlb == 0 || nlb > 0x10000)
		return -EINVAL;
	if (wharf_shard_current() != q->shard)
		return -EPERM;
	ns = find_ns(q->h, nsid);
	if (!ns || !ns->block_size)
		return -EINVAL;
	len = (uint64_t)nlb * ns->block_size;
	if (len > q->bounce_size)
		return -EINVAL;
	wnh_cmd_rw(&c, opc, nsid, slba, nlb);
	return wnh_submit(
		q, &c, opc == NVMF_IO_WRITE ? NH_DIR_TO_CTRL : NH_DIR_FROM_CTRL,
		buf, (uint32_t)len, cb, arg);
}

int wharf_nvmf_host_read(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			 uint64_t slba, uint32_t nlb, void *buf,
			 wharf_nvmf_host_cb cb, void *arg)
{
	return rw(q, NVMF_IO_READ, nsid, slba, nlb, buf, cb, arg);
}

int wharf_nvmf_host_write(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			  uint64_t slba, uint32_t nlb, const void *buf,
			  wharf_nvmf_host_cb cb, void *arg)
{
	/* wnh_submit only reads a TO_CTRL buffer. */
	return rw(q, NVMF_IO_WRITE, nsid, slba, nlb, (void *)(uintptr_t)buf, cb,
		  arg);
}

int wharf_nvmf_host_flush(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			  wharf_nvmf_host_cb cb, void *arg)
{
	union nvmf_cmd c;

	if (!q || !cb)
		return -EINVAL;
	if (wharf_shard_current() != q->shard)
		return -EPERM;
	if (!find_ns(q->h, nsid))
		return -EINVAL;
	wnh_cmd_flush(&c, nsid);
	return wnh_submit(q, &c, NH_DIR_NONE, NULL, 0, cb, arg);
}

/* The checks every command shares: arguments, owner shard, namespace. */
static int check(struct wharf_nvmf_host_queue *q, uint32_t nsid,
		 wharf_nvmf_host_cb cb, uint16_t oncs_bit,
		 const struct wharf_nvmf_host_ns **ns)
{
	if (!q || !cb)
		return -EINVAL;
	if (wharf_shard_current() != q->shard)
		return -EPERM;
	if (!(q->h->info.oncs & oncs_bit))
		return -EOPNOTSUPP;
	*ns = find_ns(q->h, nsid);
	return *ns ? 0 : -EINVAL;
}

int wharf_nvmf_host_write_zeroes(struct wharf_nvmf_host_queue *q, uint32_t nsid,
				 uint64_t slba, uint32_t nlb, bool deallocate,
				 wharf_nvmf_host_cb cb, void *arg)
{
	const struct wharf_nvmf_host_ns *ns;
	union nvmf_cmd c;
	int rc = check(q, nsid, cb, NVMF_ONCS_WRITE_ZEROES, &ns);

	if (rc)
		return rc;
	if (nlb > wnh_wz_max_blocks(q->h->info.wzsl, q->h->info.cap,
				    ns->block_size) ||
	    !wnh_lba_range_ok(slba, nlb, ns->nblocks))
		return -EINVAL;
	wnh_cmd_write_zeroes(&c, nsid, slba, nlb, deallocate);
	return wnh_submit(q, &c, NH_DIR_NONE, NULL, 0, cb, arg);
}

int wharf_nvmf_host_dsm_deallocate(struct wharf_nvmf_host_queue *q,
				   uint32_t nsid,
				   const struct wharf_nvmf_host_range *ranges,
				   unsigned nr, wharf_nvmf_host_cb cb,
				   void *arg)
{
	struct nvmf_dsm_range r[WHARF_NVMF_HOST_DSM_MAX_RANGES];
	const struct wharf_nvmf_host_ns *ns;
	union nvmf_cmd c;
	int rc = check(q, nsid, cb, NVMF_ONCS_DSM, &ns);

	if (rc)
		return rc;
	if (!ranges || nr == 0 || nr > WHARF_NVMF_HOST_DSM_MAX_RANGES ||
	    wnh_dsm_limits_ok(&q->h->info, ranges, nr))
		return -EINVAL;
	for (unsigned i = 0; i < nr; i++) {
		if (!wnh_lba_range_ok(ranges[i].slba, ranges[i].nlb,
				      ns->nblocks))
			return -EINVAL;
		wnh_dsm_range(&r[i], ranges[i].slba, ranges[i].nlb);
	}
	wnh_cmd_dsm_deallocate(&c, nsid, nr);
	/* wnh_submit copies the list (capsule or bounce buffer) and refuses
	 * one larger than the bounce buffer with -EINVAL. */
	return wnh_submit(q, &c, NH_DIR_TO_CTRL, r, nr * (uint32_t)sizeof(r[0]),
			  cb, arg);
}
