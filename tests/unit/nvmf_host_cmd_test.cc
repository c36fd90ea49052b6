// The NVMe-oF host's command capsules and response parser
// (nvmf_host/cmd.h): the bytes each builder puts on the wire, read
// back through the shared proto/nvme layouts and, for Connect, through
// the target's own private-data parser; the response checks.
#include <errno.h>
#include <string.h>

#include <gtest/gtest.h>

#include "nvmf_host/cmd.h"
#include "proto/nvme/rdma_pdata.h"

namespace
{

uint32_t KeyedLen(const nvme_sgl &s)
{
	return s.keyed.len[0] | s.keyed.len[1] << 8 | s.keyed.len[2] << 16;
}

TEST(NvmfHostCmd, ConnectAdminAndIo)
{
	union nvme_cmd c;

	wnh_cmd_connect(&c, 0, 32, 5000);
	EXPECT_EQ(NVME_OPC_FABRICS, c.connect.opc);
	EXPECT_EQ(NVME_FCTYPE_CONNECT, c.connect.fctype);
	EXPECT_EQ(NVME_FLAGS_PSDT_SGL, c.common.flags);
	EXPECT_EQ(0, c.connect.qid);
	EXPECT_EQ(31, c.connect.sqsize);
	EXPECT_EQ(5000u, c.connect.kato);

	wnh_cmd_connect(&c, 3, 129, 5000);
	EXPECT_EQ(3, c.connect.qid);
	EXPECT_EQ(128, c.connect.sqsize);
	EXPECT_EQ(0u, c.connect.kato) << "KATO belongs to the admin queue";
}

TEST(NvmfHostCmd, ConnectData)
{
	struct nvme_connect_data d;
	uint8_t id[16];
	std::string long_nqn(NVME_NQN_MAX + 1, 'x');

	memset(id, 7, sizeof(id));
	ASSERT_EQ(0, wnh_connect_data(&d, id, NVME_CNTLID_DYNAMIC, "nqn.s",
				      "nqn.h"));
	EXPECT_EQ(0, memcmp(d.hostid, id, 16));
	EXPECT_EQ(NVME_CNTLID_DYNAMIC, d.cntlid);
	EXPECT_STREQ("nqn.s", d.subnqn);
	EXPECT_STREQ("nqn.h", d.hostnqn);
	EXPECT_EQ(-EINVAL, wnh_connect_data(&d, id, 1, "", "nqn.h"));
	EXPECT_EQ(-EINVAL,
		  wnh_connect_data(&d, id, 1, long_nqn.c_str(), "nqn.h"));
	long_nqn.pop_back();
	EXPECT_EQ(0, wnh_connect_data(&d, id, 1, long_nqn.c_str(), "nqn.h"));
}

// The CM private data the host sends is what the target accepts.
TEST(NvmfHostCmd, CmRequestAcceptedByTheTargetParser)
{
	struct nvme_rdma_cm_req req;
	struct nvme_rdma_limits lim = {};
	struct nvme_rdma_accept acc;
	uint16_t sts = 0;

	lim.max_qid = 8;
	lim.admin_depth = 32;
	lim.io_depth = 128;
	lim.dev_max_init_rd_atom = 16;
	lim.dev_max_rd_atom = 16;
	ASSERT_EQ(0, nvme_rdma_req_build(2, 128, 1, &req));
	ASSERT_EQ(0, nvme_rdma_req_parse(&lim, &req, sizeof(req), 16, 0, &acc,
					 &sts));
	EXPECT_EQ(2, acc.qid);
	EXPECT_EQ(128, acc.sq_entries);
}

TEST(NvmfHostCmd, Properties)
{
	union nvme_cmd c;

	wnh_cmd_prop_get(&c, NVME_PROP_CAP, 1);
	EXPECT_EQ(NVME_FCTYPE_PROP_GET, c.prop.fctype);
	EXPECT_EQ(NVME_PROP_SIZE_8, c.prop.attrib);
	EXPECT_EQ(0u, c.prop.ofst);
	wnh_cmd_prop_get(&c, NVME_PROP_CSTS, 0);
	EXPECT_EQ(NVME_PROP_SIZE_4, c.prop.attrib);
	EXPECT_EQ((uint32_t)NVME_PROP_CSTS, c.prop.ofst);
	wnh_cmd_prop_set(&c, NVME_PROP_CC, 0x460001);
	EXPECT_EQ(NVME_FCTYPE_PROP_SET, c.prop.fctype);
	EXPECT_EQ((uint32_t)NVME_PROP_CC, c.prop.ofst);
	EXPECT_EQ(0x460001u, c.prop.value);
}

TEST(NvmfHostCmd, AdminCommands)
{
	union nvme_cmd c;

	wnh_cmd_identify(&c, NVME_CNS_NS, 9);
	EXPECT_EQ(NVME_ADM_IDENTIFY, c.common.opc);
	EXPECT_EQ(9u, c.common.nsid);
	EXPECT_EQ((uint32_t)NVME_CNS_NS, c.common.cdw10);
	wnh_cmd_set_nqueues(&c, 4);
	EXPECT_EQ(NVME_ADM_SET_FEATURES, c.common.opc);
	EXPECT_EQ((uint32_t)NVME_FEAT_NUM_QUEUES, c.common.cdw10);
	EXPECT_EQ(0x00030003u, c.common.cdw11) << "0's based, SQs and CQs";
	wnh_cmd_keep_alive(&c);
	EXPECT_EQ(NVME_ADM_KEEP_ALIVE, c.common.opc);
	EXPECT_EQ(NVME_FLAGS_PSDT_SGL, c.common.flags);
}

TEST(NvmfHostCmd, ReadWriteFlush)
{
	union nvme_cmd c;

	wnh_cmd_rw(&c, NVME_IO_READ, 1, 0x123456789ull, 8);
	EXPECT_EQ(NVME_IO_READ, c.common.opc);
	EXPECT_EQ(1u, c.common.nsid);
	EXPECT_EQ(0x23456789u, c.common.cdw10);
	EXPECT_EQ(0x1u, c.common.cdw11);
	EXPECT_EQ(7u, c.common.cdw12) << "NLB is 0's based";
	wnh_cmd_flush(&c, 2);
	EXPECT_EQ(NVME_IO_FLUSH, c.common.opc);
	EXPECT_EQ(2u, c.common.nsid);
}

TEST(NvmfHostCmd, WriteZeroes)
{
	union nvme_cmd c;

	wnh_cmd_write_zeroes(&c, 3, 0x100000002ull, 65536, 0);
	EXPECT_EQ(NVME_IO_WRITE_ZEROES, c.common.opc);
	EXPECT_EQ(NVME_FLAGS_PSDT_SGL, c.common.flags);
	EXPECT_EQ(3u, c.common.nsid);
	EXPECT_EQ(2u, c.common.cdw10);
	EXPECT_EQ(1u, c.common.cdw11);
	EXPECT_EQ(0xFFFFu, c.common.cdw12) << "65536 blocks, 0's based";
	wnh_cmd_write_zeroes(&c, 3, 0, 1, 1);
	EXPECT_EQ(NVME_RW_DEAC, c.common.cdw12) << "DEAC, NLB 0";
}

TEST(NvmfHostCmd, DsmDeallocate)
{
	union nvme_cmd c;
	struct nvme_dsm_range r;
	uint8_t raw[16];

	wnh_cmd_dsm_deallocate(&c, 1, 256);
	EXPECT_EQ(NVME_IO_DSM, c.common.opc);
	EXPECT_EQ(1u, c.common.nsid);
	EXPECT_EQ(255u, c.common.cdw10) << "NR is 0's based";
	EXPECT_EQ(NVME_DSM_AD, c.common.cdw11);
	wnh_cmd_dsm_deallocate(&c, 1, 1);
	EXPECT_EQ(0u, c.common.cdw10);

	// The range on the wire: context attributes, NLB (not 0's based),
	// SLBA, little-endian.
	wnh_dsm_range(&r, 0x0102030405060708ull, 0x11223344u);
	memcpy(raw, &r, sizeof(raw));
	const uint8_t want[16] = {0,	0,    0,    0,	  0x44, 0x33,
				  0x22, 0x11, 0x08, 0x07, 0x06, 0x05,
				  0x04, 0x03, 0x02, 0x01};
	EXPECT_EQ(0, memcmp(want, raw, sizeof(raw)));
}

TEST(NvmfHostCmd, LbaRangeAndDlfeat)
{
	EXPECT_TRUE(wnh_lba_range_ok(0, 1, 1));
	EXPECT_TRUE(wnh_lba_range_ok(0, 100, 100));
	EXPECT_TRUE(wnh_lba_range_ok(99, 1, 100));
	EXPECT_FALSE(wnh_lba_range_ok(99, 2, 100));
	EXPECT_FALSE(wnh_lba_range_ok(100, 1, 100));
	EXPECT_FALSE(wnh_lba_range_ok(0, 0, 100)) << "0 blocks";
	EXPECT_FALSE(wnh_lba_range_ok(1, UINT64_MAX, 100)) << "no overflow";
	EXPECT_FALSE(wnh_lba_range_ok(UINT64_MAX, 2, UINT64_MAX));

	EXPECT_TRUE(wnh_dlfeat_reads_zero(NVME_DLFEAT_READ_0));
	EXPECT_TRUE(wnh_dlfeat_reads_zero(NVME_DLFEAT_READ_0 |
					  NVME_DLFEAT_WZ_DEAC));
	EXPECT_FALSE(wnh_dlfeat_reads_zero(0)) << "not reported";
	EXPECT_FALSE(wnh_dlfeat_reads_zero(0x2)) << "reads as all ones";
	EXPECT_FALSE(wnh_dlfeat_reads_zero(NVME_DLFEAT_WZ_DEAC));
}

TEST(NvmfHostCmd, Sgls)
{
	struct nvme_sgl s;

	wnh_sgl_keyed(&s, 0x1000, 0x123456, 0xabcdef01u);
	EXPECT_EQ(0x1000u, s.addr);
	EXPECT_EQ(0x123456u, KeyedLen(s));
	EXPECT_EQ(0xabcdef01u, s.keyed.key);
	EXPECT_EQ(NVME_SGL_TYPE_KEYED_DATA << 4 | NVME_SGL_SUB_ADDRESS,
		  s.keyed.type)
		<< "subtype 0: the host's MRs cannot be remotely invalidated";
	wnh_sgl_in_capsule(&s, 4096);
	EXPECT_EQ(0u, s.addr);
	EXPECT_EQ(4096u, s.unkeyed.len);
	EXPECT_EQ(NVME_SGL_TYPE_DATA_BLOCK << 4 | NVME_SGL_SUB_OFFSET,
		  s.unkeyed.type);
}

TEST(NvmfHostCmd, InCapsuleAndTransferLimits)
{
	struct nvme_id_ctrl id;

	memset(&id, 0, sizeof(id));
	id.ioccsz = (64 + 4096) / 16;
	id.sgls = NVME_SGLS_SUPPORTED | NVME_SGLS_KEYED | NVME_SGLS_OFFSET;
	EXPECT_EQ(4096u, wnh_in_capsule_max(&id, 1u << 20));
	EXPECT_EQ(1024u, wnh_in_capsule_max(&id, 1024));
	id.icdoff = 1;
	EXPECT_EQ(0u, wnh_in_capsule_max(&id, 1u << 20)) << "ICDOFF != 0";
	id.icdoff = 0;
	id.sgls &= ~NVME_SGLS_OFFSET;
	EXPECT_EQ(0u, wnh_in_capsule_max(&id, 1u << 20)) << "no offset SGLs";
	id.sgls |= NVME_SGLS_OFFSET;
	id.ioccsz = 4;
	EXPECT_EQ(0u, wnh_in_capsule_max(&id, 1u << 20)) << "command only";

	EXPECT_EQ(1u << 20, wnh_max_xfer(8, 4u << 20)) << "MDTS 8: 1 MiB";
	EXPECT_EQ(131072u, wnh_max_xfer(8, 131072));
	EXPECT_EQ(4u << 20, wnh_max_xfer(0, 4u << 20)) << "MDTS 0: no limit";
	EXPECT_EQ(8192u, wnh_max_xfer(1, 1u << 20));
}

TEST(NvmfHostCmd, ResponseParse)
{
	struct nvme_cqe cqe;
	struct wnh_rsp r;
	uint8_t buf[64] = {};

	memset(&cqe, 0, sizeof(cqe));
	cqe.result = 0x1122334455667788ull;
	cqe.sqhd = 9;
	cqe.cid = 5;
	cqe.status = (uint16_t)(NVME_DNR | NVME_STATUS(NVME_SCT_CMD, 0x82))
		     << 1;
	memcpy(buf, &cqe, sizeof(cqe));
	ASSERT_EQ(0, wnh_rsp_parse(buf, 16, 8, &r));
	EXPECT_EQ(5, r.cid);
	EXPECT_EQ(9, r.sqhd);
	EXPECT_EQ(0x1122334455667788ull, r.result);
	EXPECT_EQ(NVME_DNR | NVME_STATUS(NVME_SCT_CMD, 0x82), r.status);
	EXPECT_EQ(0, wnh_rsp_parse(buf, sizeof(buf), 8, &r))
		<< "a longer capsule is read as its completion";
	EXPECT_EQ(-EMSGSIZE, wnh_rsp_parse(buf, 15, 8, &r));
	EXPECT_EQ(-EMSGSIZE, wnh_rsp_parse(buf, 0, 8, &r));
	EXPECT_EQ(-EMSGSIZE, wnh_rsp_parse(nullptr, 16, 8, &r));
	EXPECT_EQ(-ERANGE, wnh_rsp_parse(buf, 16, 5, &r)) << "cid 5, depth 5";
}

// Get Log Page: LID, 0's based NUMDL/NUMDU (cdw10 31:16, cdw11 15:0),
// the byte offset in LPOL/LPOU, no namespace.
TEST(NvmfHostCmd, GetLogPage)
{
	union nvme_cmd c;

	wnh_cmd_get_log_page(&c, NVME_LID_DISCOVERY, 0x100001000ull, 4096);
	EXPECT_EQ(NVME_ADM_GET_LOG_PAGE, c.common.opc);
	EXPECT_EQ(NVME_FLAGS_PSDT_SGL, c.common.flags);
	EXPECT_EQ(0u, c.common.nsid);
	EXPECT_EQ(0x70u | 1023u << 16, c.common.cdw10);
	EXPECT_EQ(0u, c.common.cdw11);
	EXPECT_EQ(0x1000u, c.common.cdw12);
	EXPECT_EQ(1u, c.common.cdw13);
	wnh_cmd_get_log_page(&c, NVME_LID_DISCOVERY, 0, 1u << 20);
	EXPECT_EQ(0x70u | 0xFFFFu << 16, c.common.cdw10);
	EXPECT_EQ(3u, c.common.cdw11); // (2^18 - 1) >> 16
}

TEST(NvmfHostCmd, DiscoveryHeader)
{
	uint8_t buf[1024] = {};
	struct nvme_disc_hdr h = {};
	uint64_t g = 0, n = 0;

	h.genctr = 7;
	h.numrec = 5;
	memcpy(buf, &h, sizeof(h));
	EXPECT_EQ(-EMSGSIZE, wnh_disc_hdr_parse(buf, 1023, &g, &n, 100));
	ASSERT_EQ(0, wnh_disc_hdr_parse(buf, sizeof(buf), &g, &n, 100));
	EXPECT_EQ(7u, g);
	EXPECT_EQ(5u, n);
	// A peer announcing more records than the host takes is clamped.
	ASSERT_EQ(0, wnh_disc_hdr_parse(buf, sizeof(buf), &g, &n, 3));
	EXPECT_EQ(3u, n);
	h.recfmt = 1;
	memcpy(buf, &h, sizeof(h));
	EXPECT_EQ(-EPROTO, wnh_disc_hdr_parse(buf, sizeof(buf), &g, &n, 100));
}

TEST(NvmfHostCmd, DiscoveryEntry)
{
	struct nvme_disc_entry e;
	struct wharf_nvmf_host_disc_entry d;

	memset(&e, 0, sizeof(e));
	e.trtype = NVME_TRTYPE_RDMA;
	e.adrfam = NVME_ADRFAM_IPV4;
	e.subtype = NVME_SUBTYPE_NVME;
	e.treq = 2;
	e.portid = 3;
	e.cntlid = 0xFFFF;
	e.asqsz = 32;
	memset(e.trsvcid, ' ', sizeof(e.trsvcid));
	memcpy(e.trsvcid, "4420", 4);
	strcpy(e.subnqn, "nqn.2024-01.io.wharf:x");
	memset(e.traddr, ' ', sizeof(e.traddr));
	memcpy(e.traddr, "198.18.0.1", 10);
	e.tsas.qptype = 1;
	e.tsas.prtype = 4;
	e.tsas.cms = 1;
	e.tsas.pkey = 0xFFFF;
	EXPECT_EQ(-EMSGSIZE, wnh_disc_entry_parse(&e, sizeof(e) - 1, &d));
	ASSERT_EQ(0, wnh_disc_entry_parse(&e, sizeof(e), &d));
	EXPECT_EQ(sizeof(d), d.size);
	EXPECT_EQ(1, d.trtype);
	EXPECT_EQ(1, d.adrfam);
	EXPECT_EQ(2, d.subtype);
	EXPECT_EQ(2, d.treq);
	EXPECT_EQ(3, d.portid);
	EXPECT_EQ(0xFFFF, d.cntlid);
	EXPECT_EQ(32, d.asqsz);
	EXPECT_STREQ("4420", d.trsvcid);
	EXPECT_STREQ("nqn.2024-01.io.wharf:x", d.subnqn);
	EXPECT_STREQ("198.18.0.1", d.traddr);
	EXPECT_EQ(1, d.rdma_qptype);
	EXPECT_EQ(4, d.rdma_prtype);
	EXPECT_EQ(1, d.rdma_cms);
	EXPECT_EQ(0xFFFF, d.rdma_pkey);
	// Full-width fields without a NUL stay bounded; TSAS only for RDMA.
	memset(e.subnqn, 'a', sizeof(e.subnqn));
	memset(e.traddr, 'b', sizeof(e.traddr));
	memset(e.trsvcid, 'c', sizeof(e.trsvcid));
	e.trtype = 3; // TCP
	ASSERT_EQ(0, wnh_disc_entry_parse(&e, sizeof(e), &d));
	EXPECT_EQ(256u, strlen(d.subnqn));
	EXPECT_EQ(256u, strlen(d.traddr));
	EXPECT_EQ(32u, strlen(d.trsvcid));
	EXPECT_EQ(0, d.rdma_qptype);
	EXPECT_EQ(0, d.rdma_pkey);
}

TEST(NvmfHostCmd, StatusText)
{
	char s[96];

	wnh_status_str(NVME_DNR | NVME_STATUS(NVME_SCT_CMD, 0x82), s,
		       sizeof(s));
	EXPECT_STREQ("SCT 1 SC 0x82 (connect invalid parameters) DNR", s);
	wnh_status_str(NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_LBA_RANGE), s,
		       sizeof(s));
	EXPECT_STREQ("SCT 0 SC 0x80 (LBA out of range)", s);
	wnh_status_str(NVME_STATUS(5, 0x33), s, 8);
	EXPECT_EQ(7u, strlen(s)) << "cut at the buffer";
}

} // namespace
