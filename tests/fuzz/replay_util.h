// Shared by the *_fuzz_replay_test programs: run a fuzz target's entry
// point in the normal suite (gcc, no libFuzzer) over its checked-in seed
// corpus and over cheap mutations of it.
#ifndef WHARF_TESTS_FUZZ_REPLAY_UTIL_H
#define WHARF_TESTS_FUZZ_REPLAY_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>

#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fuzz_replay
{

// Every file of @dir (a runfiles path), each cut to @max_len bytes.
inline std::vector<std::vector<uint8_t>> LoadCorpus(const char *dir,
						    size_t max_len)
{
	std::vector<std::vector<uint8_t>> out;
	DIR *d = opendir(dir);
	if (!d)
		return out;
	while (struct dirent *de = readdir(d)) {
		if (de->d_name[0] == '.')
			continue;
		std::string path = std::string(dir) + "/" + de->d_name;
		FILE *f = fopen(path.c_str(), "rb");
		if (!f)
			continue;
		std::vector<uint8_t> buf(max_len);
		buf.resize(fread(buf.data(), 1, buf.size(), f));
		fclose(f);
		out.push_back(buf);
	}
	closedir(d);
	return out;
}

// 1..@max_edits random edits of @in: flip a bit, set a byte, truncate, or
// grow by up to @max_grow - 1 random-filled bytes.
inline void Mutate(std::mt19937 &rng, std::vector<uint8_t> *in,
		   unsigned max_edits, unsigned max_grow)
{
	unsigned edits = 1 + rng() % max_edits;

	for (unsigned e = 0; e < edits && !in->empty(); e++) {
		switch (rng() % 4) {
		case 0: // flip a bit
			(*in)[rng() % in->size()] ^= 1u << (rng() % 8);
			break;
		case 1: // set a byte
			(*in)[rng() % in->size()] = (uint8_t)rng();
			break;
		case 2: // truncate
			in->resize(rng() % (in->size() + 1));
			break;
		default: // grow
			in->resize(in->size() + rng() % max_grow,
				   (uint8_t)rng());
		}
	}
}

// Feeds @n mutations of randomly chosen corpus entries to the target
// (rng seeded with @seed; Mutate() with @max_edits and @max_grow).
inline void ReplayMutated(const std::vector<std::vector<uint8_t>> &corpus,
			  unsigned seed, int n, unsigned max_edits,
			  unsigned max_grow)
{
	std::mt19937 rng(seed);
	for (int i = 0; i < n; i++) {
		std::vector<uint8_t> in = corpus[rng() % corpus.size()];
		Mutate(rng, &in, max_edits, max_grow);
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

// Feeds @n random inputs of 0 to @max_len - 1 bytes to the target.
inline void ReplayRandom(unsigned seed, int n, size_t max_len)
{
	std::mt19937 rng(seed);
	for (int i = 0; i < n; i++) {
		std::vector<uint8_t> in(rng() % max_len);
		for (auto &b : in)
			b = (uint8_t)rng();
		LLVMFuzzerTestOneInput(in.data(), in.size());
	}
}

} // namespace fuzz_replay

#endif // WHARF_TESTS_FUZZ_REPLAY_UTIL_H
