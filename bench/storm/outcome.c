/*
 * bench/storm/outcome.c - outcome accounting: every attempt ends in
 * exactly one outcome, REJs split by who sent them (the server's
 * application reject, wharf's busy REJ, any other reason).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "bench/storm/storm.h"

const char *storm_outcome_name(enum storm_outcome o)
{
	switch (o) {
	case STORM_OUT_NONE:
		return "unaccounted";
	case STORM_OUT_ESTABLISHED:
		return "established";
	case STORM_OUT_REJECTED:
		return "rejected";
	case STORM_OUT_TIMED_OUT:
		return "timed_out";
	case STORM_OUT_UNREACHABLE:
		return "unreachable";
	case STORM_OUT_FAILED:
		return "failed";
	case STORM_OUT_KILLED:
		return "killed";
	default:
		return "?";
	}
}

const char *storm_stamp_name(enum storm_step s)
{
	static const char *const names[STORM_T_COUNT] = {
		"started",	    "admitted",		 "id created",
		"address resolved", "route resolved",	 "qp ready",
		"req sent",	    "rep received",	 "established",
		"message answered", "disconnect called", "disconnected",
		"destroy called",   "destroyed",
	};

	return (unsigned)s < STORM_T_COUNT ? names[s] : "?";
}

/* The last handshake step @c stamped. */
static unsigned last_step(const struct storm_conn *c)
{
	unsigned last = STORM_T_START;

	for (unsigned s = STORM_T_START; s < STORM_T_EST; s++)
		if (c->t[s])
			last = s;
	return last;
}

const char *storm_fail_kind_name(unsigned kind)
{
	/* By the values of enum wharf_conn_error (part of the ABI; client.c
	 * checks them): storm_lib stays free of the RDMA libraries. */
	static const char *const names[] = {
		[0] = "wharf_connect()", /* the call failed */
		[1] = "address",	 [2] = "route",	  [3] = "connect",
		[4] = "unreachable",	 [5] = "timeout", [6] = "device",
	};

	if (kind < sizeof(names) / sizeof(names[0]) && names[kind])
		return names[kind];
	return "other";
}

/* Counts @c's (error, errno) in @out's table. */
static void add_fail(struct storm_outcomes *out, const struct storm_conn *c)
{
	unsigned i;

	for (i = 0; i < out->nfail; i++)
		if (out->fail[i].kind == c->fail_kind &&
		    out->fail[i].err == c->fail_err)
			break;
	if (i == out->nfail) {
		if (out->nfail == STORM_FAIL_REASONS) {
			i = STORM_FAIL_REASONS - 1; /* the rest, together */
			out->fail[i].kind = 0;
			out->fail[i].err = 0;
		} else {
			out->fail[out->nfail++] = (struct storm_fail_reason){
				.kind = c->fail_kind, .err = c->fail_err};
		}
	}
	out->fail[i].n++;
}

void storm_outcomes_add(struct storm_outcomes *out,
			const struct storm_conn *conns, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct storm_conn *c = &conns[i];
		unsigned o = c->outcome < STORM_OUT_COUNT ? c->outcome
							  : STORM_OUT_NONE;

		out->attempts++;
		out->n[o]++;
		if (o == STORM_OUT_TIMED_OUT || o == STORM_OUT_UNREACHABLE ||
		    o == STORM_OUT_FAILED) {
			out->stopped_after[last_step(c)]++;
			add_fail(out, c);
		}
		if (o != STORM_OUT_REJECTED)
			continue;
		if (c->rej_app)
			out->rej_app++;
		else if (c->rej_busy)
			out->rej_busy++;
		else
			out->rej_reason[c->rej_reason % STORM_REJ_REASONS]++;
	}
}

int storm_outcomes_check(const struct storm_outcomes *o, char *err,
			 size_t errlen)
{
	uint64_t sum = 0, rej = o->rej_app + o->rej_busy;

	for (unsigned i = 0; i < STORM_OUT_COUNT; i++)
		sum += o->n[i];
	for (unsigned i = 0; i < STORM_REJ_REASONS; i++)
		rej += o->rej_reason[i];
	if (o->n[STORM_OUT_NONE]) {
		snprintf(err, errlen,
			 "%" PRIu64 " of %" PRIu64 " attempts have no outcome",
			 o->n[STORM_OUT_NONE], o->attempts);
		return -EPROTO;
	}
	if (sum != o->attempts) {
		snprintf(err, errlen,
			 "%" PRIu64 " outcomes for %" PRIu64 " attempts", sum,
			 o->attempts);
		return -EPROTO;
	}
	if (rej != o->n[STORM_OUT_REJECTED]) {
		snprintf(err, errlen,
			 "%" PRIu64 " rejections split by reason, %" PRIu64
			 " rejected",
			 rej, o->n[STORM_OUT_REJECTED]);
		return -EPROTO;
	}
	return 0;
}

int storm_outcomes_expected(const struct storm_outcomes *o, char *err,
			    size_t errlen)
{
	uint64_t want = o->attempts - o->rej_app - o->n[STORM_OUT_KILLED];
	uint64_t est = o->n[STORM_OUT_ESTABLISHED];

	if (est >= want)
		return 0;
	snprintf(err, errlen,
		 "%" PRIu64 " of %" PRIu64 " expected connections established "
		 "(rejected busy %" PRIu64 ", other REJ %" PRIu64
		 ", timed out %" PRIu64 ", unreachable %" PRIu64
		 ", failed %" PRIu64 ")",
		 est, want, o->rej_busy,
		 o->n[STORM_OUT_REJECTED] - o->rej_app - o->rej_busy,
		 o->n[STORM_OUT_TIMED_OUT], o->n[STORM_OUT_UNREACHABLE],
		 o->n[STORM_OUT_FAILED]);
	return -EIO;
}
