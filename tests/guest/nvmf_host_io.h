// Commands of <wharf/nvmf_host.h> for the guest tests: one Io runs on its
// queue's owner shard (sent there with wharf_shard_send()) and the test
// thread polls its `done` flag, bounded; a data pattern per seed; the
// suites' context and cm.
#ifndef WHARF_TESTS_GUEST_NVMF_HOST_IO_H
#define WHARF_TESTS_GUEST_NVMF_HOST_IO_H

#include <stdint.h>
#include <stdio.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/nvmf_host.h>

#include "tests/guest/nvmf_guest_util.h"

namespace nvmf_guest
{

struct Io {
	struct wharf_nvmf_host_queue *q = nullptr;
	uint32_t nsid = 1;
	uint64_t slba = 0;
	uint32_t nlb = 0;
	void *buf = nullptr;
	char op = 'r';	   // r, w, f; z: Write Zeroes, d: DSM Deallocate
	bool deac = false; // z: DEAC
	std::vector<wharf_nvmf_host_range> ranges; // d
	std::atomic<int> done{0};
	int submit_rc = 0, status = 0;
	uint16_t nvme = 0;
};

inline void IoDone(int status, uint16_t nvme, void *arg)
{
	Io *io = static_cast<Io *>(arg);
	io->status = status;
	io->nvme = nvme;
	io->done.fetch_add(1);
}

inline void IoStart(struct wharf_shard *, void *arg)
{
	Io *io = static_cast<Io *>(arg);
	int rc;

	if (io->op == 'w')
		rc = wharf_nvmf_host_write(io->q, io->nsid, io->slba, io->nlb,
					   io->buf, IoDone, io);
	else if (io->op == 'f')
		rc = wharf_nvmf_host_flush(io->q, io->nsid, IoDone, io);
	else if (io->op == 'z')
		rc = wharf_nvmf_host_write_zeroes(io->q, io->nsid, io->slba,
						  io->nlb, io->deac, IoDone,
						  io);
	else if (io->op == 'd')
		rc = wharf_nvmf_host_dsm_deallocate(
			io->q, io->nsid, io->ranges.data(),
			(unsigned)io->ranges.size(), IoDone, io);
	else
		rc = wharf_nvmf_host_read(io->q, io->nsid, io->slba, io->nlb,
					  io->buf, IoDone, io);
	if (rc) {
		io->submit_rc = rc;
		io->done.store(1);
	}
}

// Sends @io to its queue's shard; false when the message was refused.
inline bool StartIo(Io *io)
{
	return wharf_shard_send(wharf_nvmf_host_queue_shard(io->q), IoStart,
				io) == 0;
}

// Waits (bounded) for @io; its submission error, else its completion
// status; -998 when it did not finish.
inline int WaitIo(Io *io)
{
	if (!Poll([&] { return io->done.load() >= 1; }))
		return -998;
	return io->submit_rc ? io->submit_rc : io->status;
}

// Runs one command; its submission error, else its completion status.
inline int DoIo(struct wharf_nvmf_host_queue *q, char op, uint64_t slba,
		uint32_t nlb, void *buf, uint16_t *nvme = nullptr,
		bool deac = false,
		std::vector<wharf_nvmf_host_range> ranges = {})
{
	Io io;
	io.q = q;
	io.op = op;
	io.slba = slba;
	io.nlb = nlb;
	io.buf = buf;
	io.deac = deac;
	io.ranges = ranges;
	if (!StartIo(&io))
		return -999;
	int rc = WaitIo(&io);
	if (nvme)
		*nvme = io.nvme;
	return rc;
}

// The library's error lines (WHARF_LOG_ERROR), kept for the test that
// asks why a connect failed; every line is also printed as the default
// logger would.
struct ErrorLog {
	std::mutex m;
	std::string lines;
};

inline ErrorLog &SuiteErrors()
{
	static ErrorLog log;
	return log;
}

inline void SuiteLog(void *arg, enum wharf_log_level level, const char *msg)
{
	(void)arg;
	fprintf(stderr, "wharf: %s: %s\n",
		level == WHARF_LOG_ERROR  ? "error"
		: level == WHARF_LOG_WARN ? "warning"
					  : "info",
		msg);
	if (level != WHARF_LOG_ERROR)
		return;
	ErrorLog &l = SuiteErrors();
	std::lock_guard<std::mutex> g(l.m);
	l.lines += msg;
	l.lines += '\n';
}

// The error lines logged since the last call.
inline std::string TakeErrors()
{
	ErrorLog &l = SuiteErrors();
	std::lock_guard<std::mutex> g(l.m);
	std::string s;
	s.swap(l.lines);
	return s;
}

// wharf_nvmf_host_connect(); *@why: what the library logged as the
// reason when it failed.
inline int HostConnect(const wharf_nvmf_host_opts *o, std::string *why,
		       wharf_nvmf_host **out)
{
	TakeErrors();
	int rc = wharf_nvmf_host_connect(o, out);
	*why = TakeErrors();
	return rc;
}

// A test suite's context (two shards, SuiteLog) and cm; a failure is the
// suite's.
inline void SuiteCtxCreate(wharf_ctx **ctx, wharf_cm **cm)
{
	wharf_ctx_opts co;
	wharf_ctx_opts_init(&co);
	co.nshards = 2;
	co.log_fn = SuiteLog;
	if (wharf_ctx_create(&co, ctx) || wharf_cm_create(*ctx, nullptr, cm)) {
		ADD_FAILURE() << "wharf context / cm";
	}
}

inline void SuiteCtxDestroy(wharf_ctx **ctx, wharf_cm **cm)
{
	if (*cm) {
		EXPECT_EQ(0, wharf_cm_destroy(*cm));
	}
	if (*ctx) {
		EXPECT_EQ(0, wharf_ctx_destroy(*ctx));
	}
	*cm = nullptr;
	*ctx = nullptr;
}

// The controller's stats (a failure is the caller's).
inline struct wharf_nvmf_host_stats HostStats(wharf_nvmf_host *h)
{
	struct wharf_nvmf_host_stats s = {};
	s.size = sizeof(s);
	EXPECT_EQ(0, wharf_nvmf_host_stats(h, &s));
	return s;
}

inline std::vector<uint8_t> Pattern(size_t len, unsigned seed)
{
	std::vector<uint8_t> v(len);
	uint32_t x = 2463534242u * (seed + 1);
	for (auto &b : v) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b = (uint8_t)x;
	}
	return v;
}

} // namespace nvmf_guest

#endif // WHARF_TESTS_GUEST_NVMF_HOST_IO_H
