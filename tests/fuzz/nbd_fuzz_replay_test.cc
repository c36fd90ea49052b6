// Runs the NBD wire fuzz target in the normal suite: the seed corpus,
// mutations of it and random inputs of both stages (handshake,
// transmission).  The target aborts on a broken rule.
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
	fuzz_replay::ReplayMutated(corpus, 1919, 5000, 4, 64);
}

TEST(NbdFuzzReplay, RandomBytes)
{
	fuzz_replay::ReplayRandom(77, 20000, 120);
}

} // namespace
