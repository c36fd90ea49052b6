// Runs the NBD wire fuzz target in the normal suite: the seed corpus,
// mutations of it and random inputs of both stages (handshake,
// transmission).  The target aborts on a broken rule.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tests/fuzz/replay_util.h"

namespace
{

const char kCorpus[] = "tests/fuzz/corpus/nbd_fuzz";

TEST(NbdFuzzReplay, SeedCorpus)
{
	auto corpus = fuzz_replay::LoadCorpus(kCorpus, 4096);
	ASSERT_GE(corpus.size(), 3u) << "corpus missing from runfiles";
	for (auto &in : corpus)
		LLVMFuzzerTestOneInput(in.data(), in.size());
}

TEST(NbdFuzzReplay, MutatedCorpus)
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

TEST(NbdFuzzReplay, RandomBytes)
{
	std::mt19937 rng(77);
	for (int i = 0; i < 20000; i++) {
		std::vector<uint8_t> in(rng() % 120);
		for (auto &b : in)
			b = (uint8_t)rng();
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

} // namespace
