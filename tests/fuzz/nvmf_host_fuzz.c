/*
 * nvmf_host_fuzz.c - the host's response capsule parser (wnh_rsp_parse)
 * on peer bytes: byte 0 picks the queue depth, the rest is the capsule.
 * Every accepted capsule is at least a completion long, names a command
 * id below the depth and reports exactly the bytes it was given; every
 * refused one is short (-EMSGSIZE) or out of range (-ERANGE).
 * The same bytes as a Discovery Log Page header (accepted only at full
 * size with record format 0, numrec clamped to the byte-0 limit) and as
 * an entry (accepted only at full size; every string NUL-terminated
 * inside its field).
 */
#include <errno.h>
#include <string.h>

#include "nvmf_host/cmd.h"
#include "tests/fuzz/fuzz_check.h"

static void disc(const uint8_t *data, size_t size, uint64_t max)
{
	struct wharf_nvmf_host_disc_entry e;
	uint64_t g = 1, n = 1;
	int rc = wnh_disc_hdr_parse(data, size, &g, &n, max);

	if (size < sizeof(struct nvme_disc_hdr)) {
		CHECK(rc == -EMSGSIZE);
	} else if (data[16] | data[17]) {
		CHECK(rc == -EPROTO);
	} else {
		CHECK(rc == 0 && n <= max);
	}
	memset(&e, 0xAB, sizeof(e));
	rc = wnh_disc_entry_parse(data, size, &e);
	if (size < sizeof(struct nvme_disc_entry)) {
		CHECK(rc == -EMSGSIZE);
		return;
	}
	CHECK(rc == 0 && e.size == sizeof(e));
	CHECK(memchr(e.trsvcid, '\0', sizeof(e.trsvcid)) != NULL);
	CHECK(memchr(e.subnqn, '\0', sizeof(e.subnqn)) != NULL);
	CHECK(memchr(e.traddr, '\0', sizeof(e.traddr)) != NULL);
	CHECK(e.trtype == data[0] && e.subtype == data[2]);
}

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
	disc(data, size, data[-1]);
	memset(&r, 0xAB, sizeof(r));
	rc = wnh_rsp_parse(data, size, depth, &r);
	if (size < NVME_CQE_SIZE) {
		CHECK(rc == -EMSGSIZE);
		return 0;
	}
	{
		struct nvme_cqe cqe;

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
