/*
 * fuzz_check.h - what every fuzz entry point shares: the libFuzzer entry
 * point's prototype and CHECK, an invariant whose failure aborts (so that
 * libFuzzer reports the input and a replay test fails).
 */
#ifndef WHARF_TESTS_FUZZ_CHECK_H
#define WHARF_TESTS_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
