// A fake transport binding for the nvmf core tests: a manual clock,
// recorded kill / held_ready callbacks, "host memory" for keyed SGLs (the
// SGL address is a pointer into the test), and helpers that build
// capsules and drive a request to its response the way the RDMA binding
// will (RDMA READ = memcpy from the host buffer, RDMA WRITE = memcpy to
// it). TearDown destroys every queue and checks that the target's
// counters are back to zero.
#ifndef WHARF_TESTS_UNIT_NVMF_TEST_UTIL_H
#define WHARF_TESTS_UNIT_NVMF_TEST_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/config.h"
#include "targets/nvmf/nvmf.h"
#include "proto/nvme/spec_data.h"
#include "proto/nvme/spec_fabrics.h"
}

namespace nvmf_test
{

const char kHost[] =
	"nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
const char kStranger[] =
	"nqn.2014-08.org.nvmexpress:uuid:99999999-8888-7777-6666-555555555555";
const char kSub[] = "nqn.2024-01.io.wharf:test";
const char kOpen[] = "nqn.2024-01.io.wharf:open";
const char kOther[] = "nqn.2024-01.io.wharf:other";

inline std::string DefaultConfig()
{
	return std::string("listen 198.18.0.1 4420\n"
			   "listen fd00::1 4421\n"
			   "queue-depth 64\n"
			   "io-queues 4\n"
			   "in-capsule 4096\n"
			   "max-io-size 128K\n"
			   "subsystem ") +
	       kSub +
	       "\n"
	       "  serial SN-TEST\n"
	       "  model wharf test disk\n"
	       "  namespace 1 ram:1M\n"
	       "  namespace 2 ram:1M block=4096\n"
	       "  allow-host " +
	       kHost +
	       "\n"
	       "subsystem " +
	       kOpen +
	       "\n"
	       "  namespace 1 ram:64K\n"
	       "  allow-any-host\n"
	       "subsystem " +
	       kOther +
	       "\n"
	       "  namespace 1 ram:64K\n"
	       "  allow-host " +
	       kStranger + "\n";
}

// Three listen addresses (listen lines 1..3: 198.18.0.1:4420, :4421,
// [fd00::1]:4420); kSub (any host) with @exports, its export lines; kOpen
// (any host) on every address.
inline std::string ExportConfig(const std::string &exports)
{
	return std::string("listen 198.18.0.1 4420\n"
			   "listen 198.18.0.1 4421\n"
			   "listen fd00::1 4420\n"
			   "subsystem ") +
	       kSub + "\n  namespace 1 ram:64K\n  allow-any-host\n" + exports +
	       "subsystem " + kOpen +
	       "\n  namespace 1 ram:64K\n  allow-any-host\n";
}

// A request plus the data buffer the binding attaches to it.
struct Slot {
	nvmf_req req;
	std::vector<uint8_t> buf;
};

// One received capsule: the SQE and its in-capsule data.
struct Capsule {
	nvme_sqe sqe;
	std::vector<uint8_t> icd;

	std::vector<uint8_t> Bytes() const
	{
		const uint8_t *p = reinterpret_cast<const uint8_t *>(&sqe);
		std::vector<uint8_t> b(p, p + sizeof(sqe));

		b.insert(b.end(), icd.begin(), icd.end());
		return b;
	}
};

inline void SetKeyed(nvme_sqe *s, const void *host, uint32_t len,
		     bool invalidate = false)
{
	s->sgl.addr = (uint64_t)(uintptr_t)host;
	s->sgl.keyed.len[0] = (uint8_t)len;
	s->sgl.keyed.len[1] = (uint8_t)(len >> 8);
	s->sgl.keyed.len[2] = (uint8_t)(len >> 16);
	s->sgl.keyed.key = 0x1234;
	s->sgl.keyed.type = (uint8_t)(NVME_SGL_TYPE_KEYED_DATA << 4 |
				      (invalidate ? NVME_SGL_SUB_INVALIDATE
						  : NVME_SGL_SUB_ADDRESS));
}

inline void SetInCapsule(nvme_sqe *s, uint64_t off, uint32_t len)
{
	memset(&s->sgl, 0, sizeof(s->sgl));
	s->sgl.addr = off;
	s->sgl.unkeyed.len = len;
	s->sgl.unkeyed.type =
		(uint8_t)(NVME_SGL_TYPE_DATA_BLOCK << 4 | NVME_SGL_SUB_OFFSET);
}

// A command with PSDT = SGL and a null keyed SGL (what hosts send when no
// data moves).
inline Capsule Cmd(uint8_t opc, uint16_t cid, uint32_t nsid = 0)
{
	Capsule c;
	memset(&c.sqe, 0, sizeof(c.sqe));
	c.sqe.opc = opc;
	c.sqe.flags = NVME_FLAGS_PSDT_SGL;
	c.sqe.cid = cid;
	c.sqe.nsid = nsid;
	SetKeyed(&c.sqe, nullptr, 0);
	return c;
}

inline Capsule Fabrics(uint8_t fctype, uint16_t cid)
{
	Capsule c = Cmd(NVME_OPC_FABRICS, cid);
	c.sqe.flags = 0; // reserved in Fabrics commands
	((uint8_t *)&c.sqe)[4] = fctype;
	return c;
}

inline uint16_t Status(const nvmf_req &r)
{
	return r.rsp.status >> 1;
}

inline uint16_t Sc(const nvmf_req &r)
{
	return Status(r) & 0xFF;
}

inline uint16_t Sct(const nvmf_req &r)
{
	return (Status(r) >> 8) & 7;
}

inline bool Dnr(const nvmf_req &r)
{
	return Status(r) & NVME_DNR;
}

// One connect_audit call, its strings copied.
struct Audit {
	nvmf_queue *q;
	std::string hostnqn, hostid, subnqn, reason;
	uint16_t cntlid, status;
};

struct Fake {
	uint64_t now = 1000;
	std::vector<nvmf_queue *> killed;
	std::vector<std::pair<nvmf_queue *, nvmf_req *>> ready;
	std::vector<Audit> audits;

	static uint64_t NowMs(void *arg)
	{
		return static_cast<Fake *>(arg)->now;
	}
	static void HeldReady(nvmf_queue *q, nvmf_req *req, void *arg)
	{
		static_cast<Fake *>(arg)->ready.push_back({q, req});
	}
	static void Kill(nvmf_queue *q, void *arg)
	{
		static_cast<Fake *>(arg)->killed.push_back(q);
	}
	static void ConnectAudit(nvmf_queue *q, const nvmf_connect_audit *a,
				 void *arg)
	{
		static_cast<Fake *>(arg)->audits.push_back(
			{q, a->hostnqn, a->hostid, a->subnqn,
			 a->reason ? a->reason : "", a->cntlid, a->status});
	}
	// The callbacks above as a target's ops (arg: a Fake).
	static nvmf_tgt_ops Ops()
	{
		nvmf_tgt_ops ops = {};
		ops.size = sizeof(ops);
		ops.now_ms = NowMs;
		ops.held_ready = HeldReady;
		ops.kill = Kill;
		ops.connect_audit = ConnectAudit;
		return ops;
	}
	bool WasKilled(nvmf_queue *q) const
	{
		return std::count(killed.begin(), killed.end(), q) > 0;
	}
};

class NvmfTest : public ::testing::Test
{
      protected:
	Fake fake_;
	nvmf_tgt *tgt_ = nullptr;
	std::vector<nvmf_queue *> queues_;
	// The io_uring queues get (file namespaces then go through it), and
	// how a test waits for a backend step: returns the next action.
	nvmf_aio *aio_ = nullptr;
	std::function<nvmf_act(nvmf_queue *, Slot *)> wait_backend_;
	// The listen line new queues come in on (nvmf_queue_params.listener).
	uint16_t listener_ = 0;

	void SetUp() override
	{
		Create(DefaultConfig());
	}

	void Create(const std::string &text)
	{
		nvmf_config cfg;
		char err[256] = "";
		nvmf_tgt_ops ops = Fake::Ops();

		ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(),
					       "test.conf", &cfg, err,
					       sizeof(err)))
			<< err;
		ASSERT_EQ(0, nvmf_tgt_create(&cfg, &ops, &fake_, &tgt_, err,
					     sizeof(err)))
			<< err;
		nvmf_config_free(&cfg);
	}

	void TearDown() override
	{
		nvmf_tgt_stats st;

		// Admin queues last: the association ends with them.
		std::stable_sort(queues_.begin(), queues_.end(),
				 [](nvmf_queue *a, nvmf_queue *b) {
					 return QidOf(a) > QidOf(b);
				 });
		for (nvmf_queue *q : queues_)
			nvmf_queue_destroy(q);
		queues_.clear();
		if (!tgt_)
			return;
		nvmf_tgt_get_stats(tgt_, &st);
		EXPECT_EQ(0u, st.ctrls);
		EXPECT_EQ(0u, st.queues);
		EXPECT_EQ(0u, st.reqs);
		EXPECT_EQ(0u, st.held);
		EXPECT_EQ(0, nvmf_tgt_destroy(tgt_));
	}

	static uint16_t QidOf(nvmf_queue *q)
	{
		return (uint16_t)(uintptr_t)nvmf_queue_ctx(q);
	}

	nvmf_queue *NewQueue(uint16_t qid, uint16_t entries)
	{
		nvmf_queue_params p = {};
		nvmf_queue *q = nullptr;

		p.size = sizeof(p);
		p.qid = qid;
		p.sq_entries = entries;
		p.ctx = (void *)(uintptr_t)qid;
		p.aio = aio_;
		p.listener = listener_;
		EXPECT_EQ(0, nvmf_queue_create(tgt_, &p, &q));
		if (q)
			queues_.push_back(q);
		return q;
	}

	void DestroyQueue(nvmf_queue *q)
	{
		queues_.erase(std::remove(queues_.begin(), queues_.end(), q),
			      queues_.end());
		nvmf_queue_destroy(q);
	}

	// Drive @bytes through the core like the binding: keyed data moves
	// by memcpy from / to the SGL address.
	nvmf_act Run(nvmf_queue *q, Slot *s, const std::vector<uint8_t> &bytes)
	{
		nvmf_act act =
			nvmf_req_recv(q, &s->req, bytes.data(), bytes.size());

		if (act == NVMF_ACT_COPY) { // in-capsule data, kept by the
					    // binding
			s->buf.assign((const uint8_t *)s->req.data,
				      (const uint8_t *)s->req.data +
					      s->req.xfer_len);
			s->req.data = s->buf.data();
			act = nvmf_req_exec(q, &s->req);
		}
		if (act == NVMF_ACT_READ || act == NVMF_ACT_BUF) {
			s->buf.assign(s->req.xfer_len, 0xCC);
			if (act == NVMF_ACT_READ)
				memcpy(s->buf.data(),
				       (void *)(uintptr_t)s->req.rdma_addr,
				       s->req.xfer_len);
			s->req.data = s->buf.data();
			act = nvmf_req_exec(q, &s->req);
		}
		while (act == NVMF_ACT_ASYNC && wait_backend_)
			act = wait_backend_(q, s);
		if (act == NVMF_ACT_WRITE_RESPOND)
			memcpy((void *)(uintptr_t)s->req.rdma_addr, s->req.data,
			       s->req.xfer_len);
		return act;
	}

	nvmf_act Run(nvmf_queue *q, Slot *s, const Capsule &c)
	{
		return Run(q, s, c.Bytes());
	}

	// Run a command that must complete now; return its request.
	nvmf_req Exec(nvmf_queue *q, const Capsule &c)
	{
		Slot s;
		nvmf_act act = Run(q, &s, c);

		EXPECT_TRUE(act == NVMF_ACT_RESPOND ||
			    act == NVMF_ACT_WRITE_RESPOND)
			<< "act " << act;
		return s.req;
	}

	static nvme_connect_data
	ConnectData(const char *subnqn, const char *hostnqn, uint16_t cntlid)
	{
		nvme_connect_data d;
		memset(&d, 0, sizeof(d));
		memset(d.hostid, 0xAB, sizeof(d.hostid));
		d.cntlid = cntlid;
		snprintf(d.subnqn, sizeof(d.subnqn), "%s", subnqn);
		snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", hostnqn);
		return d;
	}

	static Capsule ConnectCmd(uint16_t qid, uint16_t sqsize, uint32_t kato,
				  const nvme_connect_data *d, uint16_t cid = 1)
	{
		Capsule c = Fabrics(NVME_FCTYPE_CONNECT, cid);
		nvme_connect_cmd cc;

		memcpy(&cc, &c.sqe, sizeof(cc));
		cc.qid = qid;
		cc.sqsize = sqsize;
		cc.kato = kato;
		memcpy(&c.sqe, &cc, sizeof(cc));
		SetKeyed(&c.sqe, d, sizeof(*d));
		return c;
	}

	// Connect @q (keyed data) and return the completion.
	nvmf_req Connect(nvmf_queue *q, uint16_t qid, uint16_t sqsize,
			 const char *subnqn, const char *hostnqn,
			 uint16_t cntlid, uint32_t kato = 0)
	{
		nvme_connect_data d = ConnectData(subnqn, hostnqn, cntlid);
		return Exec(q, ConnectCmd(qid, sqsize, kato, &d));
	}

	nvmf_req PropSet(nvmf_queue *q, uint32_t ofst, uint64_t val,
			 uint8_t attrib = NVME_PROP_SIZE_4, uint16_t cid = 9)
	{
		Capsule c = Fabrics(NVME_FCTYPE_PROP_SET, cid);
		nvme_prop_cmd p;

		memcpy(&p, &c.sqe, sizeof(p));
		p.attrib = attrib;
		p.ofst = ofst;
		p.value = val;
		memcpy(&c.sqe, &p, sizeof(p));
		return Exec(q, c);
	}

	nvmf_req PropGet(nvmf_queue *q, uint32_t ofst, uint8_t attrib,
			 uint16_t cid = 8)
	{
		Capsule c = Fabrics(NVME_FCTYPE_PROP_GET, cid);
		nvme_prop_cmd p;

		memcpy(&p, &c.sqe, sizeof(p));
		p.attrib = attrib;
		p.ofst = ofst;
		memcpy(&c.sqe, &p, sizeof(p));
		return Exec(q, c);
	}

	static uint32_t CcEnable()
	{
		return NVME_CC_EN | 6u << 16 | 4u << 20;
	}

	// A connected, enabled admin queue of @subnqn; its cntlid in *cntlid.
	nvmf_queue *Admin(const char *subnqn = kSub, uint16_t *cntlid = nullptr,
			  uint32_t kato = 0, const char *host = kHost)
	{
		nvmf_queue *q = NewQueue(0, 32);
		nvmf_req r = Connect(q, 0, 31, subnqn, host,
				     NVME_CNTLID_DYNAMIC, kato);

		EXPECT_EQ(0, Status(r));
		if (cntlid)
			*cntlid = (uint16_t)r.rsp.result;
		EXPECT_EQ(0, Status(PropSet(q, NVME_PROP_CC, CcEnable())));
		return q;
	}

	// A connected I/O queue of controller @cntlid.
	nvmf_queue *Io(uint16_t qid, uint16_t cntlid, uint16_t entries = 32,
		       const char *subnqn = kSub)
	{
		nvmf_queue *q = NewQueue(qid, entries);
		nvmf_req r = Connect(q, qid, (uint16_t)(entries - 1), subnqn,
				     kHost, cntlid);

		EXPECT_EQ(0, Status(r)) << "I/O connect sc " << Sc(r);
		return q;
	}

	nvmf_tgt_stats Stats()
	{
		nvmf_tgt_stats st;
		nvmf_tgt_get_stats(tgt_, &st);
		return st;
	}
};

} // namespace nvmf_test

#endif // WHARF_TESTS_UNIT_NVMF_TEST_UTIL_H
