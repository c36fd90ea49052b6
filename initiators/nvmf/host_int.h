/*
 * initiators/nvmf/host_int.h - internals of <wharf/nvmf_host.h>.
 *
 * Ownership.  A queue (admin or I/O) and its command slots belong to the
 * owner shard of its wharf connection; only that thread touches them,
 * except the counters (single writer, relaxed atomics) and the fields
 * the application thread reads after it waited on the host's lock for
 * the queue to be gone.  The bring-up, keep-alive and shutdown state
 * (enum wnh_step) belongs to the admin queue's shard.  The application
 * thread in wharf_nvmf_host_connect() / _disconnect() sends work to the
 * shards and waits on the host's mutex and condition variable: control
 * path only, nothing on the data path takes a lock.
 *
 * Queue life (enum wnh_qstate, changed only on the owner shard):
 *   CONNECTING  wharf_connect() issued; on_established registers the slab
 *               and sends the Fabrics Connect
 *   LIVE        the Connect succeeded: commands flow
 *   FAILED      a timeout, bad response, transport error or refusal:
 *               outstanding commands completed with an error, the
 *               connection closing; submissions get -ENOTCONN
 *   CLOSING     the application disconnects
 * A queue is gone (freeable) once its connection is destroyed and every
 * work request it posted has completed (on_send_done, flushes included).
 *
 * Command slot life: busy from submission until both the SEND's
 * completion and the response have arrived; the callback runs then (or
 * earlier with an error, when the queue fails: the slot then stays busy
 * until its SEND completes, and is never reused by a failed queue).
 */
#ifndef WHARF_INITIATORS_NVMF_HOST_INT_H
#define WHARF_INITIATORS_NVMF_HOST_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/nvmf_host.h>
#include <wharf/qp.h>

#include "initiators/nvmf/cmd.h"

#define NH_WR_TAG	 0x4e564d48u /* "NVMH" */
#define NH_ADMIN_ENTRIES 32u	     /* as Linux: hrqsize 32, hsqsize 31 */
#define NH_ADMIN_BOUNCE	 4096u	     /* Identify data */

enum wnh_qstate {
	NHQ_CONNECTING = 0,
	NHQ_LIVE,
	NHQ_FAILED,
	NHQ_CLOSING,
};

/* Data direction of a command. */
enum wnh_dir {
	NH_DIR_NONE = 0,
	NH_DIR_TO_CTRL,	  /* write, Connect data */
	NH_DIR_FROM_CTRL, /* read, Identify */
};

struct wharf_nvmf_host_queue;

struct wnh_slot {
	struct wharf_wr wr; /* the SEND of the capsule */
	struct wharf_nvmf_host_queue *q;
	wharf_nvmf_host_cb cb; /* NULL once called */
	void *arg;
	void *user_buf; /* FROM_CTRL: copied into at completion */
	uint32_t len;
	uint8_t *capsule; /* in the registered slab */
	uint8_t *bounce;
	uint64_t deadline_ms;
	struct wnh_rsp rsp;
	struct wnh_slot *next_free;
	bool busy, sent, answered;
};

/* Single-writer counters (the owner shard), read anywhere. */
struct wnh_counters {
	atomic_uint_fast64_t submitted, completed, in_capsule, keyed;
	atomic_uint_fast64_t nvme_errors, timeouts, bad_responses;
	atomic_uint_fast32_t outstanding;
	atomic_int error;
};

struct wharf_nvmf_host_queue {
	struct wharf_nvmf_host *h;
	uint16_t qid;
	unsigned shard_index;
	struct wharf_shard *shard;
	uint64_t conn_id;
	struct wharf_conn *conn; /* NULL until the first callback / once
				  * destroyed */
	enum wnh_qstate state;
	bool started;	  /* wharf_connect() succeeded */
	bool established; /* on_established ran */
	bool destroyed;	  /* wharf_conn_destroy() called */
	bool gone;	  /* destroyed and every WR completed */
	uint32_t entries; /* slots = queue entries */
	uint32_t timeout_ms;
	uint32_t in_capsule; /* largest in-capsule write, 0 = none */
	uint32_t capsule_stride, bounce_size;
	uint8_t *slab;
	size_t slab_len;
	struct ibv_mr *mr;
	struct wnh_slot *slots;
	struct wnh_slot *free;
	uint32_t wr_inflight;
	uint64_t last_result; /* DW0/DW1 of the last internal completion */
	struct wharf_timer *sweep;
	struct wnh_counters n;
};

/* Admin-shard state machine: bring-up, then keep-alive, then shutdown. */
enum wnh_step {
	NHS_CONNECT = 0, /* admin Fabrics Connect in flight */
	NHS_CAP,
	NHS_VS,
	NHS_CC,
	NHS_ENABLE,
	NHS_CSTS, /* polling CSTS.RDY until CAP.TO */
	NHS_ID_CTRL,
	NHS_NQUEUES,
	NHS_NS_LIST,
	NHS_ID_NS,     /* one Identify Namespace per active NSID */
	NHS_IO_QUEUES, /* I/O queues connecting */
	NHS_LIVE,      /* keep-alive running */
	NHS_SHN,       /* CC.SHN set, polling CSTS.SHST */
	NHS_STOPPED,   /* failed or shut down: events are ignored */
};

struct wharf_nvmf_host {
	struct wharf_cm *cm;
	struct wharf_ctx *ctx;
	unsigned nshards;
	struct sockaddr_storage dst;
	char subnqn[NVMF_NQN_MAX + 1];
	char hostnqn[NVMF_NQN_MAX + 1];
	uint8_t hostid[NVMF_HOSTID_LEN];
	uint32_t want_queues, want_entries, want_io;
	uint32_t kato_ms, io_timeout_ms, admin_timeout_ms, connect_timeout_ms;
	bool no_in_capsule;

	struct wharf_nvmf_host_queue admin;
	struct wharf_nvmf_host_queue *io; /* want_queues allocated */
	unsigned nio;			  /* granted and connecting */

	/* Admin shard only. */
	enum wnh_step step;
	struct wharf_timer *step_timer; /* CSTS polling */
	struct wharf_timer *ka_timer;	/* keep-alive every KATO/2 */
	bool ka_busy;			/* a Keep Alive is outstanding */
	uint64_t step_deadline_ms;
	uint32_t cc;
	uint32_t *nslist; /* Identify CNS 02h */
	unsigned ns_next;
	uint8_t id_buf[NVMF_IDENTIFY_SIZE];

	/* Written on the admin shard before `done`, read after it. */
	struct wharf_nvmf_host_info info;
	struct wharf_nvmf_host_ns ns[WHARF_NVMF_HOST_MAX_NS];

	/* The application thread's waits. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;	     /* bring-up finished (result says how) */
	int result;	     /* first failure, 0 */
	unsigned io_ready;   /* I/O queues LIVE */
	unsigned calls_left; /* wnh_on_shard_wait() */
	bool shut_down;	     /* NHS_SHN finished */
	char err[256];
};

/* host.c */
uint64_t wnh_now_ms(void);
void wnh_fail(struct wharf_nvmf_host *h, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void wnh_signal(struct wharf_nvmf_host *h);
void wnh_io_ready(struct wharf_nvmf_host *h);

/* queue.c */
extern const struct wharf_conn_ops wnh_conn_ops;
int wnh_queue_start(struct wharf_nvmf_host_queue *q);
int wnh_submit(struct wharf_nvmf_host_queue *q, const union nvmf_cmd *cmd,
	       enum wnh_dir dir, void *buf, uint32_t len, wharf_nvmf_host_cb cb,
	       void *arg);
void wnh_queue_fail(struct wharf_nvmf_host_queue *q, int err);
void wnh_queue_close(struct wharf_nvmf_host_queue *q);
void wnh_queue_free(struct wharf_nvmf_host_queue *q);

/* bringup.c (admin shard) */
void wnh_admin_connected(struct wharf_nvmf_host *h);
void wnh_admin_stop(struct wharf_nvmf_host *h);
void wnh_admin_shutdown(struct wharf_nvmf_host *h);
void wnh_admin_free(struct wharf_nvmf_host *h);

#endif /* WHARF_INITIATORS_NVMF_HOST_INT_H */
