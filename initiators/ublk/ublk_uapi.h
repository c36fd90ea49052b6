/*
 * initiators/ublk/ublk_uapi.h - the parts of the ublk UAPI that Debian 12's
 * <linux/ublk_cmd.h> (Linux 6.1) lacks, each defined once here with the
 * kernel version that brought it.  The structures and the opcode numbers
 * are the 6.1 header's: their layout did not change.
 */
#ifndef WHARF_INITIATORS_UBLK_UAPI_H
#define WHARF_INITIATORS_UBLK_UAPI_H

#include <linux/ioctl.h>
#include <linux/ublk_cmd.h>

/* ioctl-encoded control and I/O opcodes (Linux 6.4, UBLK_F_CMD_IOCTL_ENCODE).
 * A kernel built without CONFIG_BLKDEV_UBLK_LEGACY_OPCODES takes only
 * these; Debian's 6.12 takes both. */
#ifndef UBLK_U_CMD_GET_DEV_INFO
#define UBLK_U_CMD_GET_DEV_INFO                                                \
	_IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_ADD_DEV _IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV _IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV                                                   \
	_IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV                                                    \
	_IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS                                                  \
	_IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_PARAMS                                                  \
	_IOR('u', UBLK_CMD_GET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_USER_RECOVERY                                         \
	_IOWR('u', UBLK_CMD_START_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_END_USER_RECOVERY                                           \
	_IOWR('u', UBLK_CMD_END_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_IO_FETCH_REQ _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ                                         \
	_IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd)
#endif

/* The driver reports that it takes the encoded opcodes (Linux 6.4). */
#ifndef UBLK_F_CMD_IOCTL_ENCODE
#define UBLK_F_CMD_IOCTL_ENCODE (1UL << 6)
#endif

#endif /* WHARF_INITIATORS_UBLK_UAPI_H */
