// Runs the host's response-parser fuzz target in the normal suite: the
// seed corpus, mutations of it and random capsules of every length
// around a completion's 16 bytes.  The target aborts on a broken rule.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fuzz/replay_util.h"

namespace
{

const char kCorpus[] = "tests/fuzz/corpus/nvmf_host_fuzz";

TEST(NvmfHostFuzzReplay, SeedCorpus)
{
	auto corpus = fuzz_replay::LoadCorpus(kCorpus, 4096);
	ASSERT_GE(corpus.size(), 3u) << "corpus missing from runfiles";
	for (auto &in : corpus)
		LLVMFuzzerTestOneInput(in.data(), in.size());
}

TEST(NvmfHostFuzzReplay, MutatedCorpus)
{
	auto corpus = fuzz_replay::LoadCorpus(kCorpus, 4096);
	ASSERT_FALSE(corpus.empty());
	std::mt19937 rng(1919);
	for (int i = 0; i < 5000; i++) {
		std::vector<uint8_t> in = corpus[rng() % corpus.size()];
		fuzz_replay::Mutate(rng, &in, 4, 64);
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

TEST(NvmfHostFuzzReplay, RandomCapsules)
{
	std::mt19937 rng(77);
	for (int i = 0; i < 20000; i++) {
		std::vector<uint8_t> in(rng() % 40);
		for (auto &b : in)
			b = (uint8_t)rng();
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

} // namespace
