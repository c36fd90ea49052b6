/*
 * targets/nvmf/audit.c - the Connect audit trail's pure parts (audit.h):
 * the per-shard line limit, the line's format, addresses as text and the
 * listen line a connection arrived on.
 */
#include "targets/nvmf/audit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

void nvmf_audit_limit_init(struct nvmf_audit_limit *l, uint32_t per_sec)
{
	memset(l, 0, sizeof(*l));
	l->per_sec = per_sec;
}

bool nvmf_audit_admit(struct nvmf_audit_limit *l, uint64_t now_ms,
		      uint64_t *held_back)
{
	*held_back = 0;
	if (now_ms - l->window_ms >= 1000 || now_ms < l->window_ms) {
		l->window_ms = now_ms;
		l->used = 0;
	}
	if (l->per_sec && l->used >= l->per_sec) {
		l->held_back++;
		l->held_total++;
		return false;
	}
	l->used++;
	*held_back = l->held_back;
	l->held_back = 0;
	return true;
}

int nvmf_audit_format(char *buf, size_t len, const struct nvmf_connect_audit *a,
		      const char *peer, const char *local, uint64_t held_back)
{
	char tail[80] = "";
	int n;

	if (held_back)
		snprintf(tail, sizeof(tail),
			 " (%llu connect lines held back before this one)",
			 (unsigned long long)held_back);
	if (!a->status)
		n = snprintf(buf, len,
			     "connect: controller %u for host %s hostid %s "
			     "from %s on %s subsystem %s%s",
			     a->cntlid, a->hostnqn, a->hostid,
			     peer ? peer : "?", local ? local : "?", a->subnqn,
			     tail);
	else
		n = snprintf(buf, len,
			     "connect: refused host %s hostid %s from %s on "
			     "%s subsystem %s: %s (status 0x%03x)%s",
			     a->hostnqn, a->hostid, peer ? peer : "?",
			     local ? local : "?", a->subnqn,
			     a->reason ? a->reason : "refused",
			     a->status & 0x7ff, tail);
	return n;
}

void nvmf_sockaddr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(s4->sin_port));
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(s6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
}

enum addr_match { ADDR_NONE, ADDR_WILDCARD, ADDR_EXACT };

/* How listen line @l's address matches @sa's. */
static enum addr_match addr_match(const struct nvmf_cfg_listen *l,
				  const struct sockaddr *sa)
{
	static const unsigned char any[16];
	unsigned char want[16] = {0};
	size_t alen = l->family == AF_INET6 ? 16 : sizeof(struct in_addr);
	const void *have;

	if (inet_pton(l->family, l->addr, want) != 1)
		return ADDR_NONE;
	/* 0.0.0.0 takes IPv4 only; :: takes both (a dual-stack bind). */
	if (!memcmp(want, any, alen) &&
	    (l->family == AF_INET6 || sa->sa_family == AF_INET))
		return ADDR_WILDCARD;
	if (sa->sa_family != l->family)
		return ADDR_NONE;
	have = sa->sa_family == AF_INET
		       ? (const void *)&((const struct sockaddr_in *)sa)
				 ->sin_addr
		       : (const void *)&((const struct sockaddr_in6 *)sa)
				 ->sin6_addr;
	return memcmp(want, have, alen) ? ADDR_NONE : ADDR_EXACT;
}

uint16_t nvmf_listener_match(const struct nvmf_cfg_listen *l, uint32_t live,
			     const struct sockaddr *local)
{
	uint16_t port, wildcard = 0;

	if (!local)
		return 0;
	if (local->sa_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)local)->sin_port);
	else if (local->sa_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)local)->sin6_port);
	else
		return 0;
	/* An exact address wins over a wildcard on the same port. */
	for (size_t i = 0; i < NVMF_CFG_MAX_LISTEN; i++) {
		if (!(live >> i & 1u) || l[i].port != port)
			continue;
		switch (addr_match(&l[i], local)) {
		case ADDR_EXACT:
			return (uint16_t)(i + 1);
		case ADDR_WILDCARD:
			if (!wildcard)
				wildcard = (uint16_t)(i + 1);
			break;
		case ADDR_NONE:
			break;
		}
	}
	return wildcard;
}
