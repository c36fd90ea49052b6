// Unit tests for cm/conn_param: each rule of conn_param.h has a named test.
#include <errno.h>
#include <string.h>

#include <vector>

#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

extern "C" {
#include "cm/conn_param.h"
}

namespace
{

// A device like mlx5 would report, with distinct values per attribute so a
// swapped field shows up.
wcm_dev_limits Dev(uint8_t rd_atom = 16, uint8_t init_rd_atom = 8)
{
	wcm_dev_limits d;
	d.max_qp_rd_atom = rd_atom;
	d.max_qp_init_rd_atom = init_rd_atom;
	return d;
}

wcm_qp_info Qp(uint32_t qp_num = 0x1234, uint8_t srq = 1)
{
	wcm_qp_info q;
	q.qp_num = qp_num;
	q.srq = srq;
	return q;
}

wcm_conn_param Param(uint8_t resp, uint8_t init)
{
	wcm_conn_param p;
	memset(&p, 0, sizeof(p));
	p.responder_resources = resp;
	p.initiator_depth = init;
	return p;
}

// A request as delivered to the passive side (local view).
wcm_conn_param Req(uint8_t resp, uint8_t init)
{
	wcm_conn_param r = Param(resp, init);
	r.retry_count = 6;
	r.rnr_retry_count = 3;
	r.flow_control = 1;
	return r;
}

// Output sentinel: an error must leave it untouched ("nothing sent").
wcm_conn_param Sentinel()
{
	wcm_conn_param s;
	memset(&s, 0xA5, sizeof(s));
	return s;
}

bool Untouched(const wcm_conn_param &p)
{
	wcm_conn_param s = Sentinel();
	return memcmp(&p, &s, sizeof(p)) == 0;
}

// --- device limits, limits table, clamp -------------------------------------

TEST(CmConnParamDevLimits, CopiesAttributes)
{
	wcm_dev_limits d;
	ASSERT_EQ(0, wcm_dev_limits_init(&d, 16, 8));
	EXPECT_EQ(16, d.max_qp_rd_atom);
	EXPECT_EQ(8, d.max_qp_init_rd_atom);
}

TEST(CmConnParamDevLimits, SaturatesAt254BecauseFfIsTheSentinel)
{
	wcm_dev_limits d;
	ASSERT_EQ(0, wcm_dev_limits_init(&d, 256, 1000));
	EXPECT_EQ(254, d.max_qp_rd_atom); // librdmacm's cast would give 0
	EXPECT_EQ(254, d.max_qp_init_rd_atom);
	ASSERT_EQ(0, wcm_dev_limits_init(&d, 255, 254));
	EXPECT_EQ(254, d.max_qp_rd_atom);
}

TEST(CmConnParamDevLimits, NegativeOrNullIsEinval)
{
	wcm_dev_limits d;
	EXPECT_EQ(-EINVAL, wcm_dev_limits_init(&d, -1, 8));
	EXPECT_EQ(-EINVAL, wcm_dev_limits_init(&d, 8, -1));
	EXPECT_EQ(-EINVAL, wcm_dev_limits_init(nullptr, 8, 8));
}

TEST(CmConnParamPdata, LimitsPerMessageAndPortSpace)
{
	EXPECT_EQ(56u, wcm_pdata_limit(WCM_MSG_CONNECT, WCM_PS_RC));
	EXPECT_EQ(180u, wcm_pdata_limit(WCM_MSG_CONNECT, WCM_PS_UD));
	EXPECT_EQ(196u, wcm_pdata_limit(WCM_MSG_ACCEPT, WCM_PS_RC));
	EXPECT_EQ(136u, wcm_pdata_limit(WCM_MSG_ACCEPT, WCM_PS_UD));
	EXPECT_EQ(148u, wcm_pdata_limit(WCM_MSG_REJECT, WCM_PS_RC));
	EXPECT_EQ(136u, wcm_pdata_limit(WCM_MSG_REJECT, WCM_PS_UD));
	EXPECT_EQ(0u, wcm_pdata_limit((wcm_msg)3, WCM_PS_RC));
	EXPECT_EQ(0u, wcm_pdata_limit(WCM_MSG_CONNECT, (wcm_ps)2));
}

TEST(CmConnParamPdata, AtLimitOkOverLimitEinvalForEveryMessage)
{
	std::vector<uint8_t> buf(256, 0x5A);
	for (int m = WCM_MSG_CONNECT; m <= WCM_MSG_REJECT; m++) {
		for (int ps = WCM_PS_RC; ps <= WCM_PS_UD; ps++) {
			size_t lim = wcm_pdata_limit((wcm_msg)m, (wcm_ps)ps);
			EXPECT_EQ(0, wcm_pdata_check((wcm_msg)m, (wcm_ps)ps,
						     buf.data(), lim))
				<< m << "/" << ps;
			EXPECT_EQ(-EINVAL,
				  wcm_pdata_check((wcm_msg)m, (wcm_ps)ps,
						  buf.data(), lim + 1))
				<< m << "/" << ps;
		}
	}
}

TEST(CmConnParamPdata, RejectLimitIs148OnRcAnd136OnUd)
{
	std::vector<uint8_t> buf(149);
	EXPECT_EQ(0,
		  wcm_pdata_check(WCM_MSG_REJECT, WCM_PS_RC, buf.data(), 148));
	EXPECT_EQ(-EINVAL,
		  wcm_pdata_check(WCM_MSG_REJECT, WCM_PS_RC, buf.data(), 149));
	EXPECT_EQ(0,
		  wcm_pdata_check(WCM_MSG_REJECT, WCM_PS_UD, buf.data(), 136));
	EXPECT_EQ(-EINVAL,
		  wcm_pdata_check(WCM_MSG_REJECT, WCM_PS_UD, buf.data(), 137));
}

TEST(CmConnParamPdata, NullWithLengthIsEinvalNullEmptyOk)
{
	EXPECT_EQ(-EINVAL,
		  wcm_pdata_check(WCM_MSG_REJECT, WCM_PS_RC, nullptr, 1));
	EXPECT_EQ(0, wcm_pdata_check(WCM_MSG_REJECT, WCM_PS_RC, nullptr, 0));
}

TEST(CmConnParamRetry, ClampsToSevenWithMinNotMask)
{
	EXPECT_EQ(0, wcm_retry_clamp(0));
	EXPECT_EQ(5, wcm_retry_clamp(5));
	EXPECT_EQ(7, wcm_retry_clamp(7));
	EXPECT_EQ(7, wcm_retry_clamp(8));  // a mask would give 0
	EXPECT_EQ(7, wcm_retry_clamp(15)); // libfabric's value
	EXPECT_EQ(7, wcm_retry_clamp(14)); // a mask would give 6
	EXPECT_EQ(7, wcm_retry_clamp(255));
	EXPECT_EQ(7, wcm_retry_clamp(1u << 20));
}

// --- connect ----------------------------------------------------------------

TEST(CmConnParamConnect, NullParamSendsDeviceMaximaRetry7NoFlowControl)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param out = Sentinel();
	ASSERT_EQ(0, wcm_conn_param_connect(nullptr, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(16, out.responder_resources);
	EXPECT_EQ(8, out.initiator_depth);
	EXPECT_EQ(7, out.retry_count);
	EXPECT_EQ(7, out.rnr_retry_count);
	EXPECT_EQ(0, out.flow_control);
	EXPECT_EQ(nullptr, out.private_data);
	EXPECT_EQ(0u, out.private_data_len);
}

TEST(CmConnParamConnect, FfMeansDeviceMaximum)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(0xFF, 0xFF), out;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(16, out.responder_resources); // max_qp_rd_atom
	EXPECT_EQ(8, out.initiator_depth);	// max_qp_init_rd_atom
}

TEST(CmConnParamConnect, ExplicitValuesUpToDeviceMaxAreKept)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param out;
	for (int resp = 0; resp <= 16; resp++) {
		for (int init = 0; init <= 8; init++) {
			wcm_conn_param p = Param(resp, init);
			ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d,
							    &q, &out));
			EXPECT_EQ(resp, out.responder_resources);
			EXPECT_EQ(init, out.initiator_depth);
		}
	}
}

TEST(CmConnParamConnect, ResponderAboveDeviceMaxIsEinvalNotClamped)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(17, 1), out = Sentinel();
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_TRUE(Untouched(out));
	p = Param(0xFE, 1);
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
}

TEST(CmConnParamConnect, InitiatorAboveDeviceMaxIsEinvalNotClamped)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 9), out = Sentinel();
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_TRUE(Untouched(out));
}

TEST(CmConnParamConnect, RetryCountsClampToSeven)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	p.retry_count = 15;
	p.rnr_retry_count = 8;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(7, out.retry_count);
	EXPECT_EQ(7, out.rnr_retry_count);
	p.retry_count = 3;
	p.rnr_retry_count = 0;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(3, out.retry_count);
	EXPECT_EQ(0, out.rnr_retry_count);
}

TEST(CmConnParamConnect, FlowControlIsExchangedAsOneBit)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	p.flow_control = 2; // the kernel would keep bit 0 only: 0
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(1, out.flow_control);
	p.flow_control = 0;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(0, out.flow_control);
}

TEST(CmConnParamConnect, SrqAndQpNumComeFromTheLibraryQp)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp(0xABCDEF, 1);
	wcm_conn_param p = Param(1, 1), out;
	p.srq = 0;
	p.qp_num = 99;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(0xABCDEFu, out.qp_num);
	EXPECT_EQ(1, out.srq);
	q = Qp(7, 0);
	p.srq = 1;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(7u, out.qp_num);
	EXPECT_EQ(0, out.srq);
}

TEST(CmConnParamConnect, QpNumAbove24BitsIsEinval)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp(0x1000000);
	wcm_conn_param out;
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_connect(nullptr, WCM_PS_RC, &d, &q, &out));
}

TEST(CmConnParamConnect, PrivateDataLimit56OnRc)
{
	uint8_t buf[57] = {1};
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out = Sentinel();
	p.private_data = buf;
	p.private_data_len = 56;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(buf, out.private_data);
	EXPECT_EQ(56u, out.private_data_len);
	p.private_data_len = 57;
	out = Sentinel();
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_TRUE(Untouched(out));
}

TEST(CmConnParamConnect, PrivateDataLimit180OnUd)
{
	uint8_t buf[181] = {1};
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(0, 0), out;
	p.private_data = buf;
	p.private_data_len = 180;
	EXPECT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_UD, &d, &q, &out));
	p.private_data_len = 181;
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(&p, WCM_PS_UD, &d, &q, &out));
}

TEST(CmConnParamConnect, LengthThatWouldWrapEightBitsIsEinval)
{
	std::vector<uint8_t> buf(300);
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	p.private_data = buf.data();
	p.private_data_len = 256 + 10; // (uint8_t) would be 10: accepted
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
}

TEST(CmConnParamConnect, NullPrivateDataWithLengthIsEinval)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	p.private_data_len = 4;
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
}

TEST(CmConnParamConnect, PrivateDataPointerWithZeroLengthSendsNone)
{
	uint8_t buf[4] = {0};
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	p.private_data = buf;
	p.private_data_len = 0;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(nullptr, out.private_data);
	EXPECT_EQ(0u, out.private_data_len);
}

TEST(CmConnParamConnect, UdIgnoresDepthsFlowControlAndRetries)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp(55, 1);
	wcm_conn_param p = Param(200, 200), out;
	p.retry_count = 9;
	p.rnr_retry_count = 9;
	p.flow_control = 1;
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_UD, &d, &q, &out));
	EXPECT_EQ(0, out.responder_resources);
	EXPECT_EQ(0, out.initiator_depth);
	EXPECT_EQ(0, out.retry_count);
	EXPECT_EQ(0, out.rnr_retry_count);
	EXPECT_EQ(0, out.flow_control);
	EXPECT_EQ(0, out.srq);
	EXPECT_EQ(55u, out.qp_num);
}

TEST(CmConnParamConnect, NullArgumentsAndUnknownPortSpaceAreEinval)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param out;
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(nullptr, WCM_PS_RC, nullptr,
						  &q, &out));
	EXPECT_EQ(-EINVAL, wcm_conn_param_connect(nullptr, WCM_PS_RC, &d,
						  nullptr, &out));
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_connect(nullptr, WCM_PS_RC, &d, &q, nullptr));
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_connect(nullptr, (wcm_ps)7, &d, &q, &out));
}

// --- accept -----------------------------------------------------------------

TEST(CmConnParamAccept, NullParamUsesRequestAdjustedDownToDevice)
{
	wcm_dev_limits d = Dev(4, 2);
	wcm_qp_info q = Qp();
	wcm_conn_param r = Req(16, 16), out;
	ASSERT_EQ(0,
		  wcm_conn_param_accept(nullptr, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(4, out.responder_resources);
	EXPECT_EQ(2, out.initiator_depth);
}

TEST(CmConnParamAccept, NullParamKeepsRequestValuesBelowDevice)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	// Local view: the peer's initiator depth (3) is our responder
	// resources; its responder resources (5) our initiator depth.
	wcm_conn_param r = Req(3, 5), out;
	ASSERT_EQ(0,
		  wcm_conn_param_accept(nullptr, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(3, out.responder_resources);
	EXPECT_EQ(5, out.initiator_depth);
}

TEST(CmConnParamAccept, NullParamEchoesFlowControlRnr7NoPrivateData)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param r = Req(1, 1), out;
	r.flow_control = 1;
	ASSERT_EQ(0,
		  wcm_conn_param_accept(nullptr, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(1, out.flow_control);
	EXPECT_EQ(7, out.rnr_retry_count);
	EXPECT_EQ(nullptr, out.private_data);
	r.flow_control = 0;
	ASSERT_EQ(0,
		  wcm_conn_param_accept(nullptr, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(0, out.flow_control);
}

// librdmacm's rdma_accept(id without a QP, NULL) dereferences NULL; here the
// library's QP is an input, so accept(NULL) works and uses it.
TEST(CmConnParamAccept, NullParamWorksWithLibraryManagedQp)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp(0x4242, 1);
	wcm_conn_param r = Req(1, 1), out;
	ASSERT_EQ(0,
		  wcm_conn_param_accept(nullptr, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(0x4242u, out.qp_num);
	EXPECT_EQ(1, out.srq);
	EXPECT_EQ(-EINVAL, wcm_conn_param_accept(nullptr, &r, WCM_PS_RC, &d,
						 nullptr, &out));
}

TEST(CmConnParamAccept, FfIsMinOfRequestAndDevice)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(0xFF, 0xFF), out;
	wcm_conn_param r = Req(32, 4);
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(16, out.responder_resources); // min(32, 16)
	EXPECT_EQ(4, out.initiator_depth);	// min(4, 8)
	r = Req(2, 64);
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(2, out.responder_resources);
	EXPECT_EQ(8, out.initiator_depth);
}

TEST(CmConnParamAccept, ExplicitResponderAboveDeviceMaxIsEinval)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(17, 1), out = Sentinel();
	wcm_conn_param r = Req(32, 8);
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_TRUE(Untouched(out));
}

TEST(CmConnParamAccept, ExplicitInitiatorAboveDeviceMaxIsEinval)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 9), out = Sentinel();
	wcm_conn_param r = Req(32, 32);
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_TRUE(Untouched(out));
}

TEST(CmConnParamAccept, ExplicitInitiatorAboveRequestIsEinval)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 5), out = Sentinel();
	wcm_conn_param r = Req(1, 4); // the peer serves 4 READs at most
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_TRUE(Untouched(out));
	p = Param(1, 4);
	EXPECT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(4, out.initiator_depth);
}

TEST(CmConnParamAccept, ExplicitResponderBelowRequestIsAllowed)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(0, 0), out;
	wcm_conn_param r = Req(8, 8);
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(0, out.responder_resources);
	// ... and above the request, within the device: "preferably >=".
	p = Param(12, 0);
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(12, out.responder_resources);
}

TEST(CmConnParamAccept, RetryCountIgnoredReportsRequestersClamped)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	wcm_conn_param r = Req(1, 1);
	p.retry_count = 2;
	r.retry_count = 5;
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(5, out.retry_count);
	r.retry_count = 12;
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(7, out.retry_count);
}

TEST(CmConnParamAccept, RnrRetryClampsToSeven)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	wcm_conn_param r = Req(1, 1);
	p.rnr_retry_count = 9;
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(7, out.rnr_retry_count);
	p.rnr_retry_count = 0;
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(0, out.rnr_retry_count);
}

TEST(CmConnParamAccept, PrivateDataLimit196OnRc136OnUd)
{
	std::vector<uint8_t> buf(197, 3);
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(1, 1), out;
	wcm_conn_param r = Req(1, 1);
	p.private_data = buf.data();
	p.private_data_len = 196;
	EXPECT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(196u, out.private_data_len);
	p.private_data_len = 197;
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	p.private_data_len = 136;
	EXPECT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_UD, &d, &q, &out));
	p.private_data_len = 137;
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_accept(&p, &r, WCM_PS_UD, &d, &q, &out));
}

TEST(CmConnParamAccept, UdTakesQpNumberAndPrivateDataOnly)
{
	uint8_t buf[8] = {9};
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp(77, 1);
	wcm_conn_param p = Param(200, 200), out;
	wcm_conn_param r = Req(0, 0);
	p.private_data = buf;
	p.private_data_len = sizeof(buf);
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_UD, &d, &q, &out));
	EXPECT_EQ(77u, out.qp_num);
	EXPECT_EQ(0, out.responder_resources);
	EXPECT_EQ(0, out.initiator_depth);
	EXPECT_EQ(buf, out.private_data);
}

TEST(CmConnParamAccept, RequestIsRequired)
{
	wcm_dev_limits d = Dev();
	wcm_qp_info q = Qp();
	wcm_conn_param out;
	EXPECT_EQ(-EINVAL, wcm_conn_param_accept(nullptr, nullptr, WCM_PS_RC,
						 &d, &q, &out));
}

// --- role presets -----------------------------------------------------------

TEST(CmConnParamPreset, TargetInitiatorIsMinOfQueueDeviceAndPeer)
{
	wcm_dev_limits d = Dev(16, 8);
	struct {
		uint32_t qd;
		uint8_t peer_resp; // request's initiator_depth (local view)
		uint8_t want;
	} cases[] = {{2, 6, 2}, {32, 6, 6}, {32, 64, 8}, {5, 5, 5}};
	for (auto &c : cases) {
		wcm_conn_param p = Param(9, 9), r = Req(1, c.peer_resp);
		ASSERT_EQ(0, wcm_conn_param_preset(WCM_ROLE_TARGET, c.qd, &d,
						   &r, 0, &p));
		EXPECT_EQ(0, p.responder_resources);
		EXPECT_EQ(c.want, p.initiator_depth)
			<< "qd " << c.qd << " peer " << (int)c.peer_resp;
	}
}

TEST(CmConnParamPreset, TargetWhenConnectingUsesQueueAndDevice)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_conn_param p = Param(0, 0);
	ASSERT_EQ(0, wcm_conn_param_preset(WCM_ROLE_TARGET, 4, &d, nullptr, 0,
					   &p));
	EXPECT_EQ(4, p.initiator_depth);
	ASSERT_EQ(0, wcm_conn_param_preset(WCM_ROLE_TARGET, 100, &d, nullptr, 0,
					   &p));
	EXPECT_EQ(8, p.initiator_depth);
}

TEST(CmConnParamPreset, TargetResultPassesAcceptValidation)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param r = Req(4, 3), p = Param(0, 0), out;
	ASSERT_EQ(0,
		  wcm_conn_param_preset(WCM_ROLE_TARGET, 128, &d, &r, 0, &p));
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(0, out.responder_resources);
	EXPECT_EQ(3, out.initiator_depth);
}

TEST(CmConnParamPreset, HostServesDeviceMaxIssuesNone)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_conn_param p = Param(3, 3);
	ASSERT_EQ(0,
		  wcm_conn_param_preset(WCM_ROLE_HOST, 0, &d, nullptr, 0, &p));
	EXPECT_EQ(16, p.responder_resources);
	EXPECT_EQ(0, p.initiator_depth);
}

TEST(CmConnParamPreset, SymmetricResolvesToDeviceMaxOrRequest)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_qp_info q = Qp();
	wcm_conn_param p = Param(0, 0), out;
	ASSERT_EQ(0, wcm_conn_param_preset(WCM_ROLE_SYMMETRIC, 0, &d, nullptr,
					   0, &p));
	ASSERT_EQ(0, wcm_conn_param_connect(&p, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(16, out.responder_resources);
	EXPECT_EQ(8, out.initiator_depth);
	wcm_conn_param r = Req(4, 2);
	ASSERT_EQ(0, wcm_conn_param_accept(&p, &r, WCM_PS_RC, &d, &q, &out));
	EXPECT_EQ(4, out.responder_resources);
	EXPECT_EQ(2, out.initiator_depth);
}

TEST(CmConnParamPreset, ExplicitValuesWin)
{
	wcm_dev_limits d = Dev(16, 8);
	wcm_conn_param p = Param(5, 6);
	ASSERT_EQ(0, wcm_conn_param_preset(WCM_ROLE_HOST, 0, &d, nullptr,
					   WCM_CP_EXPLICIT_RESP, &p));
	EXPECT_EQ(5, p.responder_resources); // kept
	EXPECT_EQ(0, p.initiator_depth);     // preset
	p = Param(5, 6);
	ASSERT_EQ(0, wcm_conn_param_preset(
			     WCM_ROLE_TARGET, 2, &d, nullptr,
			     WCM_CP_EXPLICIT_RESP | WCM_CP_EXPLICIT_INIT, &p));
	EXPECT_EQ(5, p.responder_resources);
	EXPECT_EQ(6, p.initiator_depth);
}

TEST(CmConnParamPreset, CustomChangesNothing)
{
	wcm_dev_limits d = Dev();
	wcm_conn_param p = Param(5, 6);
	ASSERT_EQ(0, wcm_conn_param_preset(WCM_ROLE_CUSTOM, 0, &d, nullptr, 0,
					   &p));
	EXPECT_EQ(5, p.responder_resources);
	EXPECT_EQ(6, p.initiator_depth);
}

TEST(CmConnParamPreset, InvalidArgumentsAreEinval)
{
	wcm_dev_limits d = Dev();
	wcm_conn_param p = Param(5, 6);
	EXPECT_EQ(-EINVAL, wcm_conn_param_preset(WCM_ROLE_TARGET, 0, &d,
						 nullptr, 0, &p));
	EXPECT_EQ(-EINVAL,
		  wcm_conn_param_preset((wcm_role)9, 1, &d, nullptr, 0, &p));
	EXPECT_EQ(-EINVAL, wcm_conn_param_preset(WCM_ROLE_HOST, 1, &d, nullptr,
						 0x4, &p));
	EXPECT_EQ(-EINVAL, wcm_conn_param_preset(WCM_ROLE_HOST, 1, nullptr,
						 nullptr, 0, &p));
	EXPECT_EQ(-EINVAL, wcm_conn_param_preset(WCM_ROLE_HOST, 1, &d, nullptr,
						 0, nullptr));
	EXPECT_EQ(5, p.responder_resources);
}

// --- what a peer sent -------------------------------------------------------

rdma_conn_param Event(const void *pd, uint8_t len)
{
	rdma_conn_param ev;
	memset(&ev, 0, sizeof(ev));
	ev.private_data = pd;
	ev.private_data_len = len;
	ev.responder_resources = 3;
	ev.initiator_depth = 5;
	ev.flow_control = 1;
	ev.retry_count = 6;
	ev.rnr_retry_count = 7;
	ev.srq = 1;
	ev.qp_num = 0x123456;
	return ev;
}

TEST(CmConnParamRecv, DeliveredWithTheLengthTheTransportReports)
{
	uint8_t rej[148] = {'x', 'y'}; // IB reports the whole REJ field
	rdma_conn_param ev = Event(rej, sizeof(rej));
	wcm_conn_param out;
	wcm_pdata pd;
	ASSERT_EQ(0, wcm_conn_param_recv(&ev, &out, &pd));
	EXPECT_EQ(148u, out.private_data_len);
	EXPECT_EQ(148, pd.len);
	EXPECT_EQ(pd.bytes, out.private_data);
	EXPECT_EQ(0, memcmp(pd.bytes, rej, sizeof(rej)));
}

TEST(CmConnParamRecv, CopySurvivesTheEventBuffer)
{
	uint8_t buf[56];
	memset(buf, 0x11, sizeof(buf));
	rdma_conn_param ev = Event(buf, sizeof(buf));
	wcm_conn_param out;
	wcm_pdata pd;
	ASSERT_EQ(0, wcm_conn_param_recv(&ev, &out, &pd));
	memset(buf, 0x22, sizeof(buf)); // the event is acked and reused
	EXPECT_EQ(0x11, ((const uint8_t *)out.private_data)[55]);
}

TEST(CmConnParamRecv, ValuesAreTakenAsReportedAlreadyLocalView)
{
	rdma_conn_param ev = Event(nullptr, 0);
	wcm_conn_param out;
	wcm_pdata pd;
	ASSERT_EQ(0, wcm_conn_param_recv(&ev, &out, &pd));
	EXPECT_EQ(3, out.responder_resources); // no second swap
	EXPECT_EQ(5, out.initiator_depth);
	EXPECT_EQ(1, out.flow_control);
	EXPECT_EQ(6, out.retry_count);
	EXPECT_EQ(7, out.rnr_retry_count);
	EXPECT_EQ(1, out.srq);
	EXPECT_EQ(0x123456u, out.qp_num);
	EXPECT_EQ(nullptr, out.private_data);
	EXPECT_EQ(0u, out.private_data_len);
}

TEST(CmConnParamRecv, QpNumMaskedTo24Bits)
{
	rdma_conn_param ev = Event(nullptr, 0);
	ev.qp_num = 0xFF000010;
	wcm_conn_param out;
	wcm_pdata pd;
	ASSERT_EQ(0, wcm_conn_param_recv(&ev, &out, &pd));
	EXPECT_EQ(0x10u, out.qp_num);
}

TEST(CmConnParamRecv, NullDataWithLengthIsEproto)
{
	rdma_conn_param ev = Event(nullptr, 10);
	wcm_conn_param out;
	wcm_pdata pd;
	pd.len = 99;
	EXPECT_EQ(-EPROTO, wcm_conn_param_recv(&ev, &out, &pd));
	EXPECT_EQ(0, pd.len);
	EXPECT_EQ(nullptr, out.private_data);
}

TEST(CmConnParamRecv, OversizedCopyIsEmsgsize)
{
	std::vector<uint8_t> buf(300);
	wcm_pdata pd;
	EXPECT_EQ(0, wcm_pdata_recv(&pd, buf.data(), 255));
	EXPECT_EQ(255, pd.len);
	EXPECT_EQ(-EMSGSIZE, wcm_pdata_recv(&pd, buf.data(), 256));
	EXPECT_EQ(0, pd.len);
	EXPECT_EQ(-EINVAL, wcm_pdata_recv(nullptr, buf.data(), 1));
}

TEST(CmConnParamToRdma, CopiesEveryField)
{
	uint8_t buf[10] = {0};
	wcm_conn_param p = Param(3, 4);
	p.private_data = buf;
	p.private_data_len = sizeof(buf);
	p.flow_control = 1;
	p.retry_count = 5;
	p.rnr_retry_count = 6;
	p.srq = 1;
	p.qp_num = 0x777;
	rdma_conn_param r;
	ASSERT_EQ(0, wcm_conn_param_to_rdma(&p, &r));
	EXPECT_EQ(buf, r.private_data);
	EXPECT_EQ(10, r.private_data_len);
	EXPECT_EQ(3, r.responder_resources);
	EXPECT_EQ(4, r.initiator_depth);
	EXPECT_EQ(1, r.flow_control);
	EXPECT_EQ(5, r.retry_count);
	EXPECT_EQ(6, r.rnr_retry_count);
	EXPECT_EQ(1, r.srq);
	EXPECT_EQ(0x777u, r.qp_num);
	p.private_data_len = 256;
	EXPECT_EQ(-EINVAL, wcm_conn_param_to_rdma(&p, &r));
}

} // namespace
