/*
 * initiators/ublk/ublk_ctrl.c - the ublk control commands: each one an
 * io_uring URING_CMD on /dev/ublk-control, submitted and waited for by
 * the calling thread (the main thread: these block, START_DEV and
 * END_USER_RECOVERY until every queue fetched its requests, STOP_DEV
 * until the disk's I/O drained), each wait with a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <wharf/core.h>

#include "initiators/ublk/ublk.h"

#define CTRL_PATH	"/dev/ublk-control"
#define CTRL_TIMEOUT_MS 30000u

int ublk_ctrl_open(struct ublk_ctrl *c, char *err, size_t errlen)
{
	int rc;

	c->pending = false;
	c->fd = open(CTRL_PATH, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			snprintf(err, errlen,
				 "%s: no such device: the ublk driver is not "
				 "loaded (modprobe ublk_drv; Linux 6.0 or "
				 "later, CONFIG_BLK_DEV_UBLK)",
				 CTRL_PATH);
		else
			snprintf(err, errlen, "%s: %s", CTRL_PATH,
				 strerror(-rc));
		return rc;
	}
	rc = io_uring_queue_init(4, &c->ring, IORING_SETUP_SQE128);
	if (rc) {
		snprintf(err, errlen,
			 "io_uring with 128-byte SQEs: %s (Linux 5.19 or "
			 "later)",
			 strerror(-rc));
		close(c->fd);
		c->fd = -1;
	}
	return rc;
}

void ublk_ctrl_close(struct ublk_ctrl *c)
{
	if (c->fd < 0)
		return;
	io_uring_queue_exit(&c->ring);
	close(c->fd);
	c->fd = -1;
}

/* The pending command's result: its CQE within @timeout_ms, else
 * -ETIMEDOUT (it stays pending). */
int ublk_ctrl_wait(struct ublk_ctrl *c, unsigned timeout_ms)
{
	struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
				       .tv_nsec =
					       (timeout_ms % 1000) * 1000000L};
	uint64_t end = wharf_now_ms() + timeout_ms;
	struct io_uring_cqe *cqe;
	int rc;

	if (!c->pending)
		return -EINVAL;
	for (;;) {
		rc = io_uring_wait_cqe_timeout(&c->ring, &cqe, &ts);
		if (rc == -EINTR && wharf_now_ms() < end)
			continue;
		if (rc == -ETIME || rc == -EINTR)
			return -ETIMEDOUT;
		if (rc)
			return rc;
		break;
	}
	rc = cqe->res;
	io_uring_cqe_seen(&c->ring, cqe);
	c->pending = false;
	return rc < 0 ? rc : 0;
}

/* One command: @buf (@len bytes, in or out) and @data0 inline; its
 * result within @timeout_ms, else -ETIMEDOUT with the command pending
 * (ublk_ctrl_wait()).  A command still pending from before is waited
 * for first (-EBUSY when it does not end). */
static int ctrl_cmd(struct ublk_ctrl *c, uint32_t op, uint32_t id, void *buf,
		    uint16_t len, uint64_t data0, unsigned timeout_ms)
{
	struct io_uring_sqe *sqe;
	struct ublksrv_ctrl_cmd *cmd;
	int rc;

	if (c->pending && ublk_ctrl_wait(c, CTRL_TIMEOUT_MS) == -ETIMEDOUT)
		return -EBUSY;
	sqe = io_uring_get_sqe(&c->ring);
	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 2 * sizeof(*sqe)); /* one 128-byte SQE */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = c->fd;
	sqe->cmd_op = op;
	cmd = (struct ublksrv_ctrl_cmd *)sqe->cmd;
	cmd->dev_id = id;
	cmd->queue_id = (uint16_t)-1;
	cmd->addr = (uint64_t)(uintptr_t)buf;
	cmd->len = len;
	cmd->data[0] = data0;
	rc = io_uring_submit(&c->ring);
	if (rc < 0)
		return rc;
	c->pending = true;
	return ublk_ctrl_wait(c, timeout_ms);
}

int ublk_ctrl_add(struct ublk_ctrl *c, struct ublksrv_ctrl_dev_info *info)
{
	return ctrl_cmd(c, UBLK_U_CMD_ADD_DEV, info->dev_id, info,
			sizeof(*info), 0, CTRL_TIMEOUT_MS);
}

int ublk_ctrl_get_info(struct ublk_ctrl *c, uint32_t id,
		       struct ublksrv_ctrl_dev_info *info)
{
	memset(info, 0, sizeof(*info));
	return ctrl_cmd(c, UBLK_U_CMD_GET_DEV_INFO, id, info, sizeof(*info), 0,
			CTRL_TIMEOUT_MS);
}

int ublk_ctrl_set_params(struct ublk_ctrl *c, uint32_t id,
			 struct ublk_params *p)
{
	return ctrl_cmd(c, UBLK_U_CMD_SET_PARAMS, id, p, sizeof(*p), 0,
			CTRL_TIMEOUT_MS);
}

int ublk_ctrl_get_params(struct ublk_ctrl *c, uint32_t id,
			 struct ublk_params *p)
{
	memset(p, 0, sizeof(*p));
	p->len = sizeof(*p);
	p->types = UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD;
	return ctrl_cmd(c, UBLK_U_CMD_GET_PARAMS, id, p, sizeof(*p), 0,
			CTRL_TIMEOUT_MS);
}

int ublk_ctrl_start(struct ublk_ctrl *c, uint32_t id, int pid)
{
	return ctrl_cmd(c, UBLK_U_CMD_START_DEV, id, NULL, 0, (uint64_t)pid,
			CTRL_TIMEOUT_MS);
}

int ublk_ctrl_stop(struct ublk_ctrl *c, uint32_t id, unsigned timeout_ms)
{
	return ctrl_cmd(c, UBLK_U_CMD_STOP_DEV, id, NULL, 0, 0, timeout_ms);
}

int ublk_ctrl_del(struct ublk_ctrl *c, uint32_t id)
{
	return ctrl_cmd(c, UBLK_U_CMD_DEL_DEV, id, NULL, 0, 0, CTRL_TIMEOUT_MS);
}

int ublk_ctrl_start_recovery(struct ublk_ctrl *c, uint32_t id)
{
	return ctrl_cmd(c, UBLK_U_CMD_START_USER_RECOVERY, id, NULL, 0, 0,
			CTRL_TIMEOUT_MS);
}

int ublk_ctrl_end_recovery(struct ublk_ctrl *c, uint32_t id, int pid)
{
	return ctrl_cmd(c, UBLK_U_CMD_END_USER_RECOVERY, id, NULL, 0,
			(uint64_t)pid, CTRL_TIMEOUT_MS);
}
