/*
 * <wharf/nvmf_host.h> - a userspace NVMe over Fabrics host (initiator) on
 * RDMA, a module of libwharf.
 *
 * A controller (struct wharf_nvmf_host) is one association with an NVM
 * subsystem of an NVMe-oF RDMA target (nvmet-rdma, wharf-nvmf-tgt,
 * SPDK ...): an admin queue on shard 0 and N I/O queues, queue i on shard
 * i % shards, each a wharf connection (<wharf/cm.h>) on the caller's cm.
 * wharf_nvmf_host_connect() runs the whole bring-up (CM private data,
 * Fabrics Connect, CC.EN and CSTS.RDY, Identify, the I/O queues);
 * keep-alive and Asynchronous Event Requests run from then on.
 *
 * I/O calls may come from any thread and complete through a callback on
 * the queue's owner shard, once; data moves through bounce buffers the
 * library registered, or straight from memory the caller registered
 * (wharf_nvmf_host_mem_reg()).  A timeout, a bad response, a failed work
 * request, the target's disconnect or a failed keep-alive is a loss of
 * the controller: it reconnects after reconnect_delay_ms until
 * ctrl_loss_tmo_ms, holding the commands that got no completion and
 * sending them again on the same queue (a command the controller
 * answered is never resent), then goes DEAD (-ENODEV).
 * Errors are negative errno values; 0 means success.
 *
 * The contract step by step and the reasoning: docs/design/nvmf_host.md.
 */
#ifndef WHARF_NVMF_HOST_H
#define WHARF_NVMF_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include <wharf/cm.h>
#include <wharf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A connected controller: admin queue, I/O queues, namespaces (opaque). */
struct wharf_nvmf_host;
/** One I/O queue of a controller, owned by one shard (opaque). */
struct wharf_nvmf_host_queue;

/** Default I/O queue size (entries). */
#define WHARF_NVMF_HOST_QUEUE_SIZE 128u
/** Default keep-alive timeout sent in the admin Connect, milliseconds. */
#define WHARF_NVMF_HOST_KATO_MS 5000u
/** Default per-command timeout of I/O commands, milliseconds. */
#define WHARF_NVMF_HOST_IO_TIMEOUT_MS 30000u
/** Default per-command timeout of admin commands, milliseconds. */
#define WHARF_NVMF_HOST_ADMIN_TIMEOUT_MS 10000u
/** Default largest transfer of one command, bytes (before MDTS). */
#define WHARF_NVMF_HOST_MAX_IO_SIZE 131072u
/** Namespaces the host identifies at connect, at most. */
#define WHARF_NVMF_HOST_MAX_NS 64u
/** Default delay before a reconnect attempt, milliseconds. */
#define WHARF_NVMF_HOST_RECONNECT_DELAY_MS 2000u
/** Default time a lost controller keeps reconnecting, milliseconds. */
#define WHARF_NVMF_HOST_CTRL_LOSS_TMO_MS 600000u
/** ctrl_loss_tmo_ms / fast_io_fail_tmo_ms: never. */
#define WHARF_NVMF_HOST_TMO_INFINITE UINT32_MAX
/** ctrl_loss_tmo_ms: DEAD at the first loss; fast_io_fail_tmo_ms: held
 * commands fail at the loss. */
#define WHARF_NVMF_HOST_TMO_AT_ONCE (UINT32_MAX - 1)

/** The controller's state (wharf_nvmf_host_stats(), on_state). */
enum wharf_nvmf_host_state {
	/** The first bring-up, inside wharf_nvmf_host_connect(). */
	WHARF_NVMF_HOST_NEW = 0,
	/** Every queue connected: commands flow. */
	WHARF_NVMF_HOST_LIVE,
	/** Lost: every queue is being closed; user commands are held. */
	WHARF_NVMF_HOST_RESETTING,
	/** Waiting for the reconnect delay, or reconnecting. */
	WHARF_NVMF_HOST_CONNECTING,
	/** wharf_nvmf_host_disconnect() runs. */
	WHARF_NVMF_HOST_DELETING,
	/** ctrl_loss_tmo_ms passed: commands fail with -ENODEV. */
	WHARF_NVMF_HOST_DEAD,
};

/**
 * The controller changed state.  @reason: for RESETTING, why it was lost
 * (-ETIMEDOUT, -ECONNRESET, -EPROTO, -EIO ...), else 0.  Runs on shard
 * 0 (the admin queue's shard); it must not block nor call
 * wharf_nvmf_host_disconnect().
 */
typedef void (*wharf_nvmf_host_state_cb)(enum wharf_nvmf_host_state state,
					 int reason, void *arg);

/** Asynchronous event types (struct wharf_nvmf_host_event type: the
 * AER completion's DW0 bits 2:0). */
enum wharf_nvmf_host_event_type {
	/** Error status (info: the error; log page 01h). */
	WHARF_NVMF_HOST_EVENT_ERROR = 0,
	/** SMART / Health status (log page 02h). */
	WHARF_NVMF_HOST_EVENT_SMART = 1,
	/** Notice (info 00h: namespace attribute changed, log page 04h;
	 * 01h: firmware activation starting, log page 03h). */
	WHARF_NVMF_HOST_EVENT_NOTICE = 2,
	/** Immediate. */
	WHARF_NVMF_HOST_EVENT_IMMEDIATE = 3,
	/** I/O command set specific status. */
	WHARF_NVMF_HOST_EVENT_IO_CMD_SET = 6,
	/** Vendor specific. */
	WHARF_NVMF_HOST_EVENT_VENDOR = 7,
};

/** Notice information: a namespace was added, removed or changed. */
#define WHARF_NVMF_HOST_EVENT_NS_CHANGED 0x00u

/** One asynchronous event the controller reported (on_event). */
struct wharf_nvmf_host_event {
	/** sizeof(struct wharf_nvmf_host_event) (set by the library). */
	size_t size;
	/** The AER completion's DW0 as received, and its fields: type
	 * (enum wharf_nvmf_host_event_type, 2:0), information (15:8), the
	 * log page it names (23:16). */
	uint32_t dw0;
	uint8_t type;
	uint8_t info;
	uint8_t log_page;
	/** The log page read (Get Log Page with RAE clear, which re-enables
	 * the event): 0 and @log / @log_len its bytes; -EIO when the
	 * controller failed it (@log_nvme_status says how); -EOPNOTSUPP
	 * when the host does not read that page (only 01h error, 02h
	 * SMART, 03h firmware slot and 04h changed namespaces are read).
	 * An event whose log read or rescan the loss of the admin queue
	 * cut short is neither reported nor counted: the reconnect
	 * identifies the namespaces again and arms new AERs. */
	int log_status;
	uint16_t log_nvme_status;
	/** The log's bytes (NULL when none), valid during the callback. */
	const void *log;
	uint32_t log_len;
	/** Namespace attribute notices: NSIDs in the Changed Namespace
	 * List (-1: more than 1024).  The host then identified the active
	 * namespaces again: @rescan_status 0 when wharf_nvmf_host_info()
	 * nr_ns and wharf_nvmf_host_ns() now show the new list (sizes
	 * included), else why not (-EIO: the controller failed an
	 * Identify; -ENOMEM; the list is unchanged).  Other events: 0 and
	 * 0. */
	int nr_changed;
	int rescan_status;
};

/**
 * The controller reported an asynchronous event: @ev (owned by the
 * library, valid during the call).  Runs on shard 0 (the admin queue's
 * shard) once the event's log page was read (and, for a namespace
 * notice, the namespaces identified again); it must not block nor call
 * wharf_nvmf_host_disconnect().  No RCU rule.
 */
typedef void (*wharf_nvmf_host_event_cb)(const struct wharf_nvmf_host_event *ev,
					 void *arg);

/** Options for wharf_nvmf_host_connect(); start from _opts_init(). */
struct wharf_nvmf_host_opts {
	/** sizeof(struct wharf_nvmf_host_opts) as compiled by the caller
	 * (a caller built before on_event was appended passes its smaller
	 * size: the members past it count as 0). */
	size_t size;
	/** The connection manager the queues connect on (required); it must
	 * outlive the controller. */
	struct wharf_cm *cm;
	/** The target's address with its port, e.g. 4420 (required;
	 * copied). */
	const struct sockaddr *dst;
	/** Subsystem NQN (required, at most 223 bytes; copied). */
	const char *subnqn;
	/** Host NQN, or NULL: the first line of /etc/nvme/hostnqn, else
	 * "nqn.2014-08.org.nvmexpress:uuid:" and the host ID. */
	const char *hostnqn;
	/** Host ID (16 bytes, copied), or NULL: as nvme-cli decides it -
	 * the UUID in /etc/nvme/hostid, else the UUID of the host NQN in use
	 * (@hostnqn, else /etc/nvme/hostnqn's) when it is in UUID form,
	 * else random (a new host to the target on every connect). */
	const uint8_t *hostid;
	/** I/O queues to ask for; 0 = one per shard.  The controller may
	 * grant fewer (Set Features Number of Queues). */
	unsigned nr_io_queues;
	/** Entries per I/O queue; 0 = WHARF_NVMF_HOST_QUEUE_SIZE; clamped
	 * to the controller's CAP.MQES + 1; at least 2. */
	uint32_t queue_size;
	/** Keep-alive timeout, ms; 0 = WHARF_NVMF_HOST_KATO_MS (rounded up
	 * to seconds by the controller); see no_keep_alive. */
	uint32_t kato_ms;
	/** Send KATO 0 and no Keep Alive commands. */
	bool no_keep_alive;
	/** Per-command timeouts, ms; 0 = the defaults above. */
	uint32_t io_timeout_ms;
	uint32_t admin_timeout_ms;
	/** Largest transfer of one command, bytes; 0 =
	 * WHARF_NVMF_HOST_MAX_IO_SIZE; clamped to MDTS.  Each command slot
	 * holds a registered buffer of this size. */
	uint32_t max_io_size;
	/** Never put write data in the command capsule. */
	bool no_in_capsule;
	/** The whole bring-up, ms; 0 = 30000. */
	uint32_t connect_timeout_ms;
	/** Delay before the first reconnect attempt after a loss, ms;
	 * doubled after each failed attempt, at most 8 times this; 0 =
	 * WHARF_NVMF_HOST_RECONNECT_DELAY_MS. */
	uint32_t reconnect_delay_ms;
	/** How long after a loss the controller keeps reconnecting, ms;
	 * 0 = WHARF_NVMF_HOST_CTRL_LOSS_TMO_MS; WHARF_NVMF_HOST_TMO_AT_ONCE
	 * = DEAD at the first loss; WHARF_NVMF_HOST_TMO_INFINITE = forever. */
	uint32_t ctrl_loss_tmo_ms;
	/** After a loss, fail held commands with -ENOLINK after this many
	 * ms while reconnecting goes on; 0 = never (as
	 * WHARF_NVMF_HOST_TMO_INFINITE); WHARF_NVMF_HOST_TMO_AT_ONCE = at the
	 * loss. */
	uint32_t fast_io_fail_tmo_ms;
	/** Called on each state change (may be NULL), with state_arg. */
	wharf_nvmf_host_state_cb on_state;
	void *state_arg;
	/** Called on each asynchronous event (may be NULL: the events are
	 * still handled and counted), with event_arg. */
	wharf_nvmf_host_event_cb on_event;
	void *event_arg;
	/** In-band authentication (DH-HMAC-CHAP, NVMe base 2.0 8.13), as
	 * nvme-cli's --dhchap-secret: the host's secret,
	 * "DHHC-1:XX:<base64>:", or NULL.  Used when a Connect response
	 * asks for authentication (ATR): that queue then runs a transaction
	 * (SHA-256/384/512, the null group or ffdhe2048..8192, as the
	 * controller picks) before anything else, at every (re)connect.
	 * As with the Linux host, a controller that does not ask is not
	 * authenticated, even with dhchap_ctrl_secret set.  Copied, and
	 * cleansed at disconnect. */
	const char *dhchap_secret;
	/** The controller's secret (--dhchap-ctrl-secret), or NULL: with it
	 * the host asks for bidirectional authentication and checks the
	 * controller's response.  Requires dhchap_secret.  Copied. */
	const char *dhchap_ctrl_secret;
};

/**
 * wharf_nvmf_host_opts_init - zero @opts (every 0 a default) and set its
 * size.
 * @opts: the options to fill, or NULL (nothing is done).
 * Context: any thread; non-blocking.  No RCU rule.
 */
void wharf_nvmf_host_opts_init(struct wharf_nvmf_host_opts *opts);

/**
 * wharf_nvmf_host_connect - connect a controller: admin queue, bring-up,
 * I/O queues (see the top of this header).
 * @opts: options; cm, dst and subnqn are required.  Not retained.
 * @out: receives the controller, owned by the caller
 * (wharf_nvmf_host_disconnect()).
 *
 * On failure every queue already connected is disconnected and freed
 * before the call returns, and the reason - the step, the NVMe-oF or
 * NVMe status and the field it names - is logged at WHARF_LOG_ERROR
 * through the log callback of the cm's context, as one line
 * "nvmf host: SUBNQN: REASON" (later events of a live controller are
 * logged at WHARF_LOG_WARN).
 *
 * Return: 0; -EINVAL for NULL arguments or bad options (a size too small
 * for the size field, or larger with a member this library does not know
 * set; an NQN longer than 223 bytes; queue_size 1; a DH-HMAC-CHAP secret
 * not in the DHHC-1 form, or a controller secret without a host secret);
 * -ECONNREFUSED when the target
 * rejected a queue's connection (CM REJ with the NVMe-oF status) or
 * failed a Fabrics Connect (unknown subsystem, host not allowed: the
 * log names the status and the field); -ETIMEDOUT when a step, CSTS.RDY (CAP.TO)
 * or the whole bring-up (connect_timeout_ms) timed out; -EHOSTUNREACH when
 * the address or route did not resolve or the peer did not answer;
 * -EPROTO when the controller answered something this host cannot use
 * (a malformed response, no I/O queue granted, no usable namespace data);
 * -EIO when an admin command failed with an NVMe status; -EACCES when
 * the controller requires authentication and no dhchap_secret was given,
 * or requires a secure channel (TLS, which RDMA does not have);
 * -EKEYREJECTED when authentication failed (the controller refused the
 * host's response, or the controller's response was wrong: the log
 * names which, with the controller's reason); -ENOMEM; -errno
 * from wharf_connect(), memory registration or the shards.
 * Context: an application thread, not a shard thread of the cm's context
 * (it waits for the shards); blocks up to connect_timeout_ms.  No RCU rule.
 */
int wharf_nvmf_host_connect(const struct wharf_nvmf_host_opts *opts,
			    struct wharf_nvmf_host **out);

/**
 * wharf_nvmf_host_disconnect - end the association and free @host.
 * @host: the controller, or NULL (nothing is done).
 *
 * Stops the keep-alive and any reconnecting; completes every outstanding
 * or held command with -ECONNABORTED (on its owner shard); disconnects
 * the I/O queues; waits until every I/O call made from another thread
 * has reached its shard (one still in flight then completes with
 * -ENOTCONN); frees the registrations left (wharf_nvmf_host_mem_reg());
 * asks
 * the controller (when LIVE) for a normal shutdown (CC.SHN, then
 * CSTS.SHST, bounded by the admin timeout); disconnects the admin queue; waits until every
 * work request has completed; frees everything.  Callbacks of the
 * commands may run during the call, on their shards.
 *
 * Return: 0; -EDEADLK when called from a shard thread (nothing is done).
 * Context: an application thread, not a shard thread; blocks.  No RCU rule.
 */
int wharf_nvmf_host_disconnect(struct wharf_nvmf_host *host);

/** ONCS bit: the controller takes Dataset Management. */
#define WHARF_NVMF_HOST_ONCS_DSM (1u << 2)
/** ONCS bit: the controller takes Write Zeroes. */
#define WHARF_NVMF_HOST_ONCS_WRITE_ZEROES (1u << 3)

/** What the controller reported and the host negotiated. */
struct wharf_nvmf_host_info {
	/** sizeof(struct wharf_nvmf_host_info) as compiled by the caller
	 * (an older, smaller size gets the members it has). */
	size_t size;
	/** Controller ID the admin Connect returned. */
	uint16_t cntlid;
	/** I/O queues connected. */
	unsigned nr_io_queues;
	/** Entries per I/O queue (and commands outstanding at most). */
	uint32_t queue_size;
	/** Largest transfer of one command, bytes (after MDTS). */
	uint32_t max_io_size;
	/** Largest write sent in the capsule, bytes; 0 = none. */
	uint32_t in_capsule_size;
	/** CAP and VS properties. */
	uint64_t cap;
	uint32_t vs;
	/** Identify Controller: MDTS (power of two of 4 KiB pages, 0 = no
	 * limit), IOCCSZ (16-byte units), ICDOFF, MSDBD, number of
	 * namespaces, KAS. */
	uint8_t mdts;
	uint32_t ioccsz;
	uint16_t icdoff;
	uint8_t msdbd;
	uint32_t nn;
	/** Keep-alive timeout sent, ms (0: none). */
	uint32_t kato_ms;
	/** Serial number, model and firmware, NUL-terminated, trailing
	 * spaces removed. */
	char sn[21];
	char mn[41];
	char fr[9];
	/** The subsystem NQN Identify reported, NUL-terminated. */
	char subnqn[257];
	/** Active namespaces found (wharf_nvmf_host_ns()). */
	unsigned nr_ns;
	/** Identify Controller ONCS: optional NVM commands
	 * (WHARF_NVMF_HOST_ONCS_*). */
	uint16_t oncs;
	/** I/O Command Set specific Identify Controller (CNS 06h) of the
	 * NVM command set, when the controller answered it; all 0 (no
	 * limit) when it failed it (nvmet of Linux 6.1 answers Invalid
	 * Field).  WZSL: Write Zeroes size limit, a power of two of
	 * CAP.MPSMIN pages (0: none); DMRL: most ranges of one Dataset
	 * Management command; DMRSL: most blocks of one range; DMSL: most
	 * blocks of one command (0: none).  wharf_nvmf_host_write_zeroes()
	 * and _dsm_deallocate() refuse what exceeds them with -EINVAL. */
	uint8_t wzsl;
	uint8_t dmrl;
	uint32_t dmrsl;
	uint64_t dmsl;
};

/**
 * wharf_nvmf_host_info - what @host negotiated.
 * @out: filled; @out->size must be set.
 *
 * Constant after the connect except cntlid, which a reconnect renews,
 * and nr_ns, which a namespace attribute notice or a reconnect may
 * change.
 *
 * Return: 0; -EINVAL for NULL arguments or a size too small for the size
 * field (a larger one is filled up to this library's struct, the rest
 * zeroed).
 * Context: any thread; takes the controller's lock for the copy (never
 * held long).  No RCU rule.
 */
int wharf_nvmf_host_info(const struct wharf_nvmf_host *host,
			 struct wharf_nvmf_host_info *out);

/** One active namespace. */
struct wharf_nvmf_host_ns {
	/** sizeof(struct wharf_nvmf_host_ns) as compiled by the caller. */
	size_t size;
	/** Namespace ID. */
	uint32_t nsid;
	/** Logical block size in bytes (the formatted LBA format). */
	uint32_t block_size;
	/** Size in logical blocks (NSZE). */
	uint64_t nblocks;
	/** Identify Namespace DLFEAT, as reported. */
	uint8_t dlfeat;
	/** DLFEAT promises that deallocated blocks (Dataset Management
	 * Deallocate, Write Zeroes with deallocate) read as zeroes. */
	bool dealloc_reads_zero;
};

/**
 * wharf_nvmf_host_ns - the @index-th active namespace.
 * @index: 0 .. nr_ns - 1 (wharf_nvmf_host_info()).
 * @out: filled; @out->size must be set.
 *
 * The list changes when a namespace attribute notice (on_event) or a
 * reconnect finds other namespaces: indexes then move; match on nsid.
 *
 * Return: 0; -EINVAL for NULL arguments or a bad size; -ENOENT for an
 * index past the last namespace.
 * Context: any thread; takes the controller's lock for the copy (never
 * held long).  No RCU rule.
 */
int wharf_nvmf_host_ns(const struct wharf_nvmf_host *host, unsigned index,
		       struct wharf_nvmf_host_ns *out);

/**
 * wharf_nvmf_host_queue - the @index-th I/O queue of @host.
 * @index: 0 .. nr_io_queues - 1.
 * Return: the queue (owned by @host), or NULL for a NULL @host or a bad
 * index.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_nvmf_host_queue *
wharf_nvmf_host_queue(const struct wharf_nvmf_host *host, unsigned index);

/**
 * wharf_nvmf_host_queue_shard - the shard that owns @q: where its
 * commands are submitted and complete.
 * Return: the shard, or NULL for a NULL @q.
 * Context: any thread; non-blocking.  No RCU rule.
 */
struct wharf_shard *
wharf_nvmf_host_queue_shard(const struct wharf_nvmf_host_queue *q);

/**
 * A command completed.  @status: 0; -EIO when the controller returned an
 * NVMe error (@nvme_status holds it: SC 7:0, SCT 10:8, DNR 14; never
 * retried by the library, DNR or not); -ENODEV
 * when the controller was lost for good (ctrl_loss_tmo_ms) first;
 * -ENOLINK when fast_io_fail_tmo_ms failed it while reconnecting;
 * -ECONNABORTED when the controller was disconnected first; the reason of
 * the last loss (-ETIMEDOUT when the command outlived its timeout,
 * -ECONNRESET, -EPROTO ...) when it had been sent 6 times and the queue
 * was lost every time.  A command outstanding at a loss (its timeout is
 * one) is otherwise held and sent again, not failed.  For a call made off
 * the owner shard, also the error the call would have returned on the
 * owner shard (-EAGAIN, -ENODEV, -ENOLINK, -ENOTCONN, -errno of the post
 * or of registering the caller's memory).  Runs on the queue's owner
 * shard, never inside a submission call.  It may submit again.
 */
typedef void (*wharf_nvmf_host_cb)(int status, uint16_t nvme_status, void *arg);

/**
 * wharf_nvmf_host_read - read @nlb blocks from @slba of namespace @nsid
 * into @buf.
 * @q: an I/O queue.
 * @nsid: an active namespace ID.
 * @slba: first logical block.
 * @nlb: number of blocks (>= 1); nlb * block size at most max_io_size.
 * @buf: receives the data; must stay valid until @cb runs.  The library
 * copies into it just before @cb.
 * @cb: completion callback (required), with @arg.
 * @arg: its argument.
 *
 * While the controller reconnects the command is held (it counts as
 * outstanding) and sent once the queue is connected again.
 *
 * Return: 0 (@cb runs exactly once, later); -EINVAL for NULL arguments,
 * @nlb 0, an unknown @nsid or a transfer above max_io_size.  On the owner
 * shard also: -EAGAIN when queue_size commands are outstanding or held;
 * -ENODEV when the controller is DEAD; -ENOLINK after fast_io_fail_tmo_ms
 * until the queue is connected again; -ENOTCONN when disconnecting;
 * -errno of the post.  From another thread those reach @cb instead, and
 * the call returns -EAGAIN when the calling thread's submission ring to
 * @q is full (queue_size commands the owner shard has not taken yet:
 * nothing sent, retry later), -ENOMEM when the ring cannot be opened.
 * Context: any thread; non-blocking.  From another thread than the owner
 * shard the command goes on that thread's own ring to @q (opened on its
 * first call, freed at thread exit or disconnect): no message, no lock,
 * and a message to the owner only to wake it when it sleeps.  Not after
 * wharf_nvmf_host_disconnect() was called: every call that returned 0
 * before it still completes once.  No RCU rule.
 */
int wharf_nvmf_host_read(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			 uint64_t slba, uint32_t nlb, void *buf,
			 wharf_nvmf_host_cb cb, void *arg);

/**
 * wharf_nvmf_host_write - write @nlb blocks from @buf to @slba of
 * namespace @nsid.
 * @q: an I/O queue.
 * @nsid: an active namespace ID.
 * @slba: first logical block.
 * @nlb: number of blocks (>= 1); nlb * block size at most max_io_size.
 * @buf: the data.  On the owner shard it is copied during the call
 * (reusable at once); from another thread it is copied on the owner
 * shard, so it must stay valid and unchanged until @cb runs (as a read's
 * buffer; copying it at the call would cost every caller a copy of its
 * own).
 * @cb: completion callback (required), with @arg.
 * @arg: its argument.
 *
 * Up to in_capsule_size bytes travel in the command capsule, more by a
 * keyed SGL the controller reads.
 *
 * Return: as wharf_nvmf_host_read().
 * Context: as wharf_nvmf_host_read().
 */
int wharf_nvmf_host_write(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			  uint64_t slba, uint32_t nlb, const void *buf,
			  wharf_nvmf_host_cb cb, void *arg);

/**
 * wharf_nvmf_host_flush - flush namespace @nsid's volatile write cache.
 * @q: an I/O queue.
 * @nsid: an active namespace ID.
 * @cb: completion callback (required), with @arg.
 * @arg: its argument.
 * Return: as wharf_nvmf_host_read().
 * Context: as wharf_nvmf_host_read().
 */
int wharf_nvmf_host_flush(struct wharf_nvmf_host_queue *q, uint32_t nsid,
			  wharf_nvmf_host_cb cb, void *arg);

/** Most blocks one Write Zeroes command covers (NLB is 16 bits). */
#define WHARF_NVMF_HOST_WZ_MAX_BLOCKS 65536u
/** Most ranges of one Dataset Management command. */
#define WHARF_NVMF_HOST_DSM_MAX_RANGES 256u

/**
 * wharf_nvmf_host_write_zeroes - set @nlb blocks from @slba of namespace
 * @nsid to zeroes (NVMe Write Zeroes) without moving data.
 * @q: an I/O queue.
 * @nsid: an active namespace ID.
 * @slba: first logical block.
 * @nlb: number of blocks, 1 .. WHARF_NVMF_HOST_WZ_MAX_BLOCKS; the range
 * must lie inside the namespace.
 * @deallocate: set DEAC: the controller may deallocate the blocks
 * instead of writing them (they read as zeroes either way).
 * @cb: completion callback (required), with @arg.
 * @arg: its argument.
 *
 * Return: 0 (@cb runs exactly once, later); -EOPNOTSUPP when Identify
 * Controller ONCS lacks Write Zeroes; -EINVAL for NULL arguments, @nlb 0
 * or above WHARF_NVMF_HOST_WZ_MAX_BLOCKS or the controller's WZSL
 * (wharf_nvmf_host_info() wzsl), an unknown @nsid or a range past the
 * end of the namespace; the others (on the owner shard, or through @cb
 * from another thread) as wharf_nvmf_host_read().
 * Context: as wharf_nvmf_host_read().
 */
int wharf_nvmf_host_write_zeroes(struct wharf_nvmf_host_queue *q, uint32_t nsid,
				 uint64_t slba, uint32_t nlb, bool deallocate,
				 wharf_nvmf_host_cb cb, void *arg);

/** One range of blocks for wharf_nvmf_host_dsm_deallocate(). */
struct wharf_nvmf_host_range {
	/** First logical block. */
	uint64_t slba;
	/** Number of blocks (>= 1, not 0's based). */
	uint32_t nlb;
};

/**
 * wharf_nvmf_host_dsm_deallocate - deallocate (discard, trim) ranges of
 * namespace @nsid: NVMe Dataset Management with the attribute Deallocate.
 * @q: an I/O queue.
 * @nsid: an active namespace ID.
 * @ranges: @nr ranges, each inside the namespace; copied during the call
 * (the range list travels in the capsule when it fits the controller's
 * in-capsule size, else by keyed SGL).
 * @nr: 1 .. WHARF_NVMF_HOST_DSM_MAX_RANGES.
 * @cb: completion callback (required), with @arg.
 * @arg: its argument.
 *
 * Whether the blocks then read as zeroes is the namespace's promise
 * (wharf_nvmf_host_ns() dealloc_reads_zero); a controller may also
 * ignore the hint.
 *
 * Return: 0 (@cb runs exactly once, later); -EOPNOTSUPP when Identify
 * Controller ONCS lacks Dataset Management; -EINVAL for NULL arguments,
 * @nr 0 or above WHARF_NVMF_HOST_DSM_MAX_RANGES, a range of 0 blocks or
 * past the end of the namespace, an unknown @nsid, a range list larger
 * than max_io_size, or above the controller's DMRL (ranges), DMRSL
 * (blocks of a range) or DMSL (blocks in all; wharf_nvmf_host_info());
 * the others (on the owner shard, or through @cb from another thread)
 * as wharf_nvmf_host_read(), except that from another thread the command
 * travels as one message to the owner (its range list is copied into
 * it): -EAGAIN when the owner shard's shared message queue is full,
 * -ENOMEM, -ESHUTDOWN once the context is being destroyed.
 * Context: as wharf_nvmf_host_read(), but one message per call from
 * another thread.
 */
int wharf_nvmf_host_dsm_deallocate(struct wharf_nvmf_host_queue *q,
				   uint32_t nsid,
				   const struct wharf_nvmf_host_range *ranges,
				   unsigned nr, wharf_nvmf_host_cb cb,
				   void *arg);

/**
 * wharf_nvmf_host_batch_begin - open a batch of I/O calls on the calling
 * thread: until the matching wharf_nvmf_host_batch_end(), the calls it
 * makes to queues it does not own still put each command on its
 * submission ring at once, but wake a sleeping owner shard only at the
 * end, once per queue, instead of once per call (as a block layer plug).
 *
 * A caller that makes several calls in a row (a completion batch handed
 * over from a shard, an io_uring-style submission loop) saves the owner a
 * wake-up and a context switch per command; on a CPU the owner shares,
 * that is most of what a call from another thread costs.  An owner that is
 * awake issues the commands as they come; a ring found full wakes its owner
 * at once (the call then returns -EAGAIN as outside a batch).  Batches
 * nest: only the outermost end wakes.  Calls made on the queue's owner
 * shard are not affected (they are issued during the call).
 *
 * A thread must end its batch before wharf_nvmf_host_disconnect() of a
 * queue it submitted to in that batch (a thread that exits with a batch
 * open has it ended by the library).  Until the end, an owner that sleeps may not see the
 * batch's commands, so a thread must not wait for their completions
 * inside the batch.
 *
 * Context: any thread; non-blocking; no memory is allocated.  No RCU rule.
 */
void wharf_nvmf_host_batch_begin(void);

/**
 * wharf_nvmf_host_batch_end - end the calling thread's innermost batch
 * (wharf_nvmf_host_batch_begin()); the outermost end wakes the owner shard
 * of every queue the batch submitted to, if it may be asleep.
 *
 * Return: 0; -EINVAL when the thread has no batch open.
 * Context: the thread that began the batch; non-blocking (an eventfd
 * write per owner that is asleep).  No RCU rule.
 */
int wharf_nvmf_host_batch_end(void);

/** Memory the caller registered for one I/O queue (opaque). */
struct wharf_nvmf_host_mem;

/**
 * wharf_nvmf_host_mem_reg - register @len bytes at @addr for commands on
 * @q that move data straight between the controller and that memory
 * (wharf_nvmf_host_read_mem(), _write_mem()), without bounce buffers.
 * @q: an I/O queue; the registration is valid on this queue only.
 * @addr: the memory, owned by the caller; it must stay allocated until
 * the registration is deregistered (or, when left registered, until
 * wharf_nvmf_host_disconnect() returned).
 * @len: bytes (>= 1).
 * @out: receives the registration, owned by the caller
 * (wharf_nvmf_host_mem_dereg(); disconnect frees those left).
 *
 * The memory is registered (local write, remote read and write) on the
 * protection domain of @q's connection, now when @q is connected, else
 * at its first use; after a reconnect (which may land on another device)
 * it is registered again at its next use.  The controller gets its rkey
 * in keyed SGLs that never ask for invalidation, as for the bounce
 * buffers.
 *
 * Return: 0; -EINVAL for NULL arguments or @len 0; -ENOTCONN when
 * disconnecting; -EDEADLK when called from a shard thread other than
 * @q's owner; -ENOMEM; -errno of ibv_reg_mr() (e.g. -EFAULT for memory
 * that cannot be pinned); -ESHUTDOWN once the context is being destroyed.
 * Context: @q's owner shard, or an application thread (it waits for the
 * owner shard); blocks in verbs calls.  Not after
 * wharf_nvmf_host_disconnect() was called.  No RCU rule.
 */
int wharf_nvmf_host_mem_reg(struct wharf_nvmf_host_queue *q, void *addr,
			    size_t len, struct wharf_nvmf_host_mem **out);

/**
 * wharf_nvmf_host_mem_dereg - deregister and free @mem.
 * @mem: a registration, or NULL (nothing is done).  No command using it
 * may be outstanding (every callback has run).
 * Return: 0; -EDEADLK when called from a shard thread other than the
 * queue's owner (nothing is done); -errno of ibv_dereg_mr() (nothing is
 * done: @mem stays valid); -ESHUTDOWN once the context is being destroyed.
 * Context: as wharf_nvmf_host_mem_reg(); before
 * wharf_nvmf_host_disconnect().  No RCU rule.
 */
int wharf_nvmf_host_mem_dereg(struct wharf_nvmf_host_mem *mem);

/**
 * wharf_nvmf_host_read_mem - wharf_nvmf_host_read() into the caller's
 * registered memory: the controller RDMA WRITEs straight into @buf.
 * @q: an I/O queue.
 * @mem: a registration of @q (wharf_nvmf_host_mem_reg()).
 * @nsid: an active namespace ID.
 * @slba: first logical block.
 * @nlb: number of blocks (>= 1); nlb * block size at most max_io_size.
 * @buf: receives the data; the nlb * block size bytes must lie inside
 * @mem.  Must stay valid until @cb runs; its contents are undefined
 * until then (also when the command fails: a controller lost or
 * disconnected may have written part of it).
 * @cb: completion callback (required), with @arg.
 * @arg: its argument.
 *
 * Return: as wharf_nvmf_host_read(); also -EINVAL for a NULL @mem, a
 * registration of another queue, or @buf not inside @mem; -errno of
 * registering @mem again after a reconnect (on the owner shard, or
 * through @cb).
 * Context: as wharf_nvmf_host_read().
 */
int wharf_nvmf_host_read_mem(struct wharf_nvmf_host_queue *q,
			     struct wharf_nvmf_host_mem *mem, uint32_t nsid,
			     uint64_t slba, uint32_t nlb, void *buf,
			     wharf_nvmf_host_cb cb, void *arg);

/**
 * wharf_nvmf_host_write_mem - wharf_nvmf_host_write() from the caller's
 * registered memory: the controller RDMA READs @buf; a write of at most
 * in_capsule_size bytes is copied into the command capsule instead.
 * @q: an I/O queue.
 * @mem: a registration of @q (wharf_nvmf_host_mem_reg()).
 * @nsid: an active namespace ID.
 * @slba: first logical block.
 * @nlb: number of blocks (>= 1); nlb * block size at most max_io_size.
 * @buf: the data; the nlb * block size bytes must lie inside @mem.  Must
 * stay valid and unchanged until @cb runs (from any thread).
 * @cb: completion callback (required), with @arg.
 * @arg: its argument.
 *
 * Return: as wharf_nvmf_host_read_mem().
 * Context: as wharf_nvmf_host_read().
 */
int wharf_nvmf_host_write_mem(struct wharf_nvmf_host_queue *q,
			      struct wharf_nvmf_host_mem *mem, uint32_t nsid,
			      uint64_t slba, uint32_t nlb, const void *buf,
			      wharf_nvmf_host_cb cb, void *arg);

/** Counters of one queue (owner-written, read anywhere). */
struct wharf_nvmf_host_queue_stats {
	/** sizeof(struct wharf_nvmf_host_queue_stats) as compiled by the
	 * caller. */
	size_t size;
	/** Commands submitted and completed (any status). */
	uint64_t submitted;
	uint64_t completed;
	/** Of the submitted writes: data in the capsule / by keyed SGL. */
	uint64_t in_capsule;
	uint64_t keyed;
	/** Completions with an NVMe error status. */
	uint64_t nvme_errors;
	/** Commands that timed out. */
	uint64_t timeouts;
	/** Response capsules rejected (short, unknown command id). */
	uint64_t bad_responses;
	/** Commands outstanding now. */
	uint32_t outstanding;
	/** Why the queue was last lost (-ETIMEDOUT, -EPROTO for a bad
	 * response, -ECONNRESET for a transport error or disconnect,
	 * -ECONNREFUSED / -EHOSTUNREACH for a failed reconnect), or 0. */
	int error;
	/** Commands sent again after a loss. */
	uint64_t retried;
	/** Held commands failed (-ENODEV, -ENOLINK, too many losses). */
	uint64_t failed_held;
};

/**
 * wharf_nvmf_host_queue_stats - snapshot @q's counters.
 * @out: filled; @out->size must be set.
 * Return: 0; -EINVAL for NULL arguments or a bad size.
 * Context: any thread; non-blocking (each value is read atomically, the
 * whole is not one instant).  No RCU rule.
 */
int wharf_nvmf_host_queue_stats(const struct wharf_nvmf_host_queue *q,
				struct wharf_nvmf_host_queue_stats *out);

/** The controller's state and recovery counters. */
struct wharf_nvmf_host_stats {
	/** sizeof(struct wharf_nvmf_host_stats) as compiled by the caller
	 * (an older, smaller size gets the members it has). */
	size_t size;
	enum wharf_nvmf_host_state state;
	/** Losses (LIVE -> RESETTING). */
	uint64_t losses;
	/** Reconnect attempts started, and those that made it LIVE. */
	uint64_t reconnect_attempts;
	uint64_t reconnects;
	/** Sums over the I/O queues (struct wharf_nvmf_host_queue_stats). */
	uint64_t retried;
	uint64_t failed_held;
	/** Why the controller was last lost, or why the last attempt
	 * failed (-errno), or 0. */
	int last_error;
	/** Asynchronous events received (each reported to on_event). */
	uint64_t events;
	/** Namespace rescans after a namespace attribute notice that
	 * completed (the list published, changed or not). */
	uint64_t ns_rescans;
};

/**
 * wharf_nvmf_host_stats - snapshot @host's state and recovery counters.
 * @host: the controller.
 * @out: filled; @out->size must be set.
 * Return: 0; -EINVAL for NULL arguments or a size too small for the size
 * field (a larger one is filled up to this library's struct, the rest
 * zeroed).
 * Context: any thread; non-blocking (each value is read atomically, the
 * whole is not one instant).  No RCU rule.
 */
int wharf_nvmf_host_stats(const struct wharf_nvmf_host *host,
			  struct wharf_nvmf_host_stats *out);

/**
 * wharf_nvmf_host_state_name - "live", "resetting", ... for @state.
 * @state: a state.
 * Return: a static string; "?" for an unknown value.
 * Context: any thread; non-blocking.  No RCU rule.
 */
const char *wharf_nvmf_host_state_name(enum wharf_nvmf_host_state state);

/** Most Discovery Log Page entries wharf_nvmf_host_discover() returns. */
#define WHARF_NVMF_HOST_DISC_MAX 1024u

/** One Discovery Log Page entry (LID 70h), strings NUL-terminated with
 * trailing spaces removed. */
struct wharf_nvmf_host_disc_entry {
	/** sizeof(struct wharf_nvmf_host_disc_entry) (set by the library). */
	size_t size;
	/** Transport type (1: RDMA), address family (1: IPv4, 2: IPv6),
	 * subsystem type (1: discovery, 2: NVM, 3: current discovery),
	 * transport requirements. */
	uint8_t trtype;
	uint8_t adrfam;
	uint8_t subtype;
	uint8_t treq;
	/** Port ID, controller ID (0xFFFF: dynamic), admin queue size. */
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	/** Transport service ID (the port, e.g. "4420"). */
	char trsvcid[33];
	/** Subsystem NQN. */
	char subnqn[257];
	/** Transport address (e.g. "10.0.0.1"). */
	char traddr[257];
	/** RDMA transport specific address subtype (trtype 1): QP type,
	 * provider type, connection management service, partition key. */
	uint8_t rdma_qptype;
	uint8_t rdma_prtype;
	uint8_t rdma_cms;
	uint16_t rdma_pkey;
};

/**
 * wharf_nvmf_host_discover - read the Discovery Log Page of a discovery
 * controller.
 * @opts: as for wharf_nvmf_host_connect(): cm and dst are required;
 * subnqn may be NULL (the well-known discovery NQN,
 * nqn.2014-08.org.nvmexpress.discovery); I/O queue, recovery and
 * keep-alive options are ignored (admin queue only, KATO 0 as Linux
 * sends for a discovery controller).  Not retained.
 * @out: receives an array of the entries (NULL when there is none),
 * owned by the caller: free() it.
 * @nr: receives the number of entries.
 *
 * Connects the admin queue (Fabrics Connect, CC.EN, CSTS.RDY), reads the
 * log's header (generation counter, number of records), then the whole
 * log (keyed SGL, 4 KiB per command), then the header again; when the
 * generation counter changed meanwhile it reads again (at most 10
 * times).  Disconnects before returning, in every case.  At most
 * WHARF_NVMF_HOST_DISC_MAX entries are read.
 *
 * Return: 0; -EINVAL for NULL arguments or bad options; -ECONNREFUSED,
 * -ETIMEDOUT, -EHOSTUNREACH, -EIO and -ENOMEM as wharf_nvmf_host_connect();
 * -EPROTO when the log is malformed (a bad record format) or kept
 * changing; -EDEADLK when called from a shard thread; -errno from
 * wharf_connect(), memory registration or the shards.  On failure *@out
 * is NULL and *@nr 0, and the reason is logged as for
 * wharf_nvmf_host_connect().
 * Context: an application thread, not a shard thread of the cm's context
 * (it waits for the shards); blocks up to connect_timeout_ms.  No RCU rule.
 */
int wharf_nvmf_host_discover(const struct wharf_nvmf_host_opts *opts,
			     struct wharf_nvmf_host_disc_entry **out,
			     size_t *nr);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_NVMF_HOST_H */
