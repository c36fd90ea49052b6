/*
 * cm/conn_param.h - connection parameter negotiation and validation.
 *
 * Pure functions (no device, no shard runtime) that turn what an
 * application asks for into what wharf hands to rdma_connect() /
 * rdma_accept() / rdma_reject(), following the librdmacm man pages
 * (rdma_connect(3), rdma_accept(3)) and what librdmacm and the kernel CM
 * actually do:
 *
 *  - responder_resources / initiator_depth (RC only):
 *    connect: 0xFF means the device maximum (max_qp_rd_atom /
 *    max_qp_init_rd_atom); an explicit value above it is -EINVAL (rejected,
 *    never clamped, so nothing is sent).
 *    accept(NULL): the values of the request (which the kernel has already
 *    swapped to the local point of view) adjusted down to the local device
 *    maximum. Explicit accept values: 0xFF means min(request, device max);
 *    above the device maximum is -EINVAL; an initiator_depth above the
 *    request's is -EINVAL too (rdma_accept(3): it "must be less than or
 *    equal to ... the initiator_depth value reported in the connect request
 *    event"; librdmacm does not check this, wharf does).
 *  - retry_count / rnr_retry_count are 3-bit fields on the wire: values
 *    above 7 become 7, as the kernel does (min, not a mask: 15 -> 7, not 7;
 *    8 -> 7, not 0). retry_count is ignored on accept (the passive QP uses
 *    the requester's value; the kernel does not send it in the REP).
 *  - flow_control is exchanged and reported, never used to configure the
 *    QP; the wire field is one bit, so any non-zero value is sent as 1.
 *  - srq and qp_num always come from the library's QP (struct wcm_qp_info);
 *    the application's fields are ignored, as rdma_accept(3) says for an id
 *    with a QP. Unlike librdmacm's rdma_accept(id without QP, NULL), which
 *    dereferences NULL, accept(NULL) works because the QP is an input here.
 *  - private data: connect <= 56 (RC) / 180 (UD); accept <= 196 (RC) /
 *    136 (UD); reject <= 148 (RC: the REJ field) / 136 (UD: a SIDR REP
 *    with reject status). Over the limit, or NULL with a length: -EINVAL.
 *  - UD (RDMA_PS_UDP): the RDMA read/atomic depths, flow control and retry
 *    counts do not apply and are reported as 0.
 *
 * iWARP limits differ and are not modelled: wharf targets IB and RoCE.
 */
#ifndef WHARF_CM_CONN_PARAM_H
#define WHARF_CM_CONN_PARAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rdma_conn_param;

/* Port space of a connection. */
enum wcm_ps {
	WCM_PS_RC = 0, /* RDMA_PS_TCP: reliable connected (IB CM REQ/REP) */
	WCM_PS_UD = 1, /* RDMA_PS_UDP: unreliable datagram (IB CM SIDR) */
};

/* The CM message that carries a private-data buffer wharf sends. */
enum wcm_msg {
	WCM_MSG_CONNECT = 0, /* rdma_connect: REQ / SIDR REQ */
	WCM_MSG_ACCEPT = 1,  /* rdma_accept: REP / SIDR REP */
	WCM_MSG_REJECT = 2,  /* rdma_reject: REJ / SIDR REP (reject status) */
};

/* 0xFF in responder_resources / initiator_depth: "the device maximum". */
#define WCM_RD_ATOM_DEV_MAX 0xFF
/* retry_count and rnr_retry_count are 3-bit fields; 7 = the maximum. */
#define WCM_RETRY_MAX 7
/* QP numbers are 24-bit. */
#define WCM_QP_NUM_MAX 0xFFFFFFu

/* Private-data limits, in bytes (rdma_connect(3), rdma_accept(3)). */
#define WCM_PDATA_CONNECT_RC 56	 /* REQ 92 bytes - 36-byte rdma_cm header */
#define WCM_PDATA_CONNECT_UD 180 /* SIDR REQ 216 - 36 */
#define WCM_PDATA_ACCEPT_RC  196 /* REP */
#define WCM_PDATA_ACCEPT_UD  136 /* SIDR REP */
#define WCM_PDATA_REJECT_RC  148 /* REJ */
#define WCM_PDATA_REJECT_UD  136 /* SIDR REP with reject status */
/*
 * Largest private data a received event can report: librdmacm's
 * rdma_conn_param/rdma_ud_param carry an 8-bit length.
 */
#define WCM_PDATA_RX_MAX 255

/*
 * Connection parameters, mirroring struct rdma_conn_param. Unlike the
 * librdmacm struct, the private-data length is a size_t, so an oversized
 * length is rejected instead of silently wrapping to 8 bits.
 */
struct wcm_conn_param {
	const void *private_data; /* borrowed; NULL when the length is 0 */
	size_t private_data_len;
	uint8_t responder_resources; /* RC; 0xFF = device maximum */
	uint8_t initiator_depth;     /* RC; 0xFF = device maximum */
	uint8_t flow_control;	     /* RC; reported only */
	uint8_t retry_count;	     /* RC; 3-bit, ignored on accept */
	uint8_t rnr_retry_count;     /* RC; 3-bit */
	uint8_t srq;		     /* from the library's QP */
	uint32_t qp_num;	     /* from the library's QP, 24-bit */
};

/* The two device attributes negotiation needs (struct ibv_device_attr). */
struct wcm_dev_limits {
	uint8_t max_qp_rd_atom;	     /* max responder_resources */
	uint8_t max_qp_init_rd_atom; /* max initiator_depth */
};

/* What the library's QP contributes to the parameters. */
struct wcm_qp_info {
	uint32_t qp_num; /* 24-bit QP number */
	uint8_t srq;	 /* 1 when the QP receives from a shared SRQ */
};

/* A copy of received private data, owned by the connection. */
struct wcm_pdata {
	uint8_t len;
	uint8_t bytes[WCM_PDATA_RX_MAX];
};

/* Role presets for the RDMA read/atomic depths. */
enum wcm_role {
	WCM_ROLE_CUSTOM = 0, /* the application's values, untouched */
	WCM_ROLE_TARGET,     /* issues RDMA READs, serves none */
	WCM_ROLE_HOST,	     /* serves RDMA READs, issues none */
	WCM_ROLE_SYMMETRIC,  /* both directions, as deep as the devices allow */
};

/* explicit_mask bits for wcm_conn_param_preset(): "the app set this". */
#define WCM_CP_EXPLICIT_RESP (1u << 0) /* responder_resources */
#define WCM_CP_EXPLICIT_INIT (1u << 1) /* initiator_depth */

/**
 * wcm_dev_limits_init() - fill device limits from ibv_device_attr values.
 * @out: the limits to fill.
 * @max_qp_rd_atom: ibv_device_attr.max_qp_rd_atom.
 * @max_qp_init_rd_atom: ibv_device_attr.max_qp_init_rd_atom.
 *
 * Values above 254 saturate at 254: the fields on the wire are 8-bit and
 * 0xFF is the "device maximum" sentinel (librdmacm truncates with a cast,
 * which turns 256 into 0; wharf saturates).
 *
 * Return: 0; -EINVAL if @out is NULL or a value is negative.
 * Context: any thread; pure, non-blocking.
 */
int wcm_dev_limits_init(struct wcm_dev_limits *out, int max_qp_rd_atom,
			int max_qp_init_rd_atom);

/**
 * wcm_pdata_limit() - the private-data limit of a message.
 * @msg: the message.
 * @ps: the port space.
 *
 * Return: the limit in bytes (see WCM_PDATA_*), or 0 for an unknown
 * @msg / @ps.
 * Context: any thread; pure, non-blocking.
 */
size_t wcm_pdata_limit(enum wcm_msg msg, enum wcm_ps ps);

/**
 * wcm_pdata_check() - validate private data wharf is about to send.
 * @msg: the message that carries it.
 * @ps: the port space.
 * @data: the bytes; may be NULL when @len is 0.
 * @len: their length.
 *
 * Return: 0 if it may be sent; -EINVAL for an unknown @msg / @ps, @data
 * NULL with @len > 0, or @len above wcm_pdata_limit(@msg, @ps).
 * Context: any thread; pure, non-blocking.
 */
int wcm_pdata_check(enum wcm_msg msg, enum wcm_ps ps, const void *data,
		    size_t len);

/**
 * wcm_retry_clamp() - clamp a retry count to its 3-bit wire field.
 * @count: the requested count.
 *
 * Return: min(@count, 7), as the kernel CM does (min_t(u8, 7, ...)).
 * Context: any thread; pure, non-blocking.
 */
uint8_t wcm_retry_clamp(unsigned int count);

/**
 * wcm_conn_param_connect() - the parameters rdma_connect() will send.
 * @param: what the application asked for, or NULL for the defaults (device
 *         maxima for the depths, retry_count = rnr_retry_count = 7, no
 *         flow control, no private data: what librdmacm sends for NULL).
 *         Borrowed; @out->private_data points to @param->private_data.
 * @ps: the port space.
 * @dev: the local device limits.
 * @qp: the library's QP; its srq and qp_num replace @param's.
 * @out: the negotiated parameters (written only on success).
 *
 * Return: 0; -EINVAL if @dev, @qp or @out is NULL, @ps is unknown,
 * @qp->qp_num is above 24 bits, the private data fails wcm_pdata_check()
 * (56 bytes RC / 180 UD), or (RC) responder_resources is neither 0xFF nor
 * <= max_qp_rd_atom, or initiator_depth is neither 0xFF nor
 * <= max_qp_init_rd_atom.
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_param_connect(const struct wcm_conn_param *param, enum wcm_ps ps,
			   const struct wcm_dev_limits *dev,
			   const struct wcm_qp_info *qp,
			   struct wcm_conn_param *out);

/**
 * wcm_conn_param_accept() - the parameters rdma_accept() will send.
 * @param: what the application asked for, or NULL: then the request's
 *         depths adjusted down to @dev, flow_control echoed from the
 *         request, rnr_retry_count 7 (librdmacm's value for NULL), no
 *         private data. Borrowed; @out->private_data points into it.
 * @req: the request as delivered (wcm_conn_param_recv()), local view.
 * @ps: the port space.
 * @dev: the local device limits.
 * @qp: the library's QP; its srq and qp_num replace @param's.
 * @out: the negotiated parameters (written only on success). For RC,
 *       @out->retry_count reports the request's value clamped to 7, which
 *       is what the passive QP uses; the application's is ignored.
 *
 * Return: 0; -EINVAL if @req, @dev, @qp or @out is NULL, @ps is unknown,
 * @qp->qp_num is above 24 bits, the private data fails wcm_pdata_check()
 * (196 bytes RC / 136 UD), or (RC) responder_resources is neither 0xFF nor
 * <= max_qp_rd_atom, or initiator_depth is neither 0xFF nor <= both
 * max_qp_init_rd_atom and @req->initiator_depth.
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_param_accept(const struct wcm_conn_param *param,
			  const struct wcm_conn_param *req, enum wcm_ps ps,
			  const struct wcm_dev_limits *dev,
			  const struct wcm_qp_info *qp,
			  struct wcm_conn_param *out);

/**
 * wcm_conn_param_preset() - fill the RDMA read/atomic depths from a role.
 * @role: the role.
 * @queue_depth: TARGET: the queue depth, a cap on the initiator depth
 *               (must be >= 1); ignored otherwise.
 * @dev: the local device limits.
 * @req: on the passive side the request (its initiator_depth is the peer's
 *       responder resources, already in the local view); NULL when
 *       connecting.
 * @explicit_mask: WCM_CP_EXPLICIT_* bits of the fields the application set
 *                 itself; those are left untouched (explicit values win).
 * @param: in/out; only responder_resources and initiator_depth change.
 *
 * TARGET: responder 0, initiator min(@queue_depth, max_qp_init_rd_atom,
 * @req->initiator_depth). HOST: responder max_qp_rd_atom, initiator 0.
 * SYMMETRIC: both 0xFF (device maxima on connect, min(request, device) on
 * accept). CUSTOM: nothing changes. The result still goes through
 * wcm_conn_param_connect() / wcm_conn_param_accept().
 *
 * Return: 0; -EINVAL if @dev or @param is NULL, @role is unknown,
 * @explicit_mask has unknown bits, or TARGET with @queue_depth 0.
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_param_preset(enum wcm_role role, uint32_t queue_depth,
			  const struct wcm_dev_limits *dev,
			  const struct wcm_conn_param *req,
			  unsigned int explicit_mask,
			  struct wcm_conn_param *param);

/**
 * wcm_pdata_recv() - copy private data a peer sent.
 * @dst: the connection's copy.
 * @src: the bytes as the transport reports them; may be NULL if @len is 0.
 * @len: the length the transport reports (for IB the whole field, padded
 *       with zeros: e.g. 148 bytes for any REJ).
 *
 * The data is kept with the reported length, never trimmed or parsed.
 *
 * Return: 0; -EINVAL if @dst is NULL; -EPROTO if @src is NULL with
 * @len > 0; -EMSGSIZE if @len > WCM_PDATA_RX_MAX (librdmacm cannot report
 * that). On error @dst holds no data (len 0).
 * Context: any thread; pure, non-blocking.
 */
int wcm_pdata_recv(struct wcm_pdata *dst, const void *src, size_t len);

/**
 * wcm_conn_param_recv() - take the parameters of a received CM event.
 * @ev: event->param.conn of a CONNECT_REQUEST, CONNECT_RESPONSE,
 *      ESTABLISHED or REJECTED event. Its bytes come from the peer.
 * @out: the values as reported (the kernel already swapped the depths to
 *       the local view); qp_num masked to 24 bits; private_data points into
 *       @pdata (NULL when empty).
 * @pdata: receives the private data (wcm_pdata_recv()), so that the event
 *         can be acked (required before rdma_migrate_id) while the data
 *         stays available.
 *
 * Return: 0; -EINVAL if an argument is NULL; -EPROTO / -EMSGSIZE from
 * wcm_pdata_recv() (then @out is zeroed and @pdata empty).
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_param_recv(const struct rdma_conn_param *ev,
			struct wcm_conn_param *out, struct wcm_pdata *pdata);

/**
 * wcm_conn_param_to_rdma() - convert to the librdmacm struct.
 * @param: negotiated parameters (from wcm_conn_param_connect/_accept).
 * @out: the struct for rdma_connect()/rdma_accept(); borrows the private
 *       data of @param.
 *
 * Return: 0; -EINVAL if an argument is NULL, private data is NULL with a
 * length, or the length does not fit the 8-bit field.
 * Context: any thread; pure, non-blocking.
 */
int wcm_conn_param_to_rdma(const struct wcm_conn_param *param,
			   struct rdma_conn_param *out);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_CM_CONN_PARAM_H */
