// Fabrics commands through the core: Connect (admin and I/O, in-capsule
// and keyed data, every failure with its status and IPO / IATTR, the
// host allow-list, controller IDs, SQ flow control disable), Property Get
// / Set (CAP, VS, CC, CSTS; CC.EN / CSTS.RDY, reset, shutdown) and
// Disconnect, and the teardown rules: admin queue gone = association
// gone, every queue reclaimed.
#include "tests/unit/nvmf_test_util.h"

namespace
{

using namespace nvmf_test;

class NvmfFabrics : public NvmfTest
{
      protected:
	// Connect @q, expecting Connect Invalid Parameters at @iattr / @ipo.
	void ExpectInvalidParam(nvmf_queue *q, const Capsule &c, uint8_t iattr,
				uint16_t ipo)
	{
		nvmf_req r = Exec(q, c);
		EXPECT_EQ(NVME_SCT_CMD, Sct(r));
		EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM, Sc(r));
		EXPECT_TRUE(Dnr(r));
		EXPECT_EQ(ipo, r.rsp.result & 0xFFFF);
		EXPECT_EQ(iattr, (r.rsp.result >> 16) & 0xFF);
		EXPECT_EQ(0u, nvmf_queue_cntlid(q));
	}
};

TEST_F(NvmfFabrics, AdminConnectCreatesAController)
{
	nvmf_queue *q = NewQueue(0, 32);
	nvmf_req r = Connect(q, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(0, Status(r));
	uint16_t cntlid = (uint16_t)r.rsp.result;
	EXPECT_GE(cntlid, NVME_CNTLID_MIN);
	EXPECT_LE(cntlid, NVME_CNTLID_MAX);
	EXPECT_EQ(cntlid, nvmf_queue_cntlid(q));
	EXPECT_EQ(0, r.rsp.sqid);
	EXPECT_EQ(1, r.rsp.sqhd);
	EXPECT_EQ(1u, Stats().ctrls);
	EXPECT_EQ(1u, Stats().ctrls_created);
	// A second Connect on the same queue is a sequence error.
	r = Connect(q, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC);
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR, Sc(r));
	// Another admin queue gets another controller.
	nvmf_queue *q2 = NewQueue(0, 32);
	r = Connect(q2, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(0, Status(r));
	EXPECT_NE(cntlid, (uint16_t)r.rsp.result);
	EXPECT_EQ(2u, Stats().ctrls);
}

TEST_F(NvmfFabrics, ConnectDataInCapsule)
{
	nvmf_queue *q = NewQueue(0, 32);
	nvme_connect_data d = ConnectData(kSub, kHost, NVME_CNTLID_DYNAMIC);
	Capsule c = ConnectCmd(0, 31, 0, &d);
	c.icd.resize(sizeof(d));
	memcpy(c.icd.data(), &d, sizeof(d));
	SetInCapsule(&c.sqe, 0, sizeof(d));
	Slot s;
	ASSERT_EQ(NVMF_ACT_RESPOND, Run(q, &s, c));
	EXPECT_EQ(0, Status(s.req));
	EXPECT_NE(0u, nvmf_queue_cntlid(q));
}

TEST_F(NvmfFabrics, OnlyConnectBeforeConnect)
{
	nvmf_queue *q = NewQueue(0, 32);
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR,
		  Sc(Exec(q, Cmd(NVME_ADM_IDENTIFY, 1))));
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR,
		  Sc(PropGet(q, NVME_PROP_CAP, NVME_PROP_SIZE_8)));
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR,
		  Sc(Exec(q, Fabrics(NVME_FCTYPE_DISCONNECT, 3))));
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR,
		  Sc(Exec(q, Fabrics(NVME_FCTYPE_AUTH_SEND, 4))));
	EXPECT_EQ(NVME_SC_INVALID_OPCODE, Sc(Exec(q, Fabrics(0x7F, 5))));
}

TEST_F(NvmfFabrics, ConnectCommandFieldErrors)
{
	nvmf_queue *q = NewQueue(0, 32);
	nvme_connect_data d = ConnectData(kSub, kHost, NVME_CNTLID_DYNAMIC);
	Capsule c = ConnectCmd(0, 31, 0, &d);
	nvme_connect_cmd cc;

	memcpy(&cc, &c.sqe, sizeof(cc));
	cc.recfmt = 1;
	memcpy(&c.sqe, &cc, sizeof(cc));
	nvmf_req r = Exec(q, c);
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_CONNECT_INCOMPAT_FMT, Sc(r));

	// QID other than the one the CM private data carried.
	ExpectInvalidParam(q, ConnectCmd(1, 31, 0, &d), NVME_CONNECT_IATTR_CMD,
			   NVME_IPO_CMD_QID);
	// SQSIZE 0, or larger than the negotiated queue.
	ExpectInvalidParam(q, ConnectCmd(0, 0, 0, &d), NVME_CONNECT_IATTR_CMD,
			   NVME_IPO_CMD_SQSIZE);
	ExpectInvalidParam(q, ConnectCmd(0, 32, 0, &d), NVME_CONNECT_IATTR_CMD,
			   NVME_IPO_CMD_SQSIZE);
	// Short keyed SGL for the 1024 bytes of data.
	c = ConnectCmd(0, 31, 0, &d);
	SetKeyed(&c.sqe, &d, 1000);
	EXPECT_EQ(NVME_SC_SGL_INVALID_DLEN, Sc(Exec(q, c)));
	EXPECT_EQ(5u, Stats().connects_failed);
	// A smaller SQ than negotiated is fine.
	EXPECT_EQ(0, Status(Exec(q, ConnectCmd(0, 15, 0, &d))));
}

TEST_F(NvmfFabrics, ConnectDataErrors)
{
	nvmf_queue *q = NewQueue(0, 32);
	nvme_connect_data d = ConnectData("nqn.2024-01.io.wharf:nope", kHost,
					  NVME_CNTLID_DYNAMIC);
	ExpectInvalidParam(q, ConnectCmd(0, 31, 0, &d), NVME_CONNECT_IATTR_DATA,
			   256);
	d = ConnectData(kSub, kHost, NVME_CNTLID_DYNAMIC);
	memset(d.subnqn, 'n', sizeof(d.subnqn)); // no NUL
	ExpectInvalidParam(q, ConnectCmd(0, 31, 0, &d), NVME_CONNECT_IATTR_DATA,
			   256);
	d = ConnectData(kSub, kHost, NVME_CNTLID_DYNAMIC);
	memset(d.hostnqn, 'h', sizeof(d.hostnqn)); // no NUL
	ExpectInvalidParam(q, ConnectCmd(0, 31, 0, &d), NVME_CONNECT_IATTR_DATA,
			   512);
	d = ConnectData(kSub, "host-without-nqn-format", NVME_CNTLID_DYNAMIC);
	ExpectInvalidParam(q, ConnectCmd(0, 31, 0, &d), NVME_CONNECT_IATTR_DATA,
			   512);
	d = ConnectData(kSub, kHost, 5); // static model not offered
	ExpectInvalidParam(q, ConnectCmd(0, 31, 0, &d), NVME_CONNECT_IATTR_DATA,
			   16);
	EXPECT_EQ(0u, Stats().ctrls);
}

TEST_F(NvmfFabrics, HostNotOnTheAllowListIsRefused)
{
	nvmf_queue *q = NewQueue(0, 32);
	nvmf_req r = Connect(q, 0, 31, kSub, kStranger, NVME_CNTLID_DYNAMIC);
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_HOST, Sc(r));
	EXPECT_TRUE(Dnr(r));
	EXPECT_EQ(512u, r.rsp.result & 0xFFFF);
	EXPECT_EQ(NVME_CONNECT_IATTR_DATA, (r.rsp.result >> 16) & 0xFF);
	EXPECT_EQ(0u, Stats().ctrls);
	// allow-any-host lets it in; the discovery subsystem always does.
	EXPECT_EQ(0, Status(Connect(q, 0, 31, kOpen, kStranger,
				    NVME_CNTLID_DYNAMIC)));
	nvmf_queue *d = NewQueue(0, 32);
	EXPECT_EQ(0, Status(Connect(d, 0, 31, NVME_DISC_NQN, kStranger,
				    NVME_CNTLID_DYNAMIC)));
}

TEST_F(NvmfFabrics, IoConnectJoinsItsController)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	nvmf_queue *io = NewQueue(2, 64);
	nvmf_req r = Connect(io, 2, 63, kSub, kHost, cntlid);
	ASSERT_EQ(0, Status(r));
	EXPECT_EQ(cntlid, r.rsp.result);
	EXPECT_EQ(2, r.rsp.sqid);
	EXPECT_EQ(cntlid, nvmf_queue_cntlid(io));
	EXPECT_EQ(0, nvmf_tgt_check_cntlid(tgt_, 2, cntlid));
	EXPECT_EQ(0, nvmf_tgt_check_cntlid(tgt_, 2, 0));
	EXPECT_EQ(0, nvmf_tgt_check_cntlid(tgt_, 0, 999));
	EXPECT_EQ(-ENOENT, nvmf_tgt_check_cntlid(tgt_, 2, 999));
	// The same qid twice is busy.
	nvmf_queue *dup = NewQueue(2, 64);
	r = Connect(dup, 2, 63, kSub, kHost, cntlid);
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_CONNECT_CTRL_BUSY, Sc(r));
	(void)admin;
}

TEST_F(NvmfFabrics, IoConnectErrors)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	nvmf_queue *io = NewQueue(1, 32);
	nvme_connect_data d = ConnectData(kSub, kHost, (uint16_t)(cntlid + 1));
	ExpectInvalidParam(io, ConnectCmd(1, 31, 0, &d),
			   NVME_CONNECT_IATTR_DATA, 16);
	d = ConnectData(kOpen, kHost, cntlid); // another subsystem
	ExpectInvalidParam(io, ConnectCmd(1, 31, 0, &d),
			   NVME_CONNECT_IATTR_DATA, 256);
	d = ConnectData(kSub, kStranger, cntlid); // another host
	ExpectInvalidParam(io, ConnectCmd(1, 31, 0, &d),
			   NVME_CONNECT_IATTR_DATA, 512);
	d = ConnectData(kSub, kHost, cntlid);
	d.hostid[3] ^= 1; // another host ID
	ExpectInvalidParam(io, ConnectCmd(1, 31, 0, &d),
			   NVME_CONNECT_IATTR_DATA, 0);
	// Fewer queues allocated through Set Features Number of Queues.
	Capsule sf = Cmd(NVME_ADM_SET_FEATURES, 20);
	sf.sqe.cdw10 = NVME_FEAT_NUM_QUEUES;
	sf.sqe.cdw11 = 0; // one I/O queue pair (0's based)
	EXPECT_EQ(0, Status(Exec(admin, sf)));
	nvmf_queue *io2 = NewQueue(2, 32);
	d = ConnectData(kSub, kHost, cntlid);
	ExpectInvalidParam(io2, ConnectCmd(2, 31, 0, &d),
			   NVME_CONNECT_IATTR_CMD, NVME_IPO_CMD_QID);
	EXPECT_EQ(0, Status(Exec(io, ConnectCmd(1, 31, 0, &d))));
	// Once an I/O queue exists the count is fixed.
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR, Sc(Exec(admin, sf)));
}

TEST_F(NvmfFabrics, IoConnectNeedsAnEnabledController)
{
	nvmf_queue *admin = NewQueue(0, 32);
	nvmf_req r = Connect(admin, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC);
	uint16_t cntlid = (uint16_t)r.rsp.result;
	nvmf_queue *io = NewQueue(1, 32);
	r = Connect(io, 1, 31, kSub, kHost, cntlid);
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR, Sc(r));
	EXPECT_EQ(0, Status(PropSet(admin, NVME_PROP_CC, CcEnable())));
	EXPECT_EQ(0, Status(Connect(io, 1, 31, kSub, kHost, cntlid)));
}

TEST_F(NvmfFabrics, NoIoQueuesOnTheDiscoveryController)
{
	nvmf_queue *admin = NewQueue(0, 32);
	nvmf_req r = Connect(admin, 0, 31, NVME_DISC_NQN, kHost,
			     NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(0, Status(r));
	EXPECT_EQ(0, Status(PropSet(admin, NVME_PROP_CC, CcEnable())));
	nvmf_queue *io = NewQueue(1, 32);
	nvme_connect_data d =
		ConnectData(NVME_DISC_NQN, kHost, (uint16_t)r.rsp.result);
	ExpectInvalidParam(io, ConnectCmd(1, 31, 0, &d), NVME_CONNECT_IATTR_CMD,
			   NVME_IPO_CMD_QID);
}

TEST_F(NvmfFabrics, PropertiesAndEnable)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0,
		  Status(Connect(q, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC)));
	nvmf_req r = PropGet(q, NVME_PROP_CAP, NVME_PROP_SIZE_8);
	ASSERT_EQ(0, Status(r));
	EXPECT_EQ(63u, r.rsp.result & 0xFFFF); // queue-depth 64
	EXPECT_TRUE(r.rsp.result & (1ull << 37));
	r = PropGet(q, NVME_PROP_VS, NVME_PROP_SIZE_4);
	EXPECT_EQ(0x00010300u, r.rsp.result);
	EXPECT_EQ(0u, PropGet(q, NVME_PROP_CSTS, 0).rsp.result);
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(PropGet(q, NVME_PROP_CAP, NVME_PROP_SIZE_4)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(PropGet(q, NVME_PROP_CC, NVME_PROP_SIZE_8)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(PropGet(q, NVME_PROP_CC, 2)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(PropGet(q, 0x0C, 0)));
	// Admin commands wait for CC.EN / CSTS.RDY.
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR,
		  Sc(Exec(q, Cmd(NVME_ADM_KEEP_ALIVE, 30))));
	// Read-only properties, wrong size, bad configuration.
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(PropSet(q, NVME_PROP_CSTS, 1)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(PropSet(q, NVME_PROP_CAP, 1)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(PropSet(q, NVME_PROP_CC, CcEnable(), NVME_PROP_SIZE_8)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(PropSet(q, NVME_PROP_NSSR, 0x4E564D65)));
	EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, NVME_CC_EN)));
	EXPECT_EQ(NVME_CSTS_CFS, PropGet(q, NVME_PROP_CSTS, 0).rsp.result);
	EXPECT_EQ(NVME_SC_CMD_SEQ_ERROR,
		  Sc(Exec(q, Cmd(NVME_ADM_KEEP_ALIVE, 31))));
	EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, 0)));
	EXPECT_EQ(0u, PropGet(q, NVME_PROP_CSTS, 0).rsp.result);
	// A good configuration: ready, and admin commands run.
	EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, CcEnable())));
	EXPECT_EQ(NVME_CSTS_RDY, PropGet(q, NVME_PROP_CSTS, 0).rsp.result);
	EXPECT_EQ(CcEnable(), PropGet(q, NVME_PROP_CC, 0).rsp.result);
	EXPECT_EQ(0, Status(Exec(q, Cmd(NVME_ADM_KEEP_ALIVE, 32))));
	// Shutdown completes at once.
	EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, CcEnable() | 1u << 14)));
	EXPECT_EQ(NVME_CSTS_RDY | NVME_CSTS_SHST_CMPLT,
		  PropGet(q, NVME_PROP_CSTS, 0).rsp.result);
}

TEST_F(NvmfFabrics, PropertyCommandsOnIoQueuesAreInvalidOpcode)
{
	uint16_t cntlid;
	Admin(kSub, &cntlid);
	nvmf_queue *io = Io(1, cntlid);
	EXPECT_EQ(NVME_SC_INVALID_OPCODE,
		  Sc(PropGet(io, NVME_PROP_CAP, NVME_PROP_SIZE_8)));
	EXPECT_EQ(NVME_SC_INVALID_OPCODE,
		  Sc(PropSet(io, NVME_PROP_CC, CcEnable())));
}

TEST_F(NvmfFabrics, ControllerResetKillsIoQueues)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	nvmf_queue *io1 = Io(1, cntlid), *io2 = Io(2, cntlid);
	EXPECT_EQ(0, Status(PropSet(admin, NVME_PROP_CC, 6u << 16 | 4u << 20)));
	EXPECT_TRUE(fake_.WasKilled(io1));
	EXPECT_TRUE(fake_.WasKilled(io2));
	EXPECT_FALSE(fake_.WasKilled(admin));
	EXPECT_EQ(0u, PropGet(admin, NVME_PROP_CSTS, 0).rsp.result);
	// The binding destroys them; the controller lives on its admin queue.
	DestroyQueue(io1);
	DestroyQueue(io2);
	EXPECT_EQ(1u, Stats().ctrls);
	EXPECT_EQ(1u, Stats().queues);
}

TEST_F(NvmfFabrics, DisconnectClosesAnIoQueueOnly)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	nvmf_queue *io = Io(1, cntlid);
	nvmf_req r = Exec(admin, Fabrics(NVME_FCTYPE_DISCONNECT, 40));
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_INVALID_QUEUE_TYPE, Sc(r));
	EXPECT_FALSE(r.close_after);
	Capsule bad = Fabrics(NVME_FCTYPE_DISCONNECT, 41);
	((uint8_t *)&bad.sqe)[40] = 1; // RECFMT 1
	EXPECT_EQ(NVME_SC_CONNECT_INCOMPAT_FMT, Sc(Exec(io, bad)));
	r = Exec(io, Fabrics(NVME_FCTYPE_DISCONNECT, 42));
	EXPECT_EQ(0, Status(r));
	EXPECT_TRUE(r.close_after);
	DestroyQueue(io);
	EXPECT_EQ(1u, Stats().ctrls);
}

TEST_F(NvmfFabrics, AdminQueueGoneEndsTheAssociation)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	nvmf_queue *io1 = Io(1, cntlid), *io2 = Io(3, cntlid);
	EXPECT_EQ(3u, Stats().queues);
	DestroyQueue(admin);
	EXPECT_TRUE(fake_.WasKilled(io1));
	EXPECT_TRUE(fake_.WasKilled(io2));
	// Still counted until the binding destroys them; no new I/O queues.
	EXPECT_EQ(1u, Stats().ctrls);
	EXPECT_EQ(-ENOENT, nvmf_tgt_check_cntlid(tgt_, 2, cntlid));
	nvmf_queue *late = NewQueue(2, 32);
	nvme_connect_data d = ConnectData(kSub, kHost, cntlid);
	ExpectInvalidParam(late, ConnectCmd(2, 31, 0, &d),
			   NVME_CONNECT_IATTR_DATA, 16);
	DestroyQueue(io1);
	DestroyQueue(io2);
	DestroyQueue(late);
	nvmf_tgt_stats st = Stats();
	EXPECT_EQ(0u, st.ctrls);
	EXPECT_EQ(0u, st.queues);
	EXPECT_EQ(0u, st.reqs);
}

TEST_F(NvmfFabrics, ConnectDisconnectCyclesLeakNothing)
{
	for (int cycle = 0; cycle < 20; cycle++) {
		uint16_t cntlid;
		nvmf_queue *admin = Admin(kSub, &cntlid);
		nvmf_queue *io[4];
		for (uint16_t i = 0; i < 4; i++)
			io[i] = Io((uint16_t)(i + 1), cntlid);
		for (nvmf_queue *q : io)
			DestroyQueue(q);
		DestroyQueue(admin);
		nvmf_tgt_stats st = Stats();
		ASSERT_EQ(0u, st.ctrls) << cycle;
		ASSERT_EQ(0u, st.queues) << cycle;
		ASSERT_EQ(0u, st.reqs) << cycle;
	}
	EXPECT_EQ(20u, Stats().ctrls_created);
}

TEST_F(NvmfFabrics, SqFlowControlDisabled)
{
	nvmf_queue *q = NewQueue(0, 32);
	nvme_connect_data d = ConnectData(kSub, kHost, NVME_CNTLID_DYNAMIC);
	Capsule c = ConnectCmd(0, 31, 0, &d);
	((uint8_t *)&c.sqe)[46] = NVME_CATTR_DISABLE_SQFLOW;
	nvmf_req r = Exec(q, c);
	ASSERT_EQ(0, Status(r));
	EXPECT_EQ(NVME_SQHD_DISABLED, r.rsp.sqhd);
	EXPECT_EQ(NVME_SQHD_DISABLED, PropGet(q, NVME_PROP_CSTS, 0).rsp.sqhd);
}

TEST_F(NvmfFabrics, QueueCreateChecksParameters)
{
	nvmf_queue_params p = {};
	nvmf_queue *q = nullptr;
	p.size = sizeof(p);
	p.qid = 5; // io-queues 4
	p.sq_entries = 32;
	EXPECT_EQ(-EINVAL, nvmf_queue_create(tgt_, &p, &q));
	p.qid = 0;
	p.sq_entries = 33; // admin: 32 entries
	EXPECT_EQ(-EINVAL, nvmf_queue_create(tgt_, &p, &q));
	p.qid = 1;
	p.sq_entries = 65; // queue-depth 64
	EXPECT_EQ(-EINVAL, nvmf_queue_create(tgt_, &p, &q));
	p.sq_entries = 1;
	EXPECT_EQ(-EINVAL, nvmf_queue_create(tgt_, &p, &q));
	p.sq_entries = 64;
	p.size = 0;
	EXPECT_EQ(-EINVAL, nvmf_queue_create(tgt_, &p, &q));
	nvmf_queue_destroy(nullptr);
	EXPECT_EQ(0u, Stats().queues);
}

TEST_F(NvmfFabrics, TargetLimitsForTheBinding)
{
	nvme_rdma_limits l;
	nvmf_tgt_rdma_limits(tgt_, 300, 16, &l);
	EXPECT_EQ(4, l.max_qid);
	EXPECT_EQ(32, l.admin_depth);
	EXPECT_EQ(64, l.io_depth);
	EXPECT_EQ(255, l.dev_max_init_rd_atom);
	EXPECT_EQ(16, l.dev_max_rd_atom);
	EXPECT_EQ(4096u, nvmf_tgt_icd_size(tgt_, 1));
	EXPECT_EQ(8192u, nvmf_tgt_icd_size(tgt_, 0));
	EXPECT_EQ(128u * 1024, nvmf_tgt_max_xfer(tgt_));
	// Destroying with queues alive is refused.
	NewQueue(0, 32);
	EXPECT_EQ(-EBUSY, nvmf_tgt_destroy(tgt_));
}

TEST_F(NvmfFabrics, ConnectAuditReportsEveryAdminConnect)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	ASSERT_EQ(1u, fake_.audits.size());
	const Audit &ok = fake_.audits[0];
	EXPECT_EQ(admin, ok.q);
	EXPECT_EQ(kHost, ok.hostnqn);
	EXPECT_EQ("abababab-abab-abab-abab-abababababab", ok.hostid);
	EXPECT_EQ(kSub, ok.subnqn);
	EXPECT_EQ(cntlid, ok.cntlid);
	EXPECT_EQ(0, ok.status);
	EXPECT_EQ("", ok.reason);
	// I/O queues join a controller: not audited.
	Io(1, cntlid);
	EXPECT_EQ(1u, fake_.audits.size());
	// Refusals say why, with the status the host got.
	nvmf_queue *q = NewQueue(0, 32);
	nvmf_req r = Connect(q, 0, 31, kSub, kStranger, NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(2u, fake_.audits.size());
	EXPECT_EQ("host not allowed", fake_.audits[1].reason);
	EXPECT_EQ(kStranger, fake_.audits[1].hostnqn);
	EXPECT_EQ(Status(r), fake_.audits[1].status);
	EXPECT_EQ(0, fake_.audits[1].cntlid);
	Connect(q, 0, 31, "nqn.2024-01.io.wharf:nope", kHost,
		NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(3u, fake_.audits.size());
	EXPECT_EQ("unknown subsystem", fake_.audits[2].reason);
	// A host NQN with control bytes is printed with '?' for them.
	nvme_connect_data d = ConnectData(kSub, kHost, NVME_CNTLID_DYNAMIC);
	d.hostnqn[4] = '\n';
	Exec(q, ConnectCmd(0, 31, 0, &d));
	ASSERT_EQ(4u, fake_.audits.size());
	EXPECT_EQ("invalid host NQN", fake_.audits[3].reason);
	EXPECT_EQ("nqn.?014", fake_.audits[3].hostnqn.substr(0, 8));
	EXPECT_EQ(1u, Stats().ctrls);
}

// Subsystems bound to listen addresses with export lines.
class NvmfExport : public NvmfTest
{
      protected:
	void SetUp() override
	{
		Create(ExportConfig(
			"  export 198.18.0.1 4421\n  export fd00::1\n"));
	}
};

TEST_F(NvmfExport, ConnectOnlyThroughAnExportedListener)
{
	// Listen line 1 does not export kSub: refused as an unknown
	// subsystem (IPO of SUBNQN), the reason audited.
	listener_ = 1;
	nvmf_queue *q = NewQueue(0, 32);
	nvmf_req r = Connect(q, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC);
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM, Sc(r));
	EXPECT_EQ(256u, r.rsp.result & 0xFFFF);
	ASSERT_EQ(1u, fake_.audits.size());
	EXPECT_EQ("subsystem not exported on this listener",
		  fake_.audits[0].reason);
	// A subsystem without export lines is on every listener.
	EXPECT_EQ(0,
		  Status(Connect(q, 0, 31, kOpen, kHost, NVME_CNTLID_DYNAMIC)));
	// Listen lines 2 and 3 export kSub; its I/O queues must come the
	// same way.
	uint16_t cntlid;
	listener_ = 2;
	Admin(kSub, &cntlid);
	listener_ = 3;
	Io(1, cntlid);
	listener_ = 1;
	nvmf_queue *io = NewQueue(2, 32);
	r = Connect(io, 2, 31, kSub, kHost, cntlid);
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM, Sc(r));
	EXPECT_EQ(256u, r.rsp.result & 0xFFFF);
	// No listener known (a tool's queue): only unbound subsystems.
	listener_ = 0;
	nvmf_queue *none = NewQueue(0, 32);
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM,
		  Sc(Connect(none, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC)));
}

TEST(NvmfTarget, CreateReportsBackingErrorsWithTheirLine)
{
	std::string text = std::string("listen 10.0.0.1\nsubsystem ") + kSub +
			   "\n  namespace 3 file:/nonexistent/disk\n"
			   "  allow-any-host\n";
	nvmf_config cfg;
	char err[256] = "";
	ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t.conf", &cfg,
				       err, sizeof(err)));
	nvmf_tgt_ops ops = Fake::Ops();
	Fake fake;
	nvmf_tgt *tgt = nullptr;
	EXPECT_EQ(-ENOENT,
		  nvmf_tgt_create(&cfg, &ops, &fake, &tgt, err, sizeof(err)));
	EXPECT_STREQ("t.conf:3: namespace 3 (/nonexistent/disk): stat: No "
		     "such file or directory",
		     err);
	ops.kill = nullptr;
	EXPECT_EQ(-EINVAL,
		  nvmf_tgt_create(&cfg, &ops, &fake, &tgt, err, sizeof(err)));
	nvmf_config_free(&cfg);
	EXPECT_EQ(0, nvmf_tgt_destroy(nullptr));
}

} // namespace
