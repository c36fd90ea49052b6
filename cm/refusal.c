/*
 * cm/refusal.c - the REJs the library sends on its own: for overload,
 * shutdown, a deferral that ran out, or a request it cannot take.
 *
 * Their private data speaks the peer's protocol; which one a refusal
 * carries is decided by wcm_refusal_payload() (cm/overload.h): the
 * listener's refusal callback's, wharf's busy payload (cm/rej_busy.h) for
 * a REJECT_BUSY listener's wharf clients, or none.  This file only builds
 * the bytes.
 */
#include <string.h>

#include "cm/rt.h"

/* wharf's busy payload, with the owner's load. */
static size_t busy_payload(struct wcm_shard *owner, uint8_t reason,
			   uint8_t *buf)
{
	struct wharf_cm *cm = owner->cm;
	uint64_t hs =
		atomic_load_explicit(&owner->hs_passive, memory_order_relaxed);
	uint64_t load = hs * WCM_BUSY_LOAD_MAX / cm->handshake_cap;
	struct wcm_rej_busy b = {
		.reason = reason,
		.retry_after_ms = cm->busy_retry_after_ms,
		.load_permille =
			(uint16_t)(load > WCM_BUSY_LOAD_MAX ? WCM_BUSY_LOAD_MAX
							    : load),
	};
	size_t len = 0;

	if (wcm_rej_busy_encode(&b, buf, WCM_BUSY_LEN, &len))
		return 0;
	return len;
}

size_t wcm_refusal_pdata(const struct wharf_listener *l,
			 struct wcm_shard *owner,
			 const struct wharf_conn_request *req,
			 enum wcm_refusal why, uint8_t *buf)
{
	size_t max, len;

	if (!l)
		return 0;
	switch (wcm_refusal_payload(l->overload, l->refusal != NULL, why)) {
	case WCM_PAYLOAD_CALLBACK:
		max = l->ps == WCM_PS_UD ? WCM_PDATA_REJECT_UD
					 : WCM_PDATA_REJECT_RC;
		len = l->refusal(req, (enum wharf_refusal)why, buf, max,
				 l->refusal_arg);
		if (len <= max)
			return len;
		wharf_ctx_log(l->cm->ctx, WHARF_LOG_WARN,
			      "cm: refusal callback wrote %zu bytes (max %zu): "
			      "sent without private data",
			      len, max);
		return 0;
	case WCM_PAYLOAD_BUSY:
		return busy_payload(owner, (uint8_t)why, buf);
	case WCM_PAYLOAD_NONE:
		break;
	}
	return 0;
}

enum wcm_ctr wcm_refusal_ctr(enum wcm_refusal why)
{
	switch (why) {
	case WCM_REFUSE_HANDSHAKES:
	case WCM_REFUSE_RECV_BUDGET:
	case WCM_REFUSE_DRAINING:
	case WCM_REFUSE_DEFER_FULL:
		return WCM_C_REJ_BUSY;
	case WCM_REFUSE_DEFER_TIMEOUT:
		return WCM_C_DEFER_EXPIRED;
	default:
		return WCM_C_FAILED;
	}
}

void wcm_refuse(struct wharf_conn *c, enum wcm_refusal why)
{
	uint8_t buf[WCM_PDATA_REJECT_RC];
	size_t len = wcm_refusal_pdata(c->listener, c->sh, &c->pas->req_view,
				       why, buf);

	rdma_reject(c->cm_id, len ? buf : NULL, (uint8_t)len);
	wcm_destroy_id(c);
	c->busy_rejected = true;
	c->in_handshake = false;
	atomic_fetch_sub_explicit(&c->sh->hs_passive, 1, memory_order_relaxed);
	wcm_count(c, wcm_refusal_ctr(why));
}

/* One numbering for the internal, public and busy-payload reasons. */
_Static_assert(
	(int)WCM_REFUSE_HANDSHAKES == (int)WHARF_REFUSAL_HANDSHAKES &&
		(int)WCM_REFUSE_RECV_BUDGET == (int)WHARF_REFUSAL_RECV_BUDGET &&
		(int)WCM_REFUSE_DRAINING == (int)WHARF_REFUSAL_DRAINING &&
		(int)WCM_REFUSE_DEFER_TIMEOUT ==
			(int)WHARF_REFUSAL_DEFER_TIMEOUT &&
		(int)WCM_REFUSE_DEFER_FULL == (int)WHARF_REFUSAL_DEFER_FULL &&
		(int)WCM_REFUSE_RESOURCES == (int)WHARF_REFUSAL_RESOURCES,
	"refusal reasons");
_Static_assert((int)WCM_REFUSE_HANDSHAKES == (int)WCM_BUSY_HANDSHAKES &&
		       (int)WCM_REFUSE_RECV_BUDGET ==
			       (int)WCM_BUSY_RECV_BUDGET &&
		       (int)WCM_REFUSE_DRAINING == (int)WCM_BUSY_DRAINING,
	       "busy payload reasons");
_Static_assert((int)WCM_OVERLOAD_DEFER == (int)WHARF_OVERLOAD_DEFER &&
		       (int)WCM_OVERLOAD_REJECT_BUSY ==
			       (int)WHARF_OVERLOAD_REJECT_BUSY,
	       "overload policies");
