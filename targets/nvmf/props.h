/*
 * targets/nvmf/props.h - the controller properties of NVMe over Fabrics
 * (CAP, VS, CC, CSTS) and the CC write state machine, as pure functions.
 *
 * Property Get reads CAP as 8 bytes and VS / CC / CSTS as 4 bytes; any
 * other offset or size is Invalid Field (INTMS / INTMC are reserved on
 * fabrics; NSSR is not supported: CAP.NSSRS = 0). Property Set writes CC
 * only (4 bytes).
 *
 * CC writes (NVMe Base 1.4 3.1.5, 7.3, 7.6.2):
 *  - EN 0 -> 1 with a valid configuration (CSS = NVM, MPS = 0 (4 KiB,
 *    CAP.MPSMIN = MPSMAX = 0), AMS = round robin, IOSQES = 6, IOCQES = 4)
 *    sets CSTS.RDY; an invalid one sets CSTS.CFS and leaves RDY clear.
 *  - EN 1 -> 0 is a controller reset: RDY, CFS and SHST clear, and the
 *    controller's I/O queues are torn down (reset = true).
 *  - SHN 01b / 10b (normal / abrupt) completes at once: SHST = 10b.
 *    Clearing SHN clears SHST.
 *  - Other fields are stored as written while EN is 1 (only the bits CC
 *    defines are kept).
 */
#ifndef WHARF_TARGETS_NVMF_PROPS_H
#define WHARF_TARGETS_NVMF_PROPS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CC / CSTS of one controller. */
struct nvmf_regs {
	uint32_t cc;
	uint32_t csts;
};

/* What a CC write did. */
struct nvmf_cc_effect {
	bool enabled; /* EN went 0 -> 1 and RDY is now set */
	bool reset;   /* EN went 1 -> 0: tear down the I/O queues */
	bool failed;  /* EN went 0 -> 1 with a bad configuration: CFS set */
};

/**
 * nvmf_cap() - the CAP property.
 * @max_entries: the largest I/O queue in entries (2..65536).
 *
 * Return: MQES = @max_entries - 1, CQR = 1, TO = 1 (500 ms), CSS = NVM,
 * MPSMIN = MPSMAX = 0; 0 if @max_entries is out of range.
 * Context: any thread; pure, non-blocking.
 */
uint64_t nvmf_cap(uint32_t max_entries);

/**
 * nvmf_prop_get() - the value of a Property Get.
 * @regs: the controller's CC / CSTS.
 * @cap: the CAP value (nvmf_cap()).
 * @ofst: the property offset.
 * @size8: true for an 8-byte access (ATTRIB.SIZE = 1).
 * @val: the value read.
 *
 * Return: 0; -EINVAL (Invalid Field) for an undefined offset or a size
 * the property does not have.
 * Context: any thread; pure, non-blocking.
 */
int nvmf_prop_get(const struct nvmf_regs *regs, uint64_t cap, uint32_t ofst,
		  bool size8, uint64_t *val);

/**
 * nvmf_cc_write() - apply a CC write.
 * @regs: in/out: the controller's CC / CSTS.
 * @val: the written value.
 * @eff: what happened (see the rules above).
 *
 * Context: any thread; pure, non-blocking.
 */
void nvmf_cc_write(struct nvmf_regs *regs, uint32_t val,
		   struct nvmf_cc_effect *eff);

#ifdef __cplusplus
}
#endif

#endif /* WHARF_TARGETS_NVMF_PROPS_H */
