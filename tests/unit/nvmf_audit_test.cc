// The target's Connect audit trail (targets/nvmf/audit.h): the per-shard
// line limit over a fake clock, the accepted and refused lines as an
// operator reads them, addresses as text, and which listen line a
// connection's local address belongs to (exact before wildcard).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/audit.h"
}

namespace
{

sockaddr_storage V4(const char *ip, uint16_t port)
{
	sockaddr_storage ss = {};
	auto *s4 = reinterpret_cast<sockaddr_in *>(&ss);
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	EXPECT_EQ(1, inet_pton(AF_INET, ip, &s4->sin_addr));
	return ss;
}

sockaddr_storage V6(const char *ip, uint16_t port)
{
	sockaddr_storage ss = {};
	auto *s6 = reinterpret_cast<sockaddr_in6 *>(&ss);
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	EXPECT_EQ(1, inet_pton(AF_INET6, ip, &s6->sin6_addr));
	return ss;
}

nvmf_cfg_listen Listen(const char *addr, int family, uint16_t port)
{
	nvmf_cfg_listen l = {};
	snprintf(l.addr, sizeof(l.addr), "%s", addr);
	l.family = family;
	l.port = port;
	return l;
}

TEST(NvmfAudit, LimitHoldsBackAndCountsTheRest)
{
	nvmf_audit_limit l;
	uint64_t held = 99;
	nvmf_audit_limit_init(&l, 3);
	for (int i = 0; i < 3; i++) {
		EXPECT_TRUE(nvmf_audit_admit(&l, 5000 + i, &held));
		EXPECT_EQ(0u, held);
	}
	// The window is full: five lines held back.
	for (int i = 0; i < 5; i++)
		EXPECT_FALSE(nvmf_audit_admit(&l, 5500, &held));
	EXPECT_EQ(0u, held);
	// A second later the next line gets through and says so.
	EXPECT_TRUE(nvmf_audit_admit(&l, 6000, &held));
	EXPECT_EQ(5u, held);
	EXPECT_TRUE(nvmf_audit_admit(&l, 6001, &held));
	EXPECT_EQ(0u, held);
	EXPECT_EQ(5u, l.held_total);
	// A clock that went back starts a new window rather than locking up.
	nvmf_audit_limit_init(&l, 1);
	EXPECT_TRUE(nvmf_audit_admit(&l, 10000, &held));
	EXPECT_FALSE(nvmf_audit_admit(&l, 10001, &held));
	EXPECT_TRUE(nvmf_audit_admit(&l, 20, &held));
	EXPECT_EQ(1u, held);
}

TEST(NvmfAudit, NoLimitAdmitsEverything)
{
	nvmf_audit_limit l;
	uint64_t held;
	nvmf_audit_limit_init(&l, 0);
	for (int i = 0; i < 10000; i++)
		ASSERT_TRUE(nvmf_audit_admit(&l, 7, &held));
}

TEST(NvmfAudit, LinesSayWhoWhereAndWhy)
{
	nvmf_connect_audit a = {};
	char buf[1024];
	a.hostnqn = "nqn.2014-08.org.nvmexpress:uuid:1";
	a.hostid = "11111111-2222-3333-4444-555555555555";
	a.subnqn = "nqn.2024-01.io.wharf:disk0";
	a.cntlid = 7;
	nvmf_audit_format(buf, sizeof(buf), &a, "10.0.0.2:51000",
			  "10.0.0.1:4420", 0);
	EXPECT_STREQ("connect: controller 7 for host "
		     "nqn.2014-08.org.nvmexpress:uuid:1 hostid "
		     "11111111-2222-3333-4444-555555555555 from 10.0.0.2:51000 "
		     "on 10.0.0.1:4420 subsystem nqn.2024-01.io.wharf:disk0",
		     buf);
	a.cntlid = 0;
	a.status = 0x4184; // DNR, SCT 1, Connect Invalid Host
	a.reason = "host not allowed";
	nvmf_audit_format(buf, sizeof(buf), &a, NULL, "[fd00::1]:4420", 12);
	EXPECT_STREQ("connect: refused host nqn.2014-08.org.nvmexpress:uuid:1 "
		     "hostid 11111111-2222-3333-4444-555555555555 from ? on "
		     "[fd00::1]:4420 subsystem nqn.2024-01.io.wharf:disk0: "
		     "host not allowed (status 0x184) (12 connect lines held "
		     "back before this one)",
		     buf);
	// Truncated, never overrun.
	char small[16];
	EXPECT_GT(nvmf_audit_format(small, sizeof(small), &a, "x", "y", 0), 15);
	EXPECT_EQ(15u, strlen(small));
}

TEST(NvmfAudit, AddressesAsText)
{
	char buf[64];
	sockaddr_storage a = V4("192.0.2.7", 4420);
	nvmf_sockaddr_str(reinterpret_cast<sockaddr *>(&a), buf, sizeof(buf));
	EXPECT_STREQ("192.0.2.7:4420", buf);
	a = V6("fd00::2", 51234);
	nvmf_sockaddr_str(reinterpret_cast<sockaddr *>(&a), buf, sizeof(buf));
	EXPECT_STREQ("[fd00::2]:51234", buf);
	nvmf_sockaddr_str(nullptr, buf, sizeof(buf));
	EXPECT_STREQ("?", buf);
	sockaddr_storage unix_like = {};
	unix_like.ss_family = AF_UNIX;
	nvmf_sockaddr_str(reinterpret_cast<sockaddr *>(&unix_like), buf,
			  sizeof(buf));
	EXPECT_STREQ("?", buf);
}

TEST(NvmfAudit, ListenerOfALocalAddress)
{
	nvmf_cfg_listen l[NVMF_CFG_MAX_LISTEN] = {
		Listen("0.0.0.0", AF_INET, 4420),
		Listen("10.0.0.1", AF_INET, 4420),
		Listen("10.0.0.1", AF_INET, 4421),
		Listen("fd00::1", AF_INET6, 4420),
		Listen("::", AF_INET6, 4422),
	};
	uint32_t live = 0x1f; // the five above
	auto match = [&](sockaddr_storage ss) {
		return nvmf_listener_match(l, live,
					   reinterpret_cast<sockaddr *>(&ss));
	};
	EXPECT_EQ(2, match(V4("10.0.0.1", 4420))); // exact beats wildcard
	EXPECT_EQ(1, match(V4("10.0.0.9", 4420))); // the wildcard
	EXPECT_EQ(3, match(V4("10.0.0.1", 4421)));
	EXPECT_EQ(0, match(V4("10.0.0.2", 4421))); // no such address
	EXPECT_EQ(4, match(V6("fd00::1", 4420)));
	EXPECT_EQ(5, match(V4("10.0.0.1", 4422))); // :: takes IPv4 too
	EXPECT_EQ(0, match(V6("fd00::9", 4420)));  // 0.0.0.0 is IPv4 only
	EXPECT_EQ(0, match(V4("10.0.0.1", 9999)));
	EXPECT_EQ(0, nvmf_listener_match(l, live, nullptr));
	// A slot that is not live is skipped: the wildcard takes its port.
	live &= ~2u;
	EXPECT_EQ(1, match(V4("10.0.0.1", 4420)));
	live = 0;
	EXPECT_EQ(0, match(V4("10.0.0.9", 4420)));
}

} // namespace
