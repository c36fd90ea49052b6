/*
 * cm/dev.c - the RDMA devices of a cm and each shard's resources on them.
 *
 * Every device librdmacm knows is opened once, at wharf_cm_create(), with
 * a wharf_qp_dev (PD, attributes, async-event reader); its index in
 * cm->devs is the device part of the (device, QP number) table key.  UD
 * connections get a PD of their own per device: the application's UD QPs
 * and the address handles of the lookups live there, because qp's async
 * reader tells wharf's QPs from others by their PD.
 * A shard's wharf_qp_res on a device is created the first time one of its
 * connections needs a QP there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rt.h"

int wcm_devs_open(struct wharf_cm *cm, unsigned async_shard)
{
	struct wharf_qp_dev_opts dopts = {.size = sizeof(dopts),
					  .async_shard = async_shard};
	struct ibv_context **list;
	int n = 0, err;

	list = rdma_get_devices(&n);
	if (!list)
		return errno ? -errno : -ENODEV;
	if (n <= 0) {
		rdma_free_devices(list);
		return -ENODEV;
	}
	cm->devs = calloc((size_t)n, sizeof(*cm->devs));
	if (!cm->devs) {
		rdma_free_devices(list);
		return -ENOMEM;
	}
	cm->dev_list = list;
	for (int i = 0; i < n; i++) {
		struct wcm_dev *d = &cm->devs[i];
		const struct ibv_device_attr *a;

		d->index = (unsigned)i;
		d->verbs = list[i];
		snprintf(d->name, sizeof(d->name), "%s",
			 ibv_get_device_name(list[i]->device));
		err = wharf_qp_dev_open(cm->ctx, list[i], &dopts, &d->qdev);
		if (err)
			goto fail;
		cm->ndev++;
		d->ud_pd = ibv_alloc_pd(list[i]);
		if (!d->ud_pd) {
			err = errno ? -errno : -ENOMEM;
			goto fail;
		}
		a = wharf_qp_dev_attr(d->qdev);
		err = wcm_dev_limits_init(&d->lim, a->max_qp_rd_atom,
					  a->max_qp_init_rd_atom);
		if (err)
			goto fail;
		if (d->lim.max_qp_rd_atom > cm->max_rd_atom)
			cm->max_rd_atom = d->lim.max_qp_rd_atom;
		if (d->lim.max_qp_init_rd_atom > cm->max_init_rd_atom)
			cm->max_init_rd_atom = d->lim.max_qp_init_rd_atom;
		if (wharf_numa_device_nodes(cm->numa, d->name, &d->local_nodes))
			d->local_nodes = 0;
		/* The shards' res options, against this device's limits:
		 * refused or clamped now, with the limit named, rather than
		 * found one request at a time. */
		err = wharf_qp_res_opts_fit(d->qdev, &cm->res_opts, NULL);
		if (err)
			goto fail;
	}
	return 0;
fail:
	wcm_devs_close(cm);
	return err;
}

void wcm_devs_close(struct wharf_cm *cm)
{
	for (unsigned i = 0; i < cm->ndev; i++) {
		if (cm->devs[i].ud_pd && ibv_dealloc_pd(cm->devs[i].ud_pd))
			wharf_ctx_log(cm->ctx, WHARF_LOG_ERROR,
				      "cm: %s: UD QPs or address handles left "
				      "on the cm's UD PD; it leaks",
				      cm->devs[i].name);
		wharf_qp_dev_close(cm->devs[i].qdev);
	}
	cm->ndev = 0;
	free(cm->devs);
	cm->devs = NULL;
	if (cm->dev_list)
		rdma_free_devices(cm->dev_list);
	cm->dev_list = NULL;
}

struct wcm_dev *wcm_dev_find(struct wharf_cm *cm, struct ibv_context *verbs)
{
	for (unsigned i = 0; i < cm->ndev; i++)
		if (cm->devs[i].verbs == verbs)
			return &cm->devs[i];
	return NULL;
}

/* The shard's @k-th res on @dev, created if need be. */
static struct wharf_qp_res *res_at(struct wcm_shard *sh, struct wcm_dev *dev,
				   unsigned k, int *err)
{
	struct wharf_qp_res **slot =
		&sh->res[dev->index * sh->cm->res_per_dev + k];

	*err = 0;
	if (!*slot)
		*err = wharf_qp_res_create(dev->qdev, sh->shard,
					   &sh->cm->res_opts, slot);
	return *slot;
}

/*
 * A res is one SRQ, its CQs and a QP pool: bounded by srq_max, cq_max and
 * send_cq_max, which a device caps (rxe and ConnectX: 32,767 SRQ
 * entries, so about that many connections with one receive credit each).
 * A shard that outgrows it makes another, up to res_per_dev, rather than
 * refusing: the first that admits takes the connection, so the earlier
 * ones fill first and a later one exists only once they are full.
 */
struct wharf_qp_res *wcm_res_admitting(struct wcm_shard *sh,
				       struct wcm_dev *dev,
				       const struct wharf_conn_qp_opts *q,
				       int *err)
{
	struct wharf_qp_res *res = NULL;

	/* A private receive queue claims no SRQ credit: the first res. */
	if (q->private_rq)
		return res_at(sh, dev, 0, err);
	for (unsigned k = 0; k < sh->cm->res_per_dev; k++) {
		int rc;

		res = res_at(sh, dev, k, err);
		if (!res)
			return NULL;
		rc = wharf_qp_res_admit(res, q->recv_credits);
		if (rc != -EBUSY) {
			*err = rc;
			return rc ? NULL : res;
		}
	}
	*err = -EBUSY;
	return NULL;
}

void wcm_res_recv_put(struct wcm_shard *sh, struct wcm_dev *dev, void *buf)
{
	for (unsigned k = 0; k < sh->cm->res_per_dev; k++) {
		struct wharf_qp_res *res =
			sh->res[dev->index * sh->cm->res_per_dev + k];

		if (res && !wharf_qp_res_recv_put(res, buf))
			return;
	}
}
