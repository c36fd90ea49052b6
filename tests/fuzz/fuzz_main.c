/*
 * tests/fuzz/fuzz_main.c - main() for fuzz targets built without libFuzzer:
 * runs LLVMFuzzerTestOneInput on each file named on the command line (to
 * replay a crash found by --config=fuzz in a gcc build or a debugger).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_check.h"

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		size_t n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
		printf("%s: ok (%zu bytes)\n", argv[i], n);
	}
	return 0;
}
