// The NVMe-oF host's pure decisions around asynchronous events, retries
// and the NVM size limits: AER completion decoding and re-arming
// (nvmf_host/aen.h), a user command's disposition at a loss
// (retry.h), Identify CNS 06h limits and the Write Zeroes / Dataset
// Management checks (limits.h), and the new command capsules (cmd.h).
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <gtest/gtest.h>

#include "nvmf_host/aen.h"
#include "nvmf_host/cmd.h"
#include "nvmf_host/limits.h"
#include "nvmf_host/retry.h"

namespace
{

TEST(NvmfHostAen, CountIsAerlPlusOneCappedAtFour)
{
	EXPECT_EQ(1u, wnh_aer_count(0));
	EXPECT_EQ(2u, wnh_aer_count(1));
	EXPECT_EQ(4u, wnh_aer_count(3));
	EXPECT_EQ(4u, wnh_aer_count(4));
	EXPECT_EQ(4u, wnh_aer_count(255));
}

TEST(NvmfHostAen, EnablesOnlyAdvertisedNoticesItHandles)
{
	EXPECT_EQ(0u, wnh_aec_value(0));
	EXPECT_EQ(NVME_OAES_NS_ATTR, wnh_aec_value(NVME_OAES_NS_ATTR));
	// Firmware activation (bit 9) too; ANA (11) and discovery log
	// change (31) are not handled here, SMART bits are not OAES.
	EXPECT_EQ(NVME_OAES_NS_ATTR | (1u << 9), wnh_aec_value(0xFFFFFFFFu));
	EXPECT_EQ(0u, wnh_aec_value((1u << 11) | (1u << 31)));
}

TEST(NvmfHostAen, DecodesDw0)
{
	struct wnh_aen a;

	wnh_aen_decode(NVME_AER_DW0(NVME_AER_TYPE_NOTICE,
				    NVME_AER_INFO_NS_CHANGED,
				    NVME_LID_CHANGED_NS),
		       &a);
	EXPECT_EQ(NVME_AER_TYPE_NOTICE, a.type);
	EXPECT_EQ(NVME_AER_INFO_NS_CHANGED, a.info);
	EXPECT_EQ(NVME_LID_CHANGED_NS, a.lid);

	// Reserved bits 7:3 and 31:24 are ignored.
	wnh_aen_decode(0xAB02F8F9u, &a);
	EXPECT_EQ(1u, a.type);
	EXPECT_EQ(0xF8u, a.info);
	EXPECT_EQ(0x02u, a.lid);
}

TEST(NvmfHostAen, LogLengths)
{
	EXPECT_EQ(64u, wnh_aen_log_len(NVME_LID_ERROR));
	EXPECT_EQ(512u, wnh_aen_log_len(NVME_LID_SMART));
	EXPECT_EQ(512u, wnh_aen_log_len(0x03));
	EXPECT_EQ(4096u, wnh_aen_log_len(NVME_LID_CHANGED_NS));
	EXPECT_EQ(0u, wnh_aen_log_len(0));
	EXPECT_EQ(0u, wnh_aen_log_len(0x0C));
	EXPECT_EQ(0u, wnh_aen_log_len(NVME_LID_DISCOVERY));
}

TEST(NvmfHostAen, ErrorStatusNeverRearms)
{
	struct wnh_aen ns = {NVME_AER_TYPE_NOTICE, 0, NVME_LID_CHANGED_NS};
	struct wnh_aen smart = {NVME_AER_TYPE_SMART, 1, NVME_LID_SMART};
	struct wnh_aen err = {NVME_AER_TYPE_ERROR, 0x01, NVME_LID_ERROR};
	struct wnh_aen persist = {NVME_AER_TYPE_ERROR,
				  WNH_AER_INFO_PERSIST_INT_ERR, NVME_LID_ERROR};

	EXPECT_EQ(WNH_AER_REARM, wnh_aer_after(0, &ns));
	EXPECT_EQ(WNH_AER_REARM, wnh_aer_after(0, &smart));
	EXPECT_EQ(WNH_AER_REARM, wnh_aer_after(0, &err));
	EXPECT_EQ(WNH_AER_RESET, wnh_aer_after(0, &persist));
	// Asynchronous Event Request Limit Exceeded, Abort, any NVMe error;
	// an abort at a loss or a disconnect: never again (no loop).
	for (int st : {-EIO, -ECONNABORTED, -ETIMEDOUT, -ENOTCONN})
		EXPECT_EQ(WNH_AER_STOP, wnh_aer_after(st, &ns)) << st;
}

TEST(NvmfHostAen, ChangedNsCount)
{
	uint32_t log[NVME_CHANGED_NS_MAX] = {0};

	EXPECT_EQ(0, wnh_changed_ns_count(log, sizeof(log)));
	log[0] = 2;
	log[1] = 7;
	EXPECT_EQ(2, wnh_changed_ns_count(log, sizeof(log)));
	EXPECT_EQ(1, wnh_changed_ns_count(log, 4));
	EXPECT_EQ(0, wnh_changed_ns_count(log, 3));
	for (unsigned i = 0; i < NVME_CHANGED_NS_MAX; i++)
		log[i] = i + 1;
	EXPECT_EQ(NVME_CHANGED_NS_MAX, wnh_changed_ns_count(log, sizeof(log)));
	log[0] = NVME_CHANGED_NS_OVERFLOW;
	EXPECT_EQ(-1, wnh_changed_ns_count(log, sizeof(log)));
}

TEST(NvmfHostAen, Capsules)
{
	union nvme_cmd c;

	wnh_cmd_aer(&c);
	EXPECT_EQ(NVME_ADM_ASYNC_EVENT, c.common.opc);
	EXPECT_EQ(0u, c.common.cdw10);

	wnh_cmd_set_aec(&c, NVME_OAES_NS_ATTR);
	EXPECT_EQ(NVME_ADM_SET_FEATURES, c.common.opc);
	EXPECT_EQ((uint32_t)NVME_FEAT_ASYNC_EVENT, c.common.cdw10);
	EXPECT_EQ(NVME_OAES_NS_ATTR, c.common.cdw11);

	wnh_cmd_identify_csi(&c, NVME_CNS_CS_CTRL, NVME_CSI_NVM);
	EXPECT_EQ(NVME_ADM_IDENTIFY, c.common.opc);
	EXPECT_EQ((uint32_t)NVME_CNS_CS_CTRL, c.common.cdw10);
	EXPECT_EQ(0u, c.common.cdw11);
	EXPECT_EQ(0u, c.common.nsid);
	wnh_cmd_identify_csi(&c, NVME_CNS_CS_CTRL, 2);
	EXPECT_EQ(2u << 24, c.common.cdw11);

	// The changed-namespace log is read with RAE clear (re-arms it).
	wnh_cmd_get_log_page(&c, NVME_LID_CHANGED_NS, 0,
			     NVME_CHANGED_NS_LOG_SIZE);
	EXPECT_EQ(0u, c.common.cdw10 & NVME_GLP_RAE);
	EXPECT_EQ((uint32_t)NVME_LID_CHANGED_NS, c.common.cdw10 & 0xFF);
	EXPECT_EQ(1023u, c.common.cdw10 >> 16);
}

// ---- Disposition of a user command at a loss ----------------------

constexpr uint16_t kDnr = 0x4000;
constexpr uint16_t kLbaRange = 0x80; // SCT 0 SC 80h

TEST(NvmfHostRetry, AnsweredIsNeverResent)
{
	for (unsigned tries : {1u, 2u, 5u, 6u, 9u}) {
		EXPECT_EQ(WNH_DISP_SUCCESS, wnh_disposition(true, 0, tries, 6));
		// DNR set or not: an NVMe error completes, is not resent
		// (the kernel's passthrough rule; see the design doc).
		EXPECT_EQ(WNH_DISP_NVME_ERROR,
			  wnh_disposition(true, kLbaRange | kDnr, tries, 6));
		EXPECT_EQ(WNH_DISP_NVME_ERROR,
			  wnh_disposition(true, kLbaRange, tries, 6));
		EXPECT_EQ(WNH_DISP_NVME_ERROR,
			  wnh_disposition(true, 0x302, tries, 6));
	}
	// DNR alone, SC 0: success.
	EXPECT_EQ(WNH_DISP_SUCCESS, wnh_disposition(true, kDnr, 1, 6));
}

TEST(NvmfHostRetry, LostIsResentUpToTheLimit)
{
	for (unsigned tries = 0; tries < 6; tries++)
		EXPECT_EQ(WNH_DISP_RESEND, wnh_disposition(false, 0, tries, 6));
	EXPECT_EQ(WNH_DISP_GIVE_UP, wnh_disposition(false, 0, 6, 6));
	EXPECT_EQ(WNH_DISP_GIVE_UP, wnh_disposition(false, 0, 7, 6));
	// A stale status of an earlier try means nothing without an answer.
	EXPECT_EQ(WNH_DISP_RESEND, wnh_disposition(false, kDnr | 1, 1, 6));
}

// ---- NVM command set limits ----------------------------------------

TEST(NvmfHostLimits, ParsesCnsSix)
{
	struct nvme_id_ctrl_nvm id;
	struct wharf_nvmf_host_info in;

	memset(&id, 0, sizeof(id));
	memset(&in, 0xFF, sizeof(in));
	id.wzsl = 3;
	id.dmrl = 16;
	id.dmrsl = 4096;
	id.dmsl = 1u << 20;
	wnh_nvm_limits(&id, &in);
	EXPECT_EQ(3u, in.wzsl);
	EXPECT_EQ(16u, in.dmrl);
	EXPECT_EQ(4096u, in.dmrsl);
	EXPECT_EQ(1u << 20, in.dmsl);
	wnh_nvm_limits(nullptr, &in); // Invalid Field: no limits
	EXPECT_EQ(0u, in.wzsl);
	EXPECT_EQ(0u, in.dmrl);
	EXPECT_EQ(0u, in.dmrsl);
	EXPECT_EQ(0u, in.dmsl);
}

TEST(NvmfHostLimits, WriteZeroesMaxBlocks)
{
	const uint64_t mpsmin1 = 1ull << 48; // CAP.MPSMIN 1: 8 KiB pages

	EXPECT_EQ(WHARF_NVMF_HOST_WZ_MAX_BLOCKS, wnh_wz_max_blocks(0, 0, 512));
	// 2^3 pages of 4 KiB = 32 KiB = 64 blocks of 512, 8 of 4 KiB.
	EXPECT_EQ(64u, wnh_wz_max_blocks(3, 0, 512));
	EXPECT_EQ(8u, wnh_wz_max_blocks(3, 0, 4096));
	EXPECT_EQ(16u, wnh_wz_max_blocks(3, mpsmin1, 4096));
	// 2^1 pages of 4 KiB = 8 KiB < one 64 KiB block: still 1.
	EXPECT_EQ(1u, wnh_wz_max_blocks(1, 0, 65536));
	// Above the 16-bit NLB: the command's own limit.
	EXPECT_EQ(WHARF_NVMF_HOST_WZ_MAX_BLOCKS, wnh_wz_max_blocks(20, 0, 512));
	EXPECT_EQ(WHARF_NVMF_HOST_WZ_MAX_BLOCKS,
		  wnh_wz_max_blocks(255, 0, 512));
}

TEST(NvmfHostLimits, DsmLimits)
{
	struct wharf_nvmf_host_info in;
	struct wharf_nvmf_host_range r[3] = {{0, 100}, {1000, 200}, {5000, 8}};

	memset(&in, 0, sizeof(in));
	EXPECT_EQ(0, wnh_dsm_check_limits(&in, r, 3)); // no limits
	in.dmrl = 2;
	EXPECT_EQ(-EINVAL, wnh_dsm_check_limits(&in, r, 3));
	EXPECT_EQ(0, wnh_dsm_check_limits(&in, r, 2));
	in.dmrl = 0;
	in.dmrsl = 150;
	EXPECT_EQ(-EINVAL, wnh_dsm_check_limits(&in, r, 3));
	in.dmrsl = 200;
	EXPECT_EQ(0, wnh_dsm_check_limits(&in, r, 3));
	in.dmsl = 307;
	EXPECT_EQ(-EINVAL, wnh_dsm_check_limits(&in, r, 3));
	in.dmsl = 308;
	EXPECT_EQ(0, wnh_dsm_check_limits(&in, r, 3));
}

} // namespace

TEST(NvmfHostLimits, ReconnectRefusesTighterLimits)
{
	struct wharf_nvmf_host_info was {
	}, now{};

	was.oncs = now.oncs = NVME_ONCS_WRITE_ZEROES | NVME_ONCS_DSM;
	EXPECT_EQ(nullptr, wnh_limits_tighter(&was, &now)); // no limits
	now.oncs = NVME_ONCS_DSM;			    // Write Zeroes gone
	EXPECT_NE(nullptr, wnh_limits_tighter(&was, &now));
	now.oncs = was.oncs;
	now.wzsl = 3; // a limit where there was none
	EXPECT_NE(nullptr, wnh_limits_tighter(&was, &now));
	was.wzsl = 3;
	EXPECT_EQ(nullptr, wnh_limits_tighter(&was, &now));
	now.wzsl = 0; // looser: no limit at all
	EXPECT_EQ(nullptr, wnh_limits_tighter(&was, &now));
	was.dmrsl = 1024;
	now.dmrsl = 512;
	EXPECT_NE(nullptr, wnh_limits_tighter(&was, &now));
	now.dmrsl = 2048;
	now.dmsl = 1;
	EXPECT_NE(nullptr, wnh_limits_tighter(&was, &now));
	now.dmsl = 0;
	now.dmrl = 2;
	EXPECT_NE(nullptr, wnh_limits_tighter(&was, &now));
	now.dmrl = 0;
	now.oncs |= 1u << 4; // a new optional command is not tighter
	EXPECT_EQ(nullptr, wnh_limits_tighter(&was, &now));
}
