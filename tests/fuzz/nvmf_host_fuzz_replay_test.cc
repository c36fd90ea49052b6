// Runs the host's response-parser fuzz target in the normal suite: the
// seed corpus, mutations of it and random capsules of every length
// around a completion's 16 bytes.  The target aborts on a broken rule.
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
	fuzz_replay::ReplayMutated(corpus, 1919, 5000, 4, 64);
}

TEST(NvmfHostFuzzReplay, RandomCapsules)
{
	fuzz_replay::ReplayRandom(77, 20000, 40);
}

} // namespace
