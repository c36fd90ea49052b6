// Unit tests for cm/rej_busy: the busy REJ payload and retry backoff.
#include <errno.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "cm/conn_param.h"
#include "cm/rej_busy.h"
}

namespace
{

wcm_rej_busy Busy(uint8_t reason, uint32_t retry_after, uint16_t load)
{
	wcm_rej_busy b;
	b.version = 0;
	b.reason = reason;
	b.retry_after_ms = retry_after;
	b.load_permille = load;
	return b;
}

std::vector<uint8_t> Encode(const wcm_rej_busy &b)
{
	std::vector<uint8_t> buf(WCM_BUSY_LEN);
	size_t len = 0;
	EXPECT_EQ(0, wcm_rej_busy_encode(&b, buf.data(), buf.size(), &len));
	EXPECT_EQ((size_t)WCM_BUSY_LEN, len);
	return buf;
}

// Recompute the check after editing a field, to reach the later checks.
void Reseal(std::vector<uint8_t> &m)
{
	uint32_t s1 = 0, s2 = 0;
	size_t n = m[5];
	for (size_t i = 0; i < n && i < m.size(); i++) {
		uint8_t b = (i == 14 || i == 15) ? 0 : m[i];
		s1 = (s1 + b) % 255;
		s2 = (s2 + s1) % 255;
	}
	m[14] = (uint8_t)s2;
	m[15] = (uint8_t)s1;
}

TEST(CmRejBusyFormat, ByteLayoutIsAsDocumented)
{
	std::vector<uint8_t> m = Encode(Busy(2, 0x00012345, 0x0305));
	const uint8_t want[14] = {'W', 'H', 'R',  'F',	1,    16,   2,
				  0,   0,   0x01, 0x23, 0x45, 0x03, 0x05};
	EXPECT_EQ(0, memcmp(m.data(), want, sizeof(want)));
	std::vector<uint8_t> copy = m;
	Reseal(copy); // the check is Fletcher-16 as documented
	EXPECT_EQ(m, copy);
}

TEST(CmRejBusyFormat, RoundTrips)
{
	for (uint8_t reason = 1; reason <= WCM_BUSY_REASON_MAX; reason++) {
		for (uint32_t ra : {0u, 1u, 250u, WCM_BUSY_RETRY_AFTER_MAX}) {
			for (uint16_t load : {0, 999, 1000}) {
				wcm_rej_busy in = Busy(reason, ra, load), out;
				std::vector<uint8_t> m = Encode(in);
				ASSERT_EQ(0, wcm_rej_busy_decode(
						     m.data(), m.size(), &out));
				EXPECT_EQ(1, out.version);
				EXPECT_EQ(reason, out.reason);
				EXPECT_EQ(ra, out.retry_after_ms);
				EXPECT_EQ(load, out.load_permille);
			}
		}
	}
}

TEST(CmRejBusyFormat, FitsEveryRejectLimit)
{
	EXPECT_LE((size_t)WCM_BUSY_LEN,
		  wcm_pdata_limit(WCM_MSG_REJECT, WCM_PS_RC));
	EXPECT_LE((size_t)WCM_BUSY_LEN,
		  wcm_pdata_limit(WCM_MSG_REJECT, WCM_PS_UD));
}

TEST(CmRejBusyFormat, DecodesInsideZeroPadded148ByteRejField)
{
	std::vector<uint8_t> m = Encode(Busy(1, 100, 500));
	m.resize(148, 0);
	wcm_rej_busy out;
	ASSERT_EQ(0, wcm_rej_busy_decode(m.data(), m.size(), &out));
	EXPECT_EQ(100u, out.retry_after_ms);
	// Trailing bytes are not ours to judge.
	m[100] = 0xEE;
	EXPECT_EQ(0, wcm_rej_busy_decode(m.data(), m.size(), &out));
}

TEST(CmRejBusyEncode, InvalidFieldsAreEinvalAndWriteNothing)
{
	uint8_t buf[WCM_BUSY_LEN];
	memset(buf, 0x77, sizeof(buf));
	wcm_rej_busy bad[] = {Busy(0, 1, 1), Busy(4, 1, 1),
			      Busy(1, WCM_BUSY_RETRY_AFTER_MAX + 1, 1),
			      Busy(1, 1, 1001)};
	for (auto &b : bad) {
		EXPECT_EQ(-EINVAL,
			  wcm_rej_busy_encode(&b, buf, sizeof(buf), nullptr));
	}
	wcm_rej_busy ok = Busy(1, 1, 1);
	EXPECT_EQ(-EINVAL,
		  wcm_rej_busy_encode(&ok, buf, WCM_BUSY_LEN - 1, nullptr));
	EXPECT_EQ(-EINVAL, wcm_rej_busy_encode(&ok, nullptr, 16, nullptr));
	EXPECT_EQ(-EINVAL, wcm_rej_busy_encode(nullptr, buf, 16, nullptr));
	for (uint8_t b : buf) {
		EXPECT_EQ(0x77, b);
	}
}

// Consumer-defined REJ payloads are "not wharf", without error.
TEST(CmRejBusyDecode, ForeignPayloadsAreEnomsg)
{
	wcm_rej_busy out = Busy(9, 9, 9);
	uint8_t nvmf[4] = {0, 0, 0x0d, 0}; // NVMe-oF {recfmt 0, sts}
	uint8_t zeros[148] = {0};
	uint8_t text[] = "WHAT is this";
	EXPECT_EQ(-ENOMSG, wcm_rej_busy_decode(nvmf, sizeof(nvmf), &out));
	EXPECT_EQ(-ENOMSG, wcm_rej_busy_decode(zeros, sizeof(zeros), &out));
	EXPECT_EQ(-ENOMSG, wcm_rej_busy_decode(text, sizeof(text), &out));
	EXPECT_EQ(-ENOMSG, wcm_rej_busy_decode(nullptr, 0, &out));
	EXPECT_EQ(-ENOMSG, wcm_rej_busy_decode(nullptr, 148, &out));
	EXPECT_EQ(-ENOMSG, wcm_rej_busy_decode("WHR", 3, &out));
	EXPECT_EQ(9, out.reason); // untouched
	EXPECT_EQ(-ENOMSG, wcm_rej_busy_decode(nvmf, sizeof(nvmf), nullptr));
}

TEST(CmRejBusyDecode, TruncatedIsEproto)
{
	std::vector<uint8_t> m = Encode(Busy(1, 5, 5));
	for (size_t len = 4; len < WCM_BUSY_LEN; len++) {
		EXPECT_EQ(-EPROTO, wcm_rej_busy_decode(m.data(), len, nullptr))
			<< len;
	}
}

TEST(CmRejBusyDecode, CorruptionIsEproto)
{
	std::vector<uint8_t> m = Encode(Busy(1, 5, 5));
	for (size_t i = 4; i < WCM_BUSY_LEN; i++) {
		for (int bit = 0; bit < 8; bit++) {
			std::vector<uint8_t> c = m;
			c[i] ^= (uint8_t)(1u << bit);
			EXPECT_EQ(-EPROTO, wcm_rej_busy_decode(
						   c.data(), c.size(), nullptr))
				<< "byte " << i << " bit " << bit;
		}
	}
}

TEST(CmRejBusyDecode, BadFieldsAreEproto)
{
	wcm_rej_busy out;
	struct {
		size_t off;
		uint8_t val;
	} edits[] = {
		{4, 0},	   // version 0
		{5, 15},   // hdr_len below 16
		{5, 17},   // hdr_len beyond the data
		{6, 0},	   // reason 0
		{6, 4},	   // unknown reason in version 1
		{7, 1},	   // flags in version 1
		{8, 0xFF}, // retry_after far above the maximum
		{12, 0x04} // load 0x04xx > 1000
	};
	for (auto &e : edits) {
		std::vector<uint8_t> m = Encode(Busy(1, 5, 5));
		m[e.off] = e.val;
		Reseal(m);
		EXPECT_EQ(-EPROTO,
			  wcm_rej_busy_decode(m.data(), m.size(), &out))
			<< "offset " << e.off;
	}
}

TEST(CmRejBusyDecode, NewerVersionWithLongerHeaderIsRead)
{
	std::vector<uint8_t> m = Encode(Busy(1, 40, 7));
	m.resize(24, 0xAB); // a version 2 appends 8 bytes
	m[4] = 2;
	m[5] = 24;
	m[6] = 9;    // a reason version 1 does not know: passed through
	m[7] = 0x80; // flags version 1 does not know: ignored
	Reseal(m);
	wcm_rej_busy out;
	ASSERT_EQ(0, wcm_rej_busy_decode(m.data(), m.size(), &out));
	EXPECT_EQ(2, out.version);
	EXPECT_EQ(9, out.reason);
	EXPECT_EQ(40u, out.retry_after_ms);
	EXPECT_EQ(-EPROTO, wcm_rej_busy_decode(m.data(), 23, &out));
}

// --- backoff -------------------------------------------------------------

TEST(CmBackoff, FirstRetryWindowIsHintToTwiceHint)
{
	EXPECT_EQ(100u, wcm_backoff_ms(100, 0, 0, 100000));
	EXPECT_EQ(200u, wcm_backoff_ms(100, 0, 100, 100000));
	EXPECT_EQ(100u, wcm_backoff_ms(100, 0, 101, 100000)); // wraps
	for (uint32_t r = 0; r < 1000; r++) {
		uint32_t d = wcm_backoff_ms(100, 0, r * 2654435761u, 100000);
		EXPECT_GE(d, 100u);
		EXPECT_LE(d, 200u);
	}
}

TEST(CmBackoff, WindowDoublesPerAttemptAndNeverPrecedesHint)
{
	for (uint32_t a = 0; a < 10; a++) {
		uint32_t hi = 0;
		for (uint32_t r = 0; r < 5000; r++) {
			uint32_t d = wcm_backoff_ms(10, a, r, 1u << 30);
			EXPECT_GE(d, 10u);
			EXPECT_LE(d, 10u << (a + 1));
			hi = d > hi ? d : hi;
		}
		// The top of the window is reached (rnd spans it).
		if ((10u << (a + 1)) - 10 < 5000) {
			EXPECT_EQ(10u << (a + 1), hi) << a;
		}
	}
}

TEST(CmBackoff, CapBoundsEverythingIncludingHugeAttempts)
{
	for (uint32_t a : {0u, 5u, 30u, 31u, 32u, 1000u, 0xFFFFFFFFu}) {
		for (uint32_t r : {0u, 1u, 12345u, 0xFFFFFFFFu}) {
			uint32_t d = wcm_backoff_ms(100, a, r, 3000);
			EXPECT_GE(d, 100u);
			EXPECT_LE(d, 3000u);
		}
	}
	// A hint above the cap is cut to the cap.
	EXPECT_EQ(50u, wcm_backoff_ms(1000, 0, 7, 50));
	// Degenerate inputs stay defined.
	EXPECT_EQ(1u, wcm_backoff_ms(0, 0, 0, 0));
	EXPECT_LE(wcm_backoff_ms(0xFFFFFFFFu, 40, 0xFFFFFFFFu, 0xFFFFFFFFu),
		  0xFFFFFFFFu);
}

TEST(CmBackoff, JitterSpreadsPeers)
{
	// Peers drawing different random values do not retry in lockstep.
	std::vector<uint32_t> seen;
	for (uint32_t r = 0; r < 64; r++)
		seen.push_back(wcm_backoff_ms(100, 2, r * 7919u, 60000));
	std::sort(seen.begin(), seen.end());
	seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
	EXPECT_GT(seen.size(), 32u);
}

TEST(CmRetryBusy, HonoursHintAndGivesUpAfterMaxAttempts)
{
	wcm_retry_policy p;
	wcm_retry_policy_busy_default(&p);
	EXPECT_EQ(8u, p.max_attempts);
	wcm_rej_busy b = Busy(1, 400, 0);
	uint32_t d = 0;
	for (uint32_t a = 0; a < p.max_attempts; a++) {
		ASSERT_EQ(0, wcm_retry_busy(&p, &b, a, a * 977, &d));
		EXPECT_GE(d, 400u);
		EXPECT_LE(d, p.cap_ms);
	}
	EXPECT_EQ(-ECONNREFUSED, wcm_retry_busy(&p, &b, p.max_attempts, 0, &d));
}

TEST(CmRetryBusy, ZeroHintUsesBaseAndDisabledPolicyRefuses)
{
	wcm_retry_policy p;
	wcm_retry_policy_busy_default(&p);
	wcm_rej_busy b = Busy(1, 0, 0);
	uint32_t d = 0;
	ASSERT_EQ(0, wcm_retry_busy(&p, &b, 0, 0, &d));
	EXPECT_EQ(p.base_ms, d);
	p.max_attempts = 0;
	EXPECT_EQ(-ECONNREFUSED, wcm_retry_busy(&p, &b, 0, 0, &d));
	p.max_attempts = 1;
	p.cap_ms = 0;
	EXPECT_EQ(-EINVAL, wcm_retry_busy(&p, &b, 0, 0, &d));
	EXPECT_EQ(-EINVAL, wcm_retry_busy(nullptr, &b, 0, 0, &d));
	EXPECT_EQ(-EINVAL, wcm_retry_busy(&p, nullptr, 0, 0, &d));
}

TEST(CmRetryStale, OnlyReason10IsRetriedBoundedTimes)
{
	wcm_retry_policy p;
	wcm_retry_policy_stale_default(&p);
	EXPECT_EQ(5u, p.max_attempts);
	uint32_t d = 0;
	for (uint32_t a = 0; a < 5; a++) {
		ASSERT_EQ(0, wcm_retry_stale(&p, WCM_REJ_REASON_STALE_CONN, a,
					     a, &d));
		EXPECT_GE(d, p.base_ms);
		EXPECT_LE(d, p.cap_ms);
	}
	EXPECT_EQ(-ECONNREFUSED,
		  wcm_retry_stale(&p, WCM_REJ_REASON_STALE_CONN, 5, 0, &d));
	EXPECT_EQ(-ECONNREFUSED,
		  wcm_retry_stale(&p, WCM_REJ_REASON_CONSUMER, 0, 0, &d));
	EXPECT_EQ(-ECONNREFUSED, wcm_retry_stale(&p, 0, 0, 0, &d));
}

TEST(CmRetryStale, ConfigurableAndDisableable)
{
	wcm_retry_policy p = {2, 20, 25};
	uint32_t d = 0;
	ASSERT_EQ(0, wcm_retry_stale(&p, 10, 1, 0xFFFF, &d));
	EXPECT_GE(d, 20u);
	EXPECT_LE(d, 25u);
	EXPECT_EQ(-ECONNREFUSED, wcm_retry_stale(&p, 10, 2, 0, &d));
	p.max_attempts = 0;
	EXPECT_EQ(-ECONNREFUSED, wcm_retry_stale(&p, 10, 0, 0, &d));
	EXPECT_EQ(-EINVAL, wcm_retry_stale(nullptr, 10, 0, 0, &d));
	EXPECT_EQ(-EINVAL, wcm_retry_stale(&p, 10, 0, 0, nullptr));
}

} // namespace
