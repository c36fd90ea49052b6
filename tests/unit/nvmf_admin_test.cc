// Admin commands through the core: Identify (controller, namespace,
// active list, descriptors; discovery controller), Get Log Page
// (discovery with allow-list filtering and windows, error, SMART,
// changed namespaces), Set / Get Features (number of queues, async event
// configuration, keep-alive timer), Keep Alive and keep-alive expiry with
// a fake clock, Asynchronous Event Requests held until a namespace event,
// their limit and Abort, and Invalid Opcode for everything else.
#include "tests/unit/nvmf_test_util.h"

namespace
{

using namespace nvmf_test;

class NvmfAdmin : public NvmfTest
{
      protected:
	nvmf_queue *admin_ = nullptr;
	uint16_t cntlid_ = 0;

	void SetUp() override
	{
		NvmfTest::SetUp();
		admin_ = Admin(kSub, &cntlid_);
	}

	// Identify into @out (4096 bytes); returns the completion.
	nvmf_req Identify(nvmf_queue *q, uint8_t cns, uint32_t nsid,
			  std::vector<uint8_t> *out)
	{
		out->assign(4096, 0xEE);
		Capsule c = Cmd(NVME_ADM_IDENTIFY, 50, nsid);
		c.sqe.cdw10 = cns;
		SetKeyed(&c.sqe, out->data(), 4096);
		return Exec(q, c);
	}

	// Get Log Page of @len bytes at @off into @out.
	nvmf_req GetLog(nvmf_queue *q, uint8_t lid, uint64_t off, uint32_t len,
			std::vector<uint8_t> *out, bool rae = false,
			uint32_t nsid = 0)
	{
		uint32_t numd = len / 4 - 1;
		out->assign(len, 0xEE);
		Capsule c = Cmd(NVME_ADM_GET_LOG_PAGE, 51, nsid);
		c.sqe.cdw10 =
			lid | (rae ? NVME_GLP_RAE : 0) | (numd & 0xFFFF) << 16;
		c.sqe.cdw11 = numd >> 16;
		c.sqe.cdw12 = (uint32_t)off;
		c.sqe.cdw13 = (uint32_t)(off >> 32);
		SetKeyed(&c.sqe, out->data(), len);
		return Exec(q, c);
	}

	nvmf_req Feature(nvmf_queue *q, bool set, uint32_t cdw10,
			 uint32_t cdw11 = 0)
	{
		Capsule c =
			Cmd(set ? NVME_ADM_SET_FEATURES : NVME_ADM_GET_FEATURES,
			    52);
		c.sqe.cdw10 = cdw10;
		c.sqe.cdw11 = cdw11;
		return Exec(q, c);
	}

	nvmf_queue *Discovery(const char *host = kHost)
	{
		nvmf_queue *q = NewQueue(0, 32);
		EXPECT_EQ(0, Status(Connect(q, 0, 31, NVME_DISC_NQN, host,
					    NVME_CNTLID_DYNAMIC)));
		EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, CcEnable())));
		return q;
	}

	static std::string Field(const char *p, size_t n)
	{
		return std::string(p, n);
	}
};

TEST_F(NvmfAdmin, IdentifyController)
{
	std::vector<uint8_t> buf;
	nvmf_req r = Identify(admin_, NVME_CNS_CTRL, 0, &buf);
	ASSERT_EQ(0, Status(r));
	nvme_id_ctrl id;
	memcpy(&id, buf.data(), sizeof(id));
	EXPECT_EQ("SN-TEST" + std::string(13, ' '), Field(id.sn, 20));
	EXPECT_EQ("wharf test disk" + std::string(25, ' '), Field(id.mn, 40));
	EXPECT_EQ(cntlid_, id.cntlid);
	EXPECT_EQ(0x00010300u, id.ver);
	EXPECT_EQ(5, id.mdts); // 128 KiB / 4 KiB = 2^5
	EXPECT_EQ(NVME_CMIC_MULTI_CTRL, id.cmic);
	EXPECT_EQ(NVME_OAES_NS_ATTR, id.oaes);
	EXPECT_EQ(3, id.aerl);
	EXPECT_EQ(15, id.elpe);
	EXPECT_EQ(NVME_LPA_EXT_DATA, id.lpa);
	EXPECT_EQ(10, id.kas);
	EXPECT_EQ(0x66, id.sqes);
	EXPECT_EQ(0x44, id.cqes);
	EXPECT_EQ(64, id.maxcmd);
	EXPECT_EQ(1024u, id.nn);
	EXPECT_EQ(NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES, id.oncs);
	EXPECT_EQ(0, id.vwc); // RAM only
	EXPECT_EQ((1u << 0) | (1u << 2) | (1u << 18) | (1u << 20), id.sgls);
	EXPECT_STREQ(kSub, id.subnqn);
	EXPECT_EQ((64u + 4096) / 16, id.ioccsz);
	EXPECT_EQ(1u, id.iorcsz);
	EXPECT_EQ(0, id.icdoff);
	EXPECT_EQ(0, id.fcatt); // dynamic controller model
	EXPECT_EQ(1, id.msdbd);
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(Identify(admin_, 0x04, 0, &buf))); // unsupported CNS
}

TEST_F(NvmfAdmin, IdentifyNamespace)
{
	std::vector<uint8_t> buf;
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_NS, 2, &buf)));
	nvme_id_ns ns;
	memcpy(&ns, buf.data(), sizeof(ns));
	EXPECT_EQ(256u, ns.nsze); // 1 MiB / 4096
	EXPECT_EQ(256u, ns.ncap);
	EXPECT_EQ(0, ns.nlbaf);
	EXPECT_EQ(12, ns.lbaf[0].lbads);
	EXPECT_EQ(NVME_NMIC_SHARED, ns.nmic);
	EXPECT_EQ(NVME_DLFEAT_READ_0 | NVME_DLFEAT_WZ_DEAC, ns.dlfeat);
	uint8_t zero[16] = {0};
	EXPECT_NE(0, memcmp(ns.nguid, zero, 16));
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_NS, 1, &buf)));
	memcpy(&ns, buf.data(), sizeof(ns));
	EXPECT_EQ(2048u, ns.nsze); // 1 MiB / 512
	EXPECT_EQ(9, ns.lbaf[0].lbads);
	// Valid but unattached NSID: zeroes. Out of range: Invalid NS.
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_NS, 7, &buf)));
	for (uint8_t b : buf)
		ASSERT_EQ(0, b);
	EXPECT_EQ(NVME_SC_INVALID_NS,
		  Sc(Identify(admin_, NVME_CNS_NS, 0, &buf)));
	EXPECT_EQ(NVME_SC_INVALID_NS,
		  Sc(Identify(admin_, NVME_CNS_NS, 1025, &buf)));
	EXPECT_EQ(NVME_SC_INVALID_NS,
		  Sc(Identify(admin_, NVME_CNS_NS, NVME_NSID_ALL, &buf)));
}

TEST_F(NvmfAdmin, ActiveNamespaceListAndDescriptors)
{
	std::vector<uint8_t> buf;
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_ACTIVE_NSL, 0, &buf)));
	uint32_t ids[3];
	memcpy(ids, buf.data(), sizeof(ids));
	EXPECT_EQ(1u, ids[0]);
	EXPECT_EQ(2u, ids[1]);
	EXPECT_EQ(0u, ids[2]);
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_ACTIVE_NSL, 1, &buf)));
	memcpy(ids, buf.data(), sizeof(ids));
	EXPECT_EQ(2u, ids[0]);
	EXPECT_EQ(0u, ids[1]);
	EXPECT_EQ(NVME_SC_INVALID_NS,
		  Sc(Identify(admin_, NVME_CNS_ACTIVE_NSL, 0xFFFFFFFE, &buf)));

	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_NS_DESCLIST, 1, &buf)));
	EXPECT_EQ(NVME_NIDT_NGUID, buf[0]);
	EXPECT_EQ(16, buf[1]);
	EXPECT_EQ(NVME_NIDT_UUID, buf[20]);
	EXPECT_EQ(16, buf[21]);
	EXPECT_EQ(0x40, buf[24 + 6] & 0xF0); // UUID version 4 layout
	EXPECT_EQ(0, buf[40]);		     // terminator
	std::vector<uint8_t> ns;
	Identify(admin_, NVME_CNS_NS, 1, &ns);
	EXPECT_EQ(0, memcmp(buf.data() + 4, ns.data() + 104, 16)); // NGUID
	// Stable across targets: derived from the subsystem NQN and NSID.
	std::vector<uint8_t> other;
	Identify(admin_, NVME_CNS_NS_DESCLIST, 2, &other);
	EXPECT_NE(0, memcmp(buf.data() + 4, other.data() + 4, 16));
	EXPECT_EQ(NVME_SC_INVALID_NS,
		  Sc(Identify(admin_, NVME_CNS_NS_DESCLIST, 3, &buf)));
}

TEST_F(NvmfAdmin, DiscoveryControllerAndLog)
{
	nvmf_queue *d = Discovery();
	std::vector<uint8_t> buf;
	ASSERT_EQ(0, Status(Identify(d, NVME_CNS_CTRL, 0, &buf)));
	nvme_id_ctrl id;
	memcpy(&id, buf.data(), sizeof(id));
	EXPECT_STREQ(NVME_DISC_NQN, id.subnqn);
	EXPECT_EQ(0u, id.nn);
	EXPECT_EQ(0u, id.oaes);
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(Identify(d, NVME_CNS_NS, 1, &buf)));
	// kHost may use kSub and kOpen (allow-any), not kOther: 2 subsystems
	// x 2 listen addresses.
	ASSERT_EQ(0, Status(GetLog(d, NVME_LID_DISCOVERY, 0, 1024, &buf)));
	nvme_disc_hdr h;
	memcpy(&h, buf.data(), sizeof(h));
	EXPECT_EQ(4u, h.numrec);
	EXPECT_EQ(1u, h.genctr);
	EXPECT_EQ(0, h.recfmt);
	ASSERT_EQ(0, Status(GetLog(d, NVME_LID_DISCOVERY, 0, 5 * 1024, &buf)));
	nvme_disc_entry e[4];
	memcpy(e, buf.data() + 1024, sizeof(e));
	EXPECT_EQ(NVME_TRTYPE_RDMA, e[0].trtype);
	EXPECT_EQ(NVME_ADRFAM_IPV4, e[0].adrfam);
	EXPECT_EQ(NVME_SUBTYPE_NVME, e[0].subtype);
	EXPECT_EQ(1, e[0].portid);
	EXPECT_EQ(NVME_CNTLID_DYNAMIC, e[0].cntlid);
	EXPECT_EQ(32, e[0].asqsz);
	EXPECT_EQ("4420" + std::string(28, ' '), Field(e[0].trsvcid, 32));
	EXPECT_EQ("198.18.0.1" + std::string(246, ' '),
		  Field(e[0].traddr, 256));
	EXPECT_STREQ(kSub, e[0].subnqn);
	EXPECT_EQ(NVME_RDMA_QPTYPE_CONNECTED, e[0].tsas.qptype);
	EXPECT_EQ(NVME_RDMA_CMS_RDMA_CM, e[0].tsas.cms);
	EXPECT_EQ(NVME_ADRFAM_IPV6, e[1].adrfam);
	EXPECT_EQ(2, e[1].portid);
	EXPECT_EQ("4421" + std::string(28, ' '), Field(e[1].trsvcid, 32));
	EXPECT_STREQ(kOpen, e[2].subnqn);
	EXPECT_STREQ(kOpen, e[3].subnqn);
	// A window: the third entry alone, at its offset.
	std::vector<uint8_t> win;
	ASSERT_EQ(0,
		  Status(GetLog(d, NVME_LID_DISCOVERY, 3 * 1024, 1024, &win)));
	EXPECT_EQ(0, memcmp(win.data(), &e[2], 1024));
	// Past the end: zeroes; beyond the size: Invalid Field.
	ASSERT_EQ(0, Status(GetLog(d, NVME_LID_DISCOVERY, 5 * 1024, 64, &win)));
	for (uint8_t b : win)
		ASSERT_EQ(0, b);
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(GetLog(d, NVME_LID_DISCOVERY, 5 * 1024 + 4, 64, &win)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(GetLog(d, NVME_LID_DISCOVERY, 2, 64, &win))); // unaligned
	// NVM logs are not on the discovery controller.
	nvmf_req r = GetLog(d, NVME_LID_SMART, 0, 512, &win);
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_INVALID_LOG_PAGE, Sc(r));
	EXPECT_EQ(NVME_SC_INVALID_OPCODE, Sc(Exec(d, Cmd(NVME_ADM_ABORT, 60))));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(Feature(d, true, NVME_FEAT_NUM_QUEUES, 0)));
	EXPECT_EQ(0, Status(Exec(d, Cmd(NVME_ADM_KEEP_ALIVE, 61))));
}

TEST_F(NvmfAdmin, DiscoveryLogShowsOnlyAllowedSubsystems)
{
	nvmf_queue *d = Discovery(kStranger);
	std::vector<uint8_t> buf;
	ASSERT_EQ(0, Status(GetLog(d, NVME_LID_DISCOVERY, 0, 3 * 1024, &buf)));
	nvme_disc_hdr h;
	memcpy(&h, buf.data(), sizeof(h));
	EXPECT_EQ(4u, h.numrec); // kOpen and kOther, 2 addresses each
	EXPECT_STREQ(kOpen, (const char *)buf.data() + 1024 + 256);
	EXPECT_STREQ(kOpen, (const char *)buf.data() + 2048 + 256);
}

// The discovery log of a target whose kSub is exported on the second of
// three listen addresses only: kOpen (no export lines) at every address,
// kSub at its own, and only to a discovery controller that came in there.
class NvmfAdminExport : public NvmfAdmin
{
      protected:
	void SetUp() override
	{
		Create(ExportConfig("  export 198.18.0.1 4421\n"));
	}

	nvme_disc_hdr Header(nvmf_queue *d, std::vector<uint8_t> *buf)
	{
		nvme_disc_hdr h;
		EXPECT_EQ(0, Status(GetLog(d, NVME_LID_DISCOVERY, 0, 5 * 1024,
					   buf)));
		memcpy(&h, buf->data(), sizeof(h));
		return h;
	}
};

TEST_F(NvmfAdminExport, DiscoveryLogListsAPortsOwnSubsystems)
{
	std::vector<uint8_t> buf;
	listener_ = 2; // kSub's own listener
	nvmf_queue *d = Discovery();
	nvme_disc_hdr h = Header(d, &buf);
	ASSERT_EQ(4u, h.numrec);
	nvme_disc_entry e[4];
	memcpy(e, buf.data() + 1024, sizeof(e));
	EXPECT_STREQ(kSub, e[0].subnqn);
	EXPECT_EQ(2, e[0].portid);
	EXPECT_EQ("4421" + std::string(28, ' '), Field(e[0].trsvcid, 32));
	for (int i = 1; i < 4; i++) {
		EXPECT_STREQ(kOpen, e[i].subnqn);
		EXPECT_EQ(i, e[i].portid);
	}
	// A window on the last entry finds it at its offset.
	std::vector<uint8_t> win;
	ASSERT_EQ(0,
		  Status(GetLog(d, NVME_LID_DISCOVERY, 4 * 1024, 1024, &win)));
	EXPECT_EQ(0, memcmp(win.data(), &e[3], 1024));
	// Through another listener (or none known) kSub is not there.
	for (uint16_t l : {1, 3, 0}) {
		listener_ = l;
		nvmf_queue *other = Discovery();
		h = Header(other, &buf);
		EXPECT_EQ(3u, h.numrec) << "listener " << l;
		EXPECT_STREQ(kOpen, (const char *)buf.data() + 1024 + 256);
	}
}

TEST_F(NvmfAdmin, LogPageErrors)
{
	std::vector<uint8_t> buf;
	nvmf_req r = GetLog(admin_, NVME_LID_DISCOVERY, 0, 1024, &buf);
	EXPECT_EQ(NVME_SC_INVALID_LOG_PAGE, Sc(r));
	EXPECT_EQ(NVME_SC_INVALID_LOG_PAGE,
		  Sc(GetLog(admin_, 0x03, 0, 512, &buf))); // firmware slot
	EXPECT_EQ(NVME_SC_INVALID_LOG_PAGE,
		  Sc(GetLog(admin_, 0xC0, 0, 512, &buf)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(GetLog(admin_, NVME_LID_SMART, 0, 512, &buf, false, 1)));
	EXPECT_EQ(0, Status(GetLog(admin_, NVME_LID_SMART, 0, 512, &buf, false,
				   NVME_NSID_ALL)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(GetLog(admin_, NVME_LID_SMART, 516, 4, &buf)));
	// Above MDTS (128 KiB).
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(GetLog(admin_, NVME_LID_CHANGED_NS,
						   0, 128 * 1024 + 4, &buf)));
	// NUMDU carries the high bits.
	Capsule c = Cmd(NVME_ADM_GET_LOG_PAGE, 53);
	c.sqe.cdw10 = NVME_LID_SMART;
	c.sqe.cdw11 = 1; // NUMD = 65536 dwords
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(Exec(admin_, c)));
}

TEST_F(NvmfAdmin, ErrorLogNewestFirst)
{
	std::vector<uint8_t> buf;
	// Three failing commands.
	Exec(admin_, Cmd(0x99, 70));
	Exec(admin_, Cmd(NVME_ADM_FORMAT_NVM, 71));
	Identify(admin_, NVME_CNS_NS, 1025, &buf);
	ASSERT_EQ(0, Status(GetLog(admin_, NVME_LID_ERROR, 0, 4 * 64, &buf)));
	nvme_error_log e[4];
	memcpy(e, buf.data(), sizeof(e));
	EXPECT_EQ(3u, e[0].error_count);
	EXPECT_EQ(50, e[0].cid); // Identify
	EXPECT_EQ(1025u, e[0].nsid);
	EXPECT_EQ(NVME_SC_INVALID_NS, (e[0].status >> 1) & 0xFF);
	EXPECT_EQ(0, e[0].sqid);
	EXPECT_EQ(NVME_TRTYPE_RDMA, e[0].trtype);
	EXPECT_EQ(0xFFFF, e[0].param_loc);
	EXPECT_EQ(2u, e[1].error_count);
	EXPECT_EQ(71, e[1].cid);
	EXPECT_EQ(1u, e[2].error_count);
	EXPECT_EQ(70, e[2].cid);
	EXPECT_EQ(NVME_SC_INVALID_OPCODE, (e[2].status >> 1) & 0xFF);
	EXPECT_EQ(0u, e[3].error_count);
	// The ring keeps the newest 16.
	for (int i = 0; i < 20; i++)
		Exec(admin_, Cmd(0x99, (uint16_t)(100 + i)));
	ASSERT_EQ(0, Status(GetLog(admin_, NVME_LID_ERROR, 0, 16 * 64, &buf)));
	memcpy(e, buf.data(), sizeof(e[0]));
	EXPECT_EQ(23u, e[0].error_count);
	memcpy(e, buf.data() + 15 * 64, sizeof(e[0]));
	EXPECT_EQ(8u, e[0].error_count);
	ASSERT_EQ(0, Status(GetLog(admin_, NVME_LID_SMART, 0, 512, &buf)));
	nvme_smart_log s;
	memcpy(&s, buf.data(), sizeof(s));
	EXPECT_EQ(23u, s.num_err_log_entries[0]);
	EXPECT_EQ(293, s.temperature);
	EXPECT_EQ(100, s.avail_spare);
}

TEST_F(NvmfAdmin, UnsupportedAdminCommandsAreInvalidOpcode)
{
	const uint8_t opcodes[] = {
		NVME_ADM_DELETE_SQ,
		NVME_ADM_CREATE_SQ,
		NVME_ADM_DELETE_CQ,
		NVME_ADM_CREATE_CQ,
		NVME_ADM_DOORBELL_BUF,
		NVME_ADM_FORMAT_NVM,
		NVME_ADM_SECURITY_SEND,
		0x0D,
		0x10,
		0x11,
		0x14,
		0x15,
		0x19,
		0x84,
		0xC0,
		0xFF,
	};
	for (uint8_t opc : opcodes) {
		nvmf_req r = Exec(admin_, Cmd(opc, 80));
		EXPECT_EQ(NVME_SCT_GENERIC, Sct(r)) << (int)opc;
		EXPECT_EQ(NVME_SC_INVALID_OPCODE, Sc(r)) << (int)opc;
		EXPECT_TRUE(Dnr(r));
	}
}

TEST_F(NvmfAdmin, Features)
{
	nvmf_req r = Feature(admin_, false, NVME_FEAT_NUM_QUEUES);
	ASSERT_EQ(0, Status(r));
	EXPECT_EQ(0x00030003u, r.rsp.result); // io-queues 4, 0's based
	r = Feature(admin_, true, NVME_FEAT_NUM_QUEUES, 0x00050001);
	ASSERT_EQ(0, Status(r));
	EXPECT_EQ(0x00030001u, r.rsp.result); // min(requested, 3)
	EXPECT_EQ(0x00030001u,
		  Feature(admin_, false, NVME_FEAT_NUM_QUEUES).rsp.result);
	EXPECT_EQ(0x00030003u,
		  Feature(admin_, false, NVME_FEAT_NUM_QUEUES | 1u << 8)
			  .rsp.result); // default
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(Feature(admin_, true, NVME_FEAT_NUM_QUEUES, 0xFFFF)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(Feature(admin_, true, NVME_FEAT_NUM_QUEUES, 0xFFFF0000)));

	r = Feature(admin_, true, NVME_FEAT_ASYNC_EVENT, 0xFFFFFFFF);
	ASSERT_EQ(0, Status(r));
	EXPECT_EQ(NVME_OAES_NS_ATTR,
		  Feature(admin_, false, NVME_FEAT_ASYNC_EVENT).rsp.result);

	ASSERT_EQ(0, Status(Feature(admin_, true, NVME_FEAT_KATO, 1500)));
	EXPECT_EQ(2000u, Feature(admin_, false, NVME_FEAT_KATO).rsp.result);
	EXPECT_EQ(NVME_FEAT_CAP_CHANGEABLE,
		  Feature(admin_, false, NVME_FEAT_KATO | 3u << 8).rsp.result);
	EXPECT_EQ(NVME_SC_INVALID_FIELD,
		  Sc(Feature(admin_, false, NVME_FEAT_KATO | 4u << 8)));

	r = Feature(admin_, true, NVME_FEAT_KATO | NVME_FEAT_SAVE, 1000);
	EXPECT_EQ(NVME_SCT_CMD, Sct(r));
	EXPECT_EQ(NVME_SC_FEAT_NOT_SAVEABLE, Sc(r));
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(Feature(admin_, true, 0x06, 1)));
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(Feature(admin_, false, 0x02)));
}

TEST_F(NvmfAdmin, KeepAliveExpiryTearsTheControllerDown)
{
	uint16_t cntlid;
	fake_.now = 10000;
	nvmf_queue *admin = Admin(kSub, &cntlid, 5000); // KATO 5 s
	nvmf_queue *io = Io(1, cntlid);
	EXPECT_EQ(0, nvmf_tgt_kato_scan(tgt_, 19999));
	fake_.now = 14000;
	EXPECT_EQ(0, Status(Exec(admin, Cmd(NVME_ADM_KEEP_ALIVE, 90))));
	EXPECT_EQ(0, nvmf_tgt_kato_scan(tgt_, 23999)); // 2 x KATO
	EXPECT_TRUE(fake_.killed.empty());
	EXPECT_EQ(1, nvmf_tgt_kato_scan(tgt_, 24000));
	EXPECT_TRUE(fake_.WasKilled(admin));
	EXPECT_TRUE(fake_.WasKilled(io));
	EXPECT_FALSE(fake_.WasKilled(admin_)); // KATO 0: never expires
	EXPECT_EQ(1u, Stats().kato_expired);
	EXPECT_EQ(0, nvmf_tgt_kato_scan(tgt_, 99999)); // once
	EXPECT_EQ(2u, fake_.killed.size());
	// The dead controller takes no more I/O queues; its queues fail.
	EXPECT_EQ(-ENOENT, nvmf_tgt_check_cntlid(tgt_, 2, cntlid));
	Slot s;
	EXPECT_EQ(NVMF_ACT_DROP, Run(io, &s, Cmd(NVME_IO_FLUSH, 1, 1)));
	DestroyQueue(io);
	DestroyQueue(admin);
	EXPECT_EQ(1u, Stats().ctrls); // admin_'s
}

// The Linux host sends its first Keep Alive KATO/2 after its last queue
// is up: every admin command and every Connect of the controller counts.
TEST_F(NvmfAdmin, AdminAndConnectCommandsRestartTheTimerIoCommandsDoNot)
{
	uint16_t cntlid;
	fake_.now = 10000;
	nvmf_queue *admin = Admin(kSub, &cntlid, 5000); // KATO 5 s
	fake_.now = 14000;
	std::vector<uint8_t> buf;
	EXPECT_EQ(0, Status(Identify(admin, NVME_CNS_CTRL, 0, &buf)));
	EXPECT_EQ(0, nvmf_tgt_kato_scan(tgt_, 23999)); // 2 x KATO after it
	fake_.now = 18000;
	nvmf_queue *io = Io(1, cntlid);
	EXPECT_EQ(0, nvmf_tgt_kato_scan(tgt_, 27999));
	fake_.now = 22000;
	Slot s;
	EXPECT_EQ(NVMF_ACT_RESPOND, Run(io, &s, Cmd(NVME_IO_FLUSH, 1, 1)));
	EXPECT_EQ(1, nvmf_tgt_kato_scan(tgt_, 28000));
	EXPECT_TRUE(fake_.WasKilled(admin));
	EXPECT_TRUE(fake_.WasKilled(io));
	DestroyQueue(io);
	DestroyQueue(admin);
}

TEST_F(NvmfAdmin, KeepAliveTimerFeatureRestartsTheTimer)
{
	fake_.now = 0;
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid, 0);
	fake_.now = 100000;
	ASSERT_EQ(0, Status(Feature(admin, true, NVME_FEAT_KATO, 3000)));
	EXPECT_EQ(0, nvmf_tgt_kato_scan(tgt_, 105999));
	EXPECT_EQ(1, nvmf_tgt_kato_scan(tgt_, 106000));
	EXPECT_TRUE(fake_.WasKilled(admin));
	EXPECT_FALSE(fake_.WasKilled(admin_));
	// The killed queue answers nothing more.
	Slot s;
	EXPECT_EQ(NVMF_ACT_DROP, Run(admin, &s, Cmd(NVME_ADM_KEEP_ALIVE, 1)));
}

TEST_F(NvmfAdmin, AsyncEventHeldUntilANamespaceChanges)
{
	ASSERT_EQ(0, Status(Feature(admin_, true, NVME_FEAT_ASYNC_EVENT,
				    NVME_OAES_NS_ATTR)));
	Slot aer;
	ASSERT_EQ(NVMF_ACT_HOLD,
		  Run(admin_, &aer, Cmd(NVME_ADM_ASYNC_EVENT, 100)));
	EXPECT_EQ(1u, Stats().held);
	EXPECT_EQ(1u, nvmf_queue_inflight(admin_));
	// Other commands keep flowing around it.
	EXPECT_EQ(0, Status(Exec(admin_, Cmd(NVME_ADM_KEEP_ALIVE, 101))));
	EXPECT_TRUE(fake_.ready.empty());

	ASSERT_EQ(0, nvmf_tgt_ns_add_ram(tgt_, kSub, 9, 1 << 20, 512));
	ASSERT_EQ(1u, fake_.ready.size());
	std::vector<uint8_t> first;
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_NS, 9, &first)));
	EXPECT_EQ(admin_, fake_.ready[0].first);
	EXPECT_EQ(&aer.req, fake_.ready[0].second);
	EXPECT_EQ(0u, Stats().held);
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_resume(admin_, &aer.req));
	EXPECT_EQ(0, Status(aer.req));
	EXPECT_EQ(100, aer.req.rsp.cid);
	EXPECT_EQ(0x040002u, aer.req.rsp.result); // notice, NS changed, 04h
	EXPECT_EQ(NVMF_ACT_DROP, nvmf_req_resume(admin_, &aer.req));

	// Masked until the log is read; the list accumulates meanwhile.
	Slot aer2;
	ASSERT_EQ(NVMF_ACT_HOLD,
		  Run(admin_, &aer2, Cmd(NVME_ADM_ASYNC_EVENT, 102)));
	ASSERT_EQ(0, nvmf_tgt_ns_remove(tgt_, kSub, 2));
	EXPECT_EQ(1u, fake_.ready.size());
	std::vector<uint8_t> buf;
	ASSERT_EQ(0, Status(GetLog(admin_, NVME_LID_CHANGED_NS, 0, 4096, &buf,
				   true)));
	uint32_t ids[3];
	memcpy(ids, buf.data(), sizeof(ids));
	EXPECT_EQ(9u, ids[0]);
	EXPECT_EQ(2u, ids[1]);
	EXPECT_EQ(0u, ids[2]);
	// RAE set: nothing cleared; RAE clear: cleared and re-armed.
	ASSERT_EQ(0, Status(GetLog(admin_, NVME_LID_CHANGED_NS, 0, 8, &buf)));
	memcpy(ids, buf.data(), 8);
	EXPECT_EQ(9u, ids[0]);
	ASSERT_EQ(0, Status(GetLog(admin_, NVME_LID_CHANGED_NS, 0, 8, &buf)));
	memcpy(ids, buf.data(), 8);
	EXPECT_EQ(0u, ids[0]);
	ASSERT_EQ(0, nvmf_tgt_ns_set_ready(tgt_, kSub, 1, true)); // no event
	EXPECT_EQ(1u, fake_.ready.size());
	ASSERT_EQ(0, nvmf_tgt_ns_remove(tgt_, kSub, 9));
	ASSERT_EQ(2u, fake_.ready.size());
	EXPECT_EQ(&aer2.req, fake_.ready[1].second);
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_resume(admin_, &aer2.req));
	EXPECT_EQ(0u, nvmf_queue_inflight(admin_));

	// Identify reflects the changes.
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_ACTIVE_NSL, 0, &buf)));
	memcpy(ids, buf.data(), sizeof(ids));
	EXPECT_EQ(1u, ids[0]);
	EXPECT_EQ(0u, ids[1]);
	EXPECT_EQ(-ENOENT, nvmf_tgt_ns_remove(tgt_, kSub, 9));
	// A removed NSID may be used again (the old namespace stays until
	// the target goes: I/O in flight may use it); a live one may not.
	EXPECT_EQ(0, nvmf_tgt_ns_add_ram(tgt_, kSub, 9, 64 << 10, 4096));
	EXPECT_EQ(-EEXIST, nvmf_tgt_ns_add_ram(tgt_, kSub, 9, 1 << 20, 512));
	ASSERT_EQ(0, Status(Identify(admin_, NVME_CNS_NS, 9, &buf)));
	nvme_id_ns idns;
	memcpy(&idns, buf.data(), sizeof(idns));
	EXPECT_EQ(16u, idns.nsze); // the new one: 64 KiB of 4 KiB blocks
	// ... with identifiers of its own: a host must not take it for the
	// namespace it replaces.
	nvme_id_ns old;
	memcpy(&old, first.data(), sizeof(old));
	EXPECT_NE(0, memcmp(old.nguid, idns.nguid, sizeof(idns.nguid)));
	EXPECT_EQ(-ENOENT,
		  nvmf_tgt_ns_add_ram(tgt_, "nqn.2024-01.x:y", 3, 4096, 512));
	EXPECT_EQ(-ENOENT,
		  nvmf_tgt_ns_add_ram(tgt_, NVME_DISC_NQN, 3, 4096, 512));
	EXPECT_EQ(-EINVAL, nvmf_tgt_ns_add_ram(tgt_, kSub, 0, 4096, 512));
	EXPECT_EQ(-EINVAL, nvmf_tgt_ns_add_ram(tgt_, kSub, 3, 1000, 512));
}

TEST_F(NvmfAdmin, PendingNoticeCompletesTheNextAerAtOnce)
{
	Feature(admin_, true, NVME_FEAT_ASYNC_EVENT, NVME_OAES_NS_ATTR);
	ASSERT_EQ(0, nvmf_tgt_ns_remove(tgt_, kSub, 1));
	EXPECT_TRUE(fake_.ready.empty());
	nvmf_req r = Exec(admin_, Cmd(NVME_ADM_ASYNC_EVENT, 110));
	EXPECT_EQ(0, Status(r));
	EXPECT_EQ(0x040002u, r.rsp.result);
	// Without the configuration bit no notice is raised.
	Feature(admin_, true, NVME_FEAT_ASYNC_EVENT, 0);
	std::vector<uint8_t> buf;
	GetLog(admin_, NVME_LID_CHANGED_NS, 0, 8, &buf);
	ASSERT_EQ(0, nvmf_tgt_ns_remove(tgt_, kSub, 2));
	Slot aer;
	EXPECT_EQ(NVMF_ACT_HOLD,
		  Run(admin_, &aer, Cmd(NVME_ADM_ASYNC_EVENT, 111)));
	EXPECT_TRUE(fake_.ready.empty());
	// TearDown destroys the admin queue with the AER still held.
}

TEST_F(NvmfAdmin, AerLimitAndAbort)
{
	std::vector<Slot> aers(5);
	for (uint16_t i = 0; i < 4; i++) // AERL 3: four outstanding
		ASSERT_EQ(NVMF_ACT_HOLD,
			  Run(admin_, &aers[i],
			      Cmd(NVME_ADM_ASYNC_EVENT, (uint16_t)(200 + i))));
	ASSERT_EQ(NVMF_ACT_RESPOND,
		  Run(admin_, &aers[4], Cmd(NVME_ADM_ASYNC_EVENT, 204)));
	EXPECT_EQ(NVME_SCT_CMD, Sct(aers[4].req));
	EXPECT_EQ(NVME_SC_AER_LIMIT, Sc(aers[4].req));
	EXPECT_EQ(4u, Stats().held);

	// Abort the second one.
	Capsule ab = Cmd(NVME_ADM_ABORT, 210);
	ab.sqe.cdw10 = 0u | 201u << 16;
	nvmf_req r = Exec(admin_, ab);
	EXPECT_EQ(0, Status(r));
	EXPECT_EQ(0u, r.rsp.result & 1); // aborted
	ASSERT_EQ(1u, fake_.ready.size());
	EXPECT_EQ(&aers[1].req, fake_.ready[0].second);
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_resume(admin_, &aers[1].req));
	EXPECT_EQ(NVME_SC_ABORT_REQ, Sc(aers[1].req));
	EXPECT_EQ(201, aers[1].req.rsp.cid);
	// Unknown CID or another queue: not aborted.
	ab.sqe.cdw10 = 0u | 999u << 16;
	EXPECT_EQ(1u, Exec(admin_, ab).rsp.result & 1);
	ab.sqe.cdw10 = 1u | 200u << 16;
	EXPECT_EQ(1u, Exec(admin_, ab).rsp.result & 1);
	// The binding may also forget a held request.
	nvmf_req_abort(admin_, &aers[0].req);
	EXPECT_EQ(2u, Stats().held);
	EXPECT_EQ(2u, nvmf_queue_inflight(admin_));
	// A namespace event now goes to the oldest remaining (CID 202).
	Feature(admin_, true, NVME_FEAT_ASYNC_EVENT, NVME_OAES_NS_ATTR);
	ASSERT_EQ(0, nvmf_tgt_ns_add_ram(tgt_, kSub, 5, 4096, 512));
	ASSERT_EQ(2u, fake_.ready.size());
	EXPECT_EQ(&aers[2].req, fake_.ready[1].second);
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_resume(admin_, &aers[2].req));
	EXPECT_EQ(202, aers[2].req.rsp.cid);
	// aers[3] stays held: TearDown destroys the queue with it.
}

} // namespace
