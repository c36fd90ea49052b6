// Runs the nvmf fuzz target in the normal suite (gcc, no libFuzzer): the
// checked-in seed corpus, mutations of it, and generated inputs made of
// random but well-formed records (so the command paths are reached, not
// only the capsule checks). The target aborts on any violated rule.
#include <string.h>

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fuzz/replay_util.h"

namespace
{

const char kCorpus[] = "tests/fuzz/corpus/nvmf_fuzz";

std::vector<std::vector<uint8_t>> LoadCorpus()
{
	return fuzz_replay::LoadCorpus(kCorpus, 1 << 16);
}

TEST(NvmfFuzzReplay, SeedCorpus)
{
	auto corpus = LoadCorpus();
	ASSERT_GE(corpus.size(), 8u) << "corpus missing from runfiles";
	for (auto &in : corpus)
		LLVMFuzzerTestOneInput(in.data(), in.size());
}

TEST(NvmfFuzzReplay, MutatedCorpus)
{
	auto corpus = LoadCorpus();
	ASSERT_FALSE(corpus.empty());
	std::mt19937 rng(4343);
	for (int i = 0; i < 1500; i++) {
		std::vector<uint8_t> in = corpus[rng() % corpus.size()];
		fuzz_replay::Mutate(rng, &in, 6, 128);
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

// A 64-byte command with plausible fields: a known opcode most of the
// time, PSDT = SGL, an SGL of a random kind.
std::vector<uint8_t> RandomSqe(std::mt19937 &rng, bool io)
{
	static const uint8_t admin_ops[] = {0x02, 0x06, 0x08, 0x09, 0x0A,
					    0x0C, 0x18, 0x7F, 0x01, 0x80};
	static const uint8_t io_ops[] = {0x00, 0x01, 0x02, 0x08,
					 0x09, 0x7F, 0x05};
	std::vector<uint8_t> s(64);
	for (auto &b : s)
		b = (uint8_t)rng();
	s[0] = io ? io_ops[rng() % sizeof(io_ops)]
		  : admin_ops[rng() % sizeof(admin_ops)];
	s[1] = rng() % 8 ? 0x40 : (uint8_t)rng();
	s[4] = (uint8_t)(rng() % 3); // NSID 0..2 (or fctype)
	memset(&s[5], 0, 3);
	if (s[0] == 0x7F)
		s[4] = (uint8_t)(rng() % 9);
	s[40 + 2] = (uint8_t)(rng() % 4); // small NLB / NUMD high bits
	s[40 + 3] = (uint8_t)(rng() % 2);
	memset(&s[44], 0, 4); // SLBA high, CDW11 mostly 0
	if (rng() % 2) {      // keyed SGL of a fitting length
		uint32_t len = 512u << (rng() % 6);
		s[32] = (uint8_t)len;
		s[33] = (uint8_t)(len >> 8);
		s[34] = (uint8_t)(len >> 16);
		s[39] = (uint8_t)(0x40 | (rng() % 3 ? 0 : 0xF));
	} else if (rng() % 2) { // in-capsule
		memset(&s[24], 0, 16);
		s[32] = 0;
		s[33] = (uint8_t)(rng() % 3 * 2);
		s[39] = 0x01;
	}
	return s;
}

TEST(NvmfFuzzReplay, GeneratedRecords)
{
	std::mt19937 rng(2024);
	for (int i = 0; i < 1500; i++) {
		std::vector<uint8_t> in(37);
		in[0] = (uint8_t)(rng() % 32 & ~0x02); // mostly enabled
		in[33] = 16;
		in[35] = in[36] = 16;
		in[1 + 4] = 32; // a valid REQ: hrqsize 32, hsqsize 31
		in[1 + 6] = 31;
		int records = 1 + rng() % 24;
		for (int r = 0; r < records; r++) {
			uint8_t op = (uint8_t)(rng() % 8);
			std::vector<uint8_t> p;
			if ((op & 3) < 2) {
				p = RandomSqe(rng, op & 1);
				if (rng() % 3 == 0)
					p.resize(64 + 512 * (rng() % 3),
						 (uint8_t)rng());
			} else {
				p = {(uint8_t)rng(), (uint8_t)rng(),
				     (uint8_t)rng()};
			}
			in.push_back(op);
			in.push_back((uint8_t)p.size());
			in.push_back((uint8_t)(p.size() >> 8));
			in.insert(in.end(), p.begin(), p.end());
		}
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
	LLVMFuzzerTestOneInput(nullptr, 0);
}

} // namespace
