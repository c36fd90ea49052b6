/*
 * nvmf_host_fuzz.c - the host's response capsule parser (wnh_rsp_parse)
 * on peer bytes: byte 0 picks the queue depth, the rest is the capsule.
 * Every accepted capsule is at least a completion long, names a command
 * id below the depth and reports exactly the bytes it was given; every
 * refused one is short (-EMSGSIZE) or out of range (-ERANGE).
 */
#include <errno.h>
#include <string.h>

#include "initiators/nvmf/cmd.h"
#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wnh_rsp r;
	uint32_t depth;
	int rc;

	if (size < 1)
		return 0;
	depth = data[0] ? (uint32_t)data[0] * 4 : 0x10000;
	data++;
	size--;
	memset(&r, 0xAB, sizeof(r));
	rc = wnh_rsp_parse(data, size, depth, &r);
	if (size < NVMF_CQE_SIZE) {
		CHECK(rc == -EMSGSIZE);
		return 0;
	}
	{
		struct nvmf_cqe cqe;

		memcpy(&cqe, data, sizeof(cqe));
		if (cqe.cid >= depth) {
			CHECK(rc == -ERANGE);
			return 0;
		}
		CHECK(rc == 0);
		CHECK(r.cid == cqe.cid && r.cid < depth);
		CHECK(r.status == cqe.status >> 1);
		CHECK(r.sqhd == cqe.sqhd && r.result == cqe.result);
	}
	{
		char buf[96];

		wnh_status_str(r.status, buf, sizeof(buf));
		CHECK(memchr(buf, '\0', sizeof(buf)) != NULL);
	}
	return 0;
}
