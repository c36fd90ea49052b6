/*
 * qp/res_fit.h - a res's options against a device's limits (internal).
 *
 * Every limit a res runs into is known when the device is opened: the
 * SRQ's work requests (max_srq_wr), a CQ's entries (max_cqe), a QP's work
 * requests and SGEs (max_qp_wr, max_sge), the CQs and MRs a process may
 * create (max_cq, max_mr) and an MR's size (max_mr_size).  wqp_res_fit()
 * checks the options once against them, so that a shard never finds out
 * one request at a time.  The rule, per option:
 *
 *  - a size the caller asked for that no device resource can hold is
 *    refused (-EINVAL): srq_depth (above max_srq_wr, or above max_cqe: the
 *    receive CQ holds every SRQ buffer), sq_depth (above max_qp_wr or
 *    cq_max: one send queue must fit one CQ), max_send_sge, a private
 *    receive queue (recv_credits with no_srq) above max_qp_wr, one chunk
 *    of receive buffers above max_mr_size;
 *  - a ceiling (how far something may grow) is clamped to what the device
 *    allows, with a note naming the limit: srq_max (max_srq_wr, max_cqe,
 *    and max_mr / 2 chunks), cq_max and cq_size (max_cqe), send_cq_max
 *    (max_cq - 1), pool_size (max_qp / 4);
 *  - a bad combination of options is refused as before (srq_limit or
 *    recv_reserve not below srq_depth, pool_low_water above pool_size).
 *
 * Pure: device limits come in as numbers, so unit tests drive every rule.
 */
#ifndef WHARF_QP_RES_FIT_H
#define WHARF_QP_RES_FIT_H

#include <stdint.h>

#include "qp/qp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* WRs chained into one ibv_post_send() / receives into one post. */
#define WQP_POST_BATCH 64u
/* Send CQs a res may have: default and limit of send_cq_max. */
#define WQP_DEFAULT_SEND_CQ_MAX 32u
#define WQP_SEND_CQ_LIMIT	1024u

/* The device limits a res's options are checked against. */
struct wqp_dev_limits {
	uint32_t max_cqe;
	uint32_t max_cq;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_srq; /* 0: no SRQ support */
	uint32_t max_srq_wr;
	uint32_t max_mr;
	uint64_t max_mr_size;
};

enum wqp_fit_action {
	WQP_FIT_CLAMPED, /* lowered to @allowed */
	WQP_FIT_REFUSED, /* the options are refused */
};

/* One option that did not fit as given. */
struct wqp_fit_note {
	enum wqp_fit_action action;
	const char *option; /* the field of wharf_qp_res_opts */
	const char *limit;  /* the device attribute, or the other option */
	uint64_t asked;
	uint64_t allowed;
};

#define WQP_FIT_NOTES_MAX 16

struct wqp_fit {
	struct wqp_fit_note notes[WQP_FIT_NOTES_MAX];
	unsigned n;
};

/**
 * wqp_res_fit() - fill @o's defaults and fit it to @d.
 * @o: resolved in place: defaults filled, ceilings clamped.
 * @fit: receives one note per option clamped or refused (not filled when
 * NULL).
 * Return: 0 when @o can be used (notes may tell what was clamped);
 * -EINVAL when an option is refused (a note says which, unless it is a
 * combination of options with no device limit involved).
 * Context: any thread; pure.
 */
int wqp_res_fit(struct wharf_qp_res_opts *o, const struct wqp_dev_limits *d,
		struct wqp_fit *fit);

/**
 * wqp_fit_note_format() - one line telling what @n did, for the log.
 * Return: the length snprintf() reports.
 * Context: any thread; pure.
 */
int wqp_fit_note_format(const struct wqp_fit_note *n, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
