// Runs the cm fuzz target in the normal suite (gcc, no libFuzzer): the
// checked-in seed corpus, mutations of it, and pseudo-random inputs. The
// target aborts on any violated rule, which fails the test.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace
{

const char kCorpus[] = "tests/fuzz/corpus/cm_fuzz";

std::vector<std::vector<uint8_t>> LoadCorpus()
{
	std::vector<std::vector<uint8_t>> out;
	DIR *d = opendir(kCorpus);
	if (!d)
		return out;
	while (struct dirent *de = readdir(d)) {
		if (de->d_name[0] == '.')
			continue;
		std::string path = std::string(kCorpus) + "/" + de->d_name;
		FILE *f = fopen(path.c_str(), "rb");
		if (!f)
			continue;
		std::vector<uint8_t> buf(4096);
		buf.resize(fread(buf.data(), 1, buf.size(), f));
		fclose(f);
		out.push_back(buf);
	}
	closedir(d);
	return out;
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
		int edits = 1 + rng() % 4;
		for (int e = 0; e < edits && !in.empty(); e++) {
			switch (rng() % 4) {
			case 0: // flip a bit
				in[rng() % in.size()] ^= 1u << (rng() % 8);
				break;
			case 1: // set a byte
				in[rng() % in.size()] = (uint8_t)rng();
				break;
			case 2: // truncate
				in.resize(rng() % (in.size() + 1));
				break;
			default: // grow
				in.resize(in.size() + rng() % 64,
					  (uint8_t)rng());
			}
		}
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
