// Runs the cm fuzz target in the normal suite (gcc, no libFuzzer): the
// checked-in seed corpus, mutations of it, and pseudo-random inputs. The
// target aborts on any violated rule, which fails the test.
#include <string.h>

#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fuzz/replay_util.h"

namespace
{

const char kCorpus[] = "tests/fuzz/corpus/cm_fuzz";

std::vector<std::vector<uint8_t>> LoadCorpus()
{
	return fuzz_replay::LoadCorpus(kCorpus, 4096);
}

TEST(CmFuzzReplay, SeedCorpus)
{
	auto corpus = LoadCorpus();
	ASSERT_GE(corpus.size(), 8u) << "corpus missing from runfiles";
	for (auto &in : corpus)
		LLVMFuzzerTestOneInput(in.data(), in.size());
}

TEST(CmFuzzReplay, MutatedCorpus)
{
	auto corpus = LoadCorpus();
	ASSERT_FALSE(corpus.empty());
	std::mt19937 rng(4242);
	for (int i = 0; i < 3000; i++) {
		std::vector<uint8_t> in = corpus[rng() % corpus.size()];
		fuzz_replay::Mutate(rng, &in, 4, 64);
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

TEST(CmFuzzReplay, RandomInputs)
{
	std::mt19937 rng(777);
	for (int i = 0; i < 3000; i++) {
		std::vector<uint8_t> in(rng() % 320);
		for (auto &b : in)
			b = (uint8_t)rng();
		if (in.size() >= 4 && rng() % 2)
			memcpy(in.data(), "WHRF", 4); // reach past the magic
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
	LLVMFuzzerTestOneInput(nullptr, 0);
}

} // namespace
