// Unit tests for targets/nvmf/props and kato: CAP / VS / CC / CSTS and the
// CC write state machine (enable, bad configuration, reset, shutdown), and
// keep-alive arithmetic as a pure function of time.
#include <errno.h>
#include <stdint.h>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/kato.h"
#include "targets/nvmf/props.h"
#include "proto/nvme/spec_data.h"
}

namespace
{

const uint32_t kGoodCc = NVME_CC_EN | 6u << 16 | 4u << 20;

TEST(NvmfProps, Cap)
{
	uint64_t cap = nvmf_cap(128);
	EXPECT_EQ(127u, cap & 0xFFFF);	   // MQES, 0's based
	EXPECT_TRUE(cap & (1ull << 16));   // CQR
	EXPECT_EQ(1u, (cap >> 24) & 0xFF); // TO
	EXPECT_TRUE(cap & (1ull << 37));   // CSS: NVM
	EXPECT_EQ(0u, (cap >> 48) & 0xFF); // MPSMIN / MPSMAX 4 KiB
	EXPECT_EQ(0u, (cap >> 32) & 0xF);  // DSTRD
	EXPECT_FALSE(cap & (1ull << 36));  // NSSRS
	EXPECT_EQ(0xFFFFu, nvmf_cap(65536) & 0xFFFF);
	EXPECT_EQ(0u, nvmf_cap(1));
	EXPECT_EQ(0u, nvmf_cap(65537));
}

TEST(NvmfProps, GetSizesAndOffsets)
{
	nvmf_regs r = {0x00460001, 0x1};
	uint64_t v = 0;
	EXPECT_EQ(0, nvmf_prop_get(&r, 0xABCD, NVME_PROP_CAP, true, &v));
	EXPECT_EQ(0xABCDu, v);
	EXPECT_EQ(0, nvmf_prop_get(&r, 0, NVME_PROP_VS, false, &v));
	EXPECT_EQ(0x00010300u, v);
	EXPECT_EQ(0, nvmf_prop_get(&r, 0, NVME_PROP_CC, false, &v));
	EXPECT_EQ(0x00460001u, v);
	EXPECT_EQ(0, nvmf_prop_get(&r, 0, NVME_PROP_CSTS, false, &v));
	EXPECT_EQ(1u, v);
	// Wrong size for the property, reserved or unsupported offsets.
	EXPECT_EQ(-EINVAL, nvmf_prop_get(&r, 0, NVME_PROP_CAP, false, &v));
	EXPECT_EQ(-EINVAL, nvmf_prop_get(&r, 0, NVME_PROP_VS, true, &v));
	EXPECT_EQ(-EINVAL, nvmf_prop_get(&r, 0, 0x0C, false, &v)); // INTMS
	EXPECT_EQ(-EINVAL, nvmf_prop_get(&r, 0, 0x10, false, &v)); // INTMC
	EXPECT_EQ(-EINVAL, nvmf_prop_get(&r, 0, NVME_PROP_NSSR, false, &v));
	EXPECT_EQ(-EINVAL, nvmf_prop_get(&r, 0, 0x15, false, &v));
}

TEST(NvmfProps, EnableSetsReady)
{
	nvmf_regs r = {0, 0};
	nvmf_cc_effect e;
	nvmf_cc_write(&r, kGoodCc, &e);
	EXPECT_TRUE(e.enabled);
	EXPECT_FALSE(e.reset || e.failed);
	EXPECT_EQ(NVME_CSTS_RDY, r.csts);
	EXPECT_EQ(kGoodCc, r.cc);
	nvmf_cc_write(&r, kGoodCc, &e); // EN stays 1: nothing happens
	EXPECT_FALSE(e.enabled || e.reset || e.failed);
	EXPECT_EQ(NVME_CSTS_RDY, r.csts);
}

TEST(NvmfProps, BadConfigurationSetsCfs)
{
	const uint32_t bad[] = {
		NVME_CC_EN | 4u << 20, // IOSQES 0
		NVME_CC_EN | 6u << 16, // IOCQES 0
		kGoodCc | 1u << 7,     // MPS 8 KiB
		kGoodCc | 1u << 11,    // AMS WRR
		kGoodCc | 7u << 4,     // CSS
	};
	for (uint32_t cc : bad) {
		nvmf_regs r = {0, 0};
		nvmf_cc_effect e;
		nvmf_cc_write(&r, cc, &e);
		EXPECT_TRUE(e.failed) << std::hex << cc;
		EXPECT_FALSE(e.enabled);
		EXPECT_EQ(NVME_CSTS_CFS, r.csts);
		// Clearing EN resets and clears CFS.
		nvmf_cc_write(&r, 0, &e);
		EXPECT_TRUE(e.reset);
		EXPECT_EQ(0u, r.csts);
	}
}

TEST(NvmfProps, ResetAndShutdown)
{
	nvmf_regs r = {0, 0};
	nvmf_cc_effect e;
	nvmf_cc_write(&r, kGoodCc, &e);
	nvmf_cc_write(&r, kGoodCc | 1u << 14, &e); // SHN normal
	EXPECT_EQ(NVME_CSTS_RDY | NVME_CSTS_SHST_CMPLT, r.csts);
	nvmf_cc_write(&r, kGoodCc | 2u << 14, &e); // SHN abrupt
	EXPECT_EQ(NVME_CSTS_RDY | NVME_CSTS_SHST_CMPLT, r.csts);
	nvmf_cc_write(&r, kGoodCc, &e); // SHN cleared
	EXPECT_EQ(NVME_CSTS_RDY, r.csts);
	nvmf_cc_write(&r, 6u << 16 | 4u << 20, &e); // EN 1 -> 0
	EXPECT_TRUE(e.reset);
	EXPECT_EQ(0u, r.csts);
	nvmf_cc_write(&r, kGoodCc, &e); // and back
	EXPECT_TRUE(e.enabled);
	nvmf_cc_write(&r, 0xFFFFFFFF, &e); // reserved bits are dropped
	EXPECT_EQ(0x00FFFFF1u, r.cc);
}

TEST(NvmfKato, RoundToGranularity)
{
	EXPECT_EQ(1000u, (unsigned)NVMF_KATO_GRAIN_MS);
	EXPECT_EQ(0u, nvmf_kato_round(0));
	EXPECT_EQ(1000u, nvmf_kato_round(1));
	EXPECT_EQ(1000u, nvmf_kato_round(1000));
	EXPECT_EQ(2000u, nvmf_kato_round(1001));
	EXPECT_EQ(15000u, nvmf_kato_round(15000));
	EXPECT_EQ(4294967000u, nvmf_kato_round(UINT32_MAX));
}

TEST(NvmfKato, ExpiryIsAPureFunctionOfTime)
{
	EXPECT_FALSE(nvmf_kato_expired(100, 0, UINT64_MAX)); // disabled
	// Twice KATO: a Keep Alive whose round trip took long still counts.
	EXPECT_FALSE(nvmf_kato_expired(100, 5000, 10099));
	EXPECT_TRUE(nvmf_kato_expired(100, 5000, 10100));
	EXPECT_TRUE(nvmf_kato_expired(100, 5000, 99999));
	EXPECT_FALSE(nvmf_kato_expired(100, 5000, 50)); // clock behind
	EXPECT_EQ(10100u, nvmf_kato_deadline(100, 5000));
	EXPECT_EQ(UINT64_MAX, nvmf_kato_deadline(100, 0));
	EXPECT_EQ(UINT64_MAX, nvmf_kato_deadline(UINT64_MAX - 10, 5000));
	EXPECT_TRUE(nvmf_kato_expired(UINT64_MAX - 10, 5, UINT64_MAX));
}

} // namespace
