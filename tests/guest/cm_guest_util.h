// Helpers for the cm guest tests: a context + cm fixture, a recorder of
// every callback (with the shard it ran on), bounded waits, and a raw
// librdmacm peer for behaviours a wharf peer would never show (a withheld
// RTU, an unanswered DREQ, a chosen QP number, arbitrary REJ bytes).
//
// Every wait is bounded (kWait); a wait that runs out fails the test with
// what was recorded so far.  Nothing here asserts on durations.
#ifndef WHARF_TESTS_GUEST_CM_GUEST_UTIL_H
#define WHARF_TESTS_GUEST_CM_GUEST_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/qp.h>

#include "tests/guest/guest_env.h"

namespace wharf_cm_test
{

using Clock = std::chrono::steady_clock;
constexpr auto kWait = std::chrono::seconds(60);

enum class Ev { Request, Established, Rejected, Error, Disconnected, Recv };

inline const char *EvName(Ev e)
{
	switch (e) {
	case Ev::Request:
		return "request";
	case Ev::Established:
		return "established";
	case Ev::Rejected:
		return "rejected";
	case Ev::Error:
		return "error";
	case Ev::Disconnected:
		return "disconnected";
	case Ev::Recv:
		return "recv";
	}
	return "?";
}

// One callback, copied out of the callback's arguments.
struct Rec {
	explicit Rec(Ev e = Ev::Request) : ev(e)
	{
	}
	Ev ev;
	uint64_t id = 0;
	unsigned shard = 0;
	int a = 0, b = 0; // error kind/errno, reject reason, ...
	std::vector<uint8_t> data;
	wharf_conn_request req = {};
	wharf_conn_info info = {};
	wharf_conn_reject rej = {};
	Clock::time_point t;
};

// Records every callback of the connections whose ops arg it is.  Owned
// by the fixture (Rec()), so that callbacks that arrive after a test body
// ended (a peer's DREQ, ...) still find it; the fixture closes it before
// tearing the cm down, after which callbacks record and run nothing.
// Hooks must capture only fixture-owned state (the recorder's own rcs,
// Keep()), never the test body's locals.
class Recorder
{
      public:
	// Results hooks want to report (e.g. return codes), in order.
	void Push(int rc)
	{
		std::lock_guard<std::mutex> g(lock_);
		rcs_.push_back(rc);
		cond_.notify_all();
	}
	std::vector<int> Rcs()
	{
		std::lock_guard<std::mutex> g(lock_);
		return rcs_;
	}
	bool WaitRcs(size_t n)
	{
		return Wait([&] { return rcs_.size() >= n; });
	}
	void Close()
	{
		std::lock_guard<std::mutex> g(lock_);
		closed_ = true;
	}
	bool Closed()
	{
		std::lock_guard<std::mutex> g(lock_);
		return closed_;
	}

	// Run on the owner shard inside on_request; default: accept(NULL).
	std::function<void(wharf_conn *, const wharf_conn_request *)>
		on_request;
	// Run inside on_established (e.g. to test calls there).
	std::function<void(wharf_conn *, const wharf_conn_info *)>
		on_established;
	// Run inside on_disconnected.
	std::function<void(wharf_conn *)> on_disconnected;

	void Add(Rec r)
	{
		std::lock_guard<std::mutex> g(lock_);
		if (closed_)
			return;
		r.t = Clock::now();
		recs_.push_back(std::move(r));
		cond_.notify_all();
	}

	// Waits until @pred holds (bounded).  False on timeout.
	bool Wait(const std::function<bool()> &pred,
		  std::chrono::seconds limit = kWait)
	{
		std::unique_lock<std::mutex> g(lock_);
		return cond_.wait_for(g, limit, [&] { return pred(); });
	}

	// Callers of these hold no lock: use them inside Wait() predicates
	// (which run under the lock) or after.
	size_t CountLocked(Ev ev, uint64_t id = 0) const
	{
		size_t n = 0;
		for (const Rec &r : recs_)
			if (r.ev == ev && (!id || r.id == id))
				n++;
		return n;
	}
	size_t Count(Ev ev, uint64_t id = 0)
	{
		std::lock_guard<std::mutex> g(lock_);
		return CountLocked(ev, id);
	}
	bool WaitCount(Ev ev, size_t n, uint64_t id = 0)
	{
		return Wait([&] { return CountLocked(ev, id) >= n; });
	}
	std::vector<Rec> All()
	{
		std::lock_guard<std::mutex> g(lock_);
		return recs_;
	}
	// The first record of @ev (for @id when non-zero); must exist or
	// appear within the bounded wait (a record is added after its hook
	// returns, and what the hook sent can reach the other side first).
	Rec First(Ev ev, uint64_t id = 0)
	{
		std::unique_lock<std::mutex> g(lock_);
		const Rec *found = nullptr;
		auto find = [&] {
			for (const Rec &r : recs_)
				if (r.ev == ev && (!id || r.id == id)) {
					found = &r;
					return true;
				}
			return false;
		};
		if (cond_.wait_for(g, kWait, find))
			return *found;
		ADD_FAILURE() << "no " << EvName(ev) << " record";
		return Rec(ev);
	}
	std::string Dump()
	{
		std::lock_guard<std::mutex> g(lock_);
		std::string s;
		for (const Rec &r : recs_)
			s += std::string(EvName(r.ev)) +
			     " id=" + std::to_string(r.id) +
			     " shard=" + std::to_string(r.shard) +
			     " a=" + std::to_string(r.a) +
			     " b=" + std::to_string(r.b) + "\n";
		return s;
	}

	static const wharf_conn_ops *Ops();

      private:
	std::mutex lock_;
	std::condition_variable cond_;
	std::vector<Rec> recs_;
	std::vector<int> rcs_;
	bool closed_ = false;
};

inline unsigned CurShard()
{
	return wharf_shard_index(wharf_shard_current());
}

inline Rec MakeRec(Ev ev, wharf_conn *c)
{
	Rec r(ev);
	r.id = wharf_conn_id(c);
	r.shard = CurShard();
	return r;
}

inline void RecRequest(wharf_conn *c, const wharf_conn_request *q, void *arg)
{
	Recorder *rec = static_cast<Recorder *>(arg);
	Rec r = MakeRec(Ev::Request, c);
	r.req = *q;
	r.data.assign((const uint8_t *)q->private_data,
		      (const uint8_t *)q->private_data + q->private_data_len);
	if (rec->Closed())
		return;
	// The hook first: a test that sees the record sees its effects.
	if (rec->on_request) {
		rec->on_request(c, q);
	} else {
		EXPECT_EQ(0, wharf_accept(c, nullptr));
	}
	rec->Add(r);
}

inline void RecEstablished(wharf_conn *c, const wharf_conn_info *i, void *arg)
{
	Recorder *rec = static_cast<Recorder *>(arg);
	Rec r = MakeRec(Ev::Established, c);
	r.info = *i;
	if (i->private_data_len)
		r.data.assign((const uint8_t *)i->private_data,
			      (const uint8_t *)i->private_data +
				      i->private_data_len);
	if (rec->Closed())
		return;
	if (rec->on_established)
		rec->on_established(c, i);
	rec->Add(r);
}

inline void RecRejected(wharf_conn *c, const wharf_conn_reject *j, void *arg)
{
	Rec r = MakeRec(Ev::Rejected, c);
	r.rej = *j;
	r.a = j->reason;
	if (j->private_data_len)
		r.data.assign((const uint8_t *)j->private_data,
			      (const uint8_t *)j->private_data +
				      j->private_data_len);
	static_cast<Recorder *>(arg)->Add(r);
}

inline void RecError(wharf_conn *c, enum wharf_conn_error e, int err, void *arg)
{
	Rec r = MakeRec(Ev::Error, c);
	r.a = (int)e;
	r.b = err;
	static_cast<Recorder *>(arg)->Add(r);
}

inline void RecDisconnected(wharf_conn *c, void *arg)
{
	Recorder *rec = static_cast<Recorder *>(arg);
	if (rec->Closed())
		return;
	rec->Add(MakeRec(Ev::Disconnected, c));
	if (rec->on_disconnected)
		rec->on_disconnected(c);
}

inline int RecRecv(wharf_conn *c, void *buf, const wharf_qp_recv *rx, void *arg)
{
	Rec r = MakeRec(Ev::Recv, c);
	r.a = (int)rx->len;
	r.data.assign((const uint8_t *)buf, (const uint8_t *)buf + rx->len);
	static_cast<Recorder *>(arg)->Add(r);
	return 0;
}

inline const wharf_conn_ops *Recorder::Ops()
{
	static const wharf_conn_ops ops = {
		sizeof(wharf_conn_ops),
		RecRequest,
		RecEstablished,
		RecRejected,
		RecError,
		RecDisconnected,
		RecRecv,
		nullptr,
	};
	return &ops;
}

inline sockaddr_in Addr(uint16_t port)
{
	sockaddr_in a = {};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, wharf_guest::kRxeAddr, &a.sin_addr);
	return a;
}

// Runs @fn on shard @shard and waits for it.
inline void RunOn(wharf_ctx *ctx, unsigned shard, std::function<void()> fn)
{
	struct Call {
		std::function<void()> fn;
		std::promise<void> done;
	} call{std::move(fn), {}};
	auto done = call.done.get_future();
	ASSERT_EQ(0, wharf_shard_send(
			     wharf_ctx_shard(ctx, shard),
			     [](wharf_shard *, void *arg) {
				     Call *c = static_cast<Call *>(arg);
				     c->fn();
				     c->done.set_value();
			     },
			     &call));
	done.wait();
}

// Runs @fn(conn) on the owner shard of @id and waits; conn NULL if gone.
inline void OnConn(wharf_cm *cm, uint64_t id,
		   std::function<void(wharf_conn *)> fn)
{
	struct Call {
		std::function<void(wharf_conn *)> fn;
		std::promise<void> done;
	} call{std::move(fn), {}};
	auto done = call.done.get_future();
	ASSERT_EQ(0, wharf_conn_call(
			     cm, id,
			     [](wharf_conn *c, void *arg) {
				     Call *k = static_cast<Call *>(arg);
				     k->fn(c);
				     k->done.set_value();
			     },
			     &call));
	done.wait();
}

inline struct wharf_cm_stats CmStats(wharf_cm *cm)
{
	struct wharf_cm_stats s = {};
	s.size = sizeof(s);
	EXPECT_EQ(0, wharf_cm_stats(cm, &s));
	return s;
}

inline struct wharf_cm_stats ListenerStats(wharf_listener *l)
{
	struct wharf_cm_stats s = {};
	s.size = sizeof(s);
	EXPECT_EQ(0, wharf_listener_stats(l, &s));
	return s;
}

// The final outcomes of a stats snapshot (each connection has one).
inline uint64_t Finals(const struct wharf_cm_stats &s)
{
	return s.rejected_app + s.rejected_busy + s.rejected_by_peer +
	       s.timed_out + s.unreachable + s.failed + s.disconnected +
	       s.aborted + s.deferred_timed_out + s.deferred_lost;
}

// Polls @pred every 10 ms, bounded; for counters the test cannot wait on.
inline bool Poll(const std::function<bool()> &pred,
		 std::chrono::seconds limit = kWait)
{
	auto end = Clock::now() + limit;
	while (Clock::now() < end) {
		if (pred())
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	return pred();
}

// rxe0's attributes, opened independently of wharf.
inline ibv_device_attr DevAttr()
{
	ibv_device_attr attr = {};
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), wharf_guest::kRxeDev))
			continue;
		ibv_context *v = ibv_open_device(list[i]);
		if (v) {
			EXPECT_EQ(0, ibv_query_device(v, &attr));
			ibv_close_device(v);
		}
	}
	if (list)
		ibv_free_device_list(list);
	EXPECT_GT(attr.max_qp_rd_atom, 0);
	return attr;
}

// Fixture: a context with two shards and its cm.
class CmGuest : public ::testing::Test
{
      protected:
	virtual void EditCmOpts(wharf_cm_opts &)
	{
	}
	virtual void EditResOpts(wharf_qp_res_opts &)
	{
	}

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		wharf_ctx_opts co;
		wharf_ctx_opts_init(&co);
		co.nshards = 2;
		ASSERT_EQ(0, wharf_ctx_create(&co, &ctx_));
		wharf_qp_res_opts ro = {};
		ro.size = sizeof(ro);
		ro.srq_depth = 256;
		ro.recv_credits = 8;
		ro.pool_size = 16;
		EditResOpts(ro);
		wharf_cm_opts mo = {};
		mo.size = sizeof(mo);
		mo.res_opts = &ro;
		EditCmOpts(mo);
		ASSERT_EQ(0, wharf_cm_create(ctx_, &mo, &cm_));
	}

	// A recorder that lives until the cm is gone.
	Recorder *NewRec()
	{
		recs_.emplace_back(new Recorder);
		return recs_.back().get();
	}

	// Keeps @p alive until the cm is gone (state that hooks use).
	template <class T> T *Keep(T *p)
	{
		keep_.emplace_back(p,
				   [](void *q) { delete static_cast<T *>(q); });
		return p;
	}

	void TearDown() override
	{
		for (auto &r : recs_)
			r->Close();
		for (wharf_listener *l : listeners_) {
			EXPECT_EQ(0, wharf_listener_destroy(l));
		}
		if (cm_) {
			EXPECT_EQ(0, wharf_cm_destroy(cm_));
		}
		if (ctx_) {
			EXPECT_EQ(0, wharf_ctx_destroy(ctx_));
		}
		keep_.clear();
		recs_.clear();
	}

	// A listener on rxe0, any port; returns its port.
	uint16_t
	Listen(Recorder *rec,
	       const std::function<void(wharf_listen_opts &)> &edit = nullptr,
	       wharf_listener **out = nullptr)
	{
		sockaddr_in a = Addr(0);
		wharf_listen_opts o;
		wharf_listen_opts_init(&o);
		o.addr = (sockaddr *)&a;
		o.ops = Recorder::Ops();
		o.arg = rec;
		if (edit)
			edit(o);
		wharf_listener *l = nullptr;
		EXPECT_EQ(0, wharf_listen(cm_, &o, &l));
		if (!l)
			return 0;
		listeners_.push_back(l);
		if (out)
			*out = l;
		return wharf_listener_port(l);
	}

	// Starts a connection to rxe0:@port; returns its id (0 on error).
	uint64_t
	Connect(Recorder *rec, uint16_t port,
		const wharf_conn_param *param = nullptr,
		const std::function<void(wharf_connect_opts &)> &edit = nullptr)
	{
		sockaddr_in a = Addr(port);
		wharf_connect_opts o;
		wharf_connect_opts_init(&o);
		o.dst = (sockaddr *)&a;
		o.ops = Recorder::Ops();
		o.arg = rec;
		o.param = param;
		o.shard = 0;
		if (edit)
			edit(o);
		uint64_t id = 0;
		EXPECT_EQ(0, wharf_connect(cm_, &o, &id));
		return id;
	}

	void Destroy(uint64_t id)
	{
		OnConn(cm_, id, [](wharf_conn *c) {
			if (c) {
				EXPECT_EQ(0, wharf_conn_destroy(c));
			}
		});
	}

	// Destroys @ids, then every passive connection @srv was asked for.
	void DestroyWithPeers(const std::vector<uint64_t> &ids, Recorder &srv)
	{
		for (uint64_t id : ids)
			Destroy(id);
		for (const Rec &r : srv.All())
			if (r.ev == Ev::Request)
				Destroy(r.id);
	}

	wharf_ctx *ctx_ = nullptr;
	wharf_cm *cm_ = nullptr;
	std::vector<wharf_listener *> listeners_;
	std::vector<std::unique_ptr<Recorder>> recs_;
	std::vector<std::unique_ptr<void, void (*)(void *)>> keep_;
};

// ------------------------------------------------------------------------
// A raw librdmacm peer on its own event channel (blocking calls, bounded
// waits).  QPs are created with verbs, never attached to the rdma_cm_id,
// unless a test asks for rdma_create_qp().
// ------------------------------------------------------------------------
class RawPeer
{
      public:
	RawPeer()
	{
		ch_ = rdma_create_event_channel();
		EXPECT_NE(nullptr, ch_);
	}
	~RawPeer()
	{
		for (rdma_cm_id *id : ids_) {
			if (id->qp)
				rdma_destroy_qp(id);
			rdma_destroy_id(id);
		}
		for (ibv_qp *qp : qps_)
			ibv_destroy_qp(qp);
		if (mr_)
			ibv_dereg_mr(mr_);
		if (cq_)
			ibv_destroy_cq(cq_);
		if (pd_)
			ibv_dealloc_pd(pd_);
		if (ch_)
			rdma_destroy_event_channel(ch_);
	}

	// Next event (bounded); copies it and acks; returns its type or -1.
	int Next(rdma_cm_event *copy = nullptr, rdma_cm_id **id = nullptr,
		 std::vector<uint8_t> *pdata = nullptr, int secs = 60)
	{
		pollfd p = {ch_->fd, POLLIN, 0};
		if (poll(&p, 1, secs * 1000) != 1)
			return -1;
		rdma_cm_event *ev;
		if (rdma_get_cm_event(ch_, &ev))
			return -1;
		int type = ev->event;
		if (copy)
			*copy = *ev;
		if (id)
			*id = ev->id;
		if (pdata) {
			const void *d = ev->param.conn.private_data;
			pdata->assign((const uint8_t *)d,
				      (const uint8_t *)d +
					      ev->param.conn.private_data_len);
		}
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST)
			ids_.push_back(ev->id);
		rdma_ack_cm_event(ev);
		return type;
	}

	// Waits for an event of @type, skipping others; false on timeout.
	bool Expect(int type, rdma_cm_event *copy = nullptr,
		    rdma_cm_id **id = nullptr,
		    std::vector<uint8_t> *pdata = nullptr)
	{
		for (int i = 0; i < 16; i++) {
			int t = Next(copy, id, pdata);
			if (t == type)
				return true;
			if (t < 0)
				return false;
		}
		return false;
	}

	rdma_cm_id *NewId()
	{
		rdma_cm_id *id = nullptr;
		EXPECT_EQ(0, rdma_create_id(ch_, &id, this, RDMA_PS_TCP));
		if (id)
			ids_.push_back(id);
		return id;
	}

	// Resolves address and route of @id to rxe0:@port.
	bool Resolve(rdma_cm_id *id, uint16_t port)
	{
		sockaddr_in a = Addr(port);
		if (rdma_resolve_addr(id, nullptr, (sockaddr *)&a, 2000) ||
		    !Expect(RDMA_CM_EVENT_ADDR_RESOLVED))
			return false;
		return !rdma_resolve_route(id, 2000) &&
		       Expect(RDMA_CM_EVENT_ROUTE_RESOLVED);
	}

	// PD/CQ/MR on @id's device, once.
	void Verbs(rdma_cm_id *id)
	{
		if (pd_)
			return;
		pd_ = ibv_alloc_pd(id->verbs);
		cq_ = ibv_create_cq(id->verbs, 64, nullptr, nullptr, 0);
		mr_ = ibv_reg_mr(pd_, buf_, sizeof(buf_),
				 IBV_ACCESS_LOCAL_WRITE);
		ASSERT_TRUE(pd_ && cq_ && mr_);
	}

	// An RC QP in INIT for @id, not attached to it.
	ibv_qp *QpInit(rdma_cm_id *id)
	{
		Verbs(id);
		ibv_qp_init_attr ia = {};
		ia.send_cq = ia.recv_cq = cq_;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		ibv_qp *qp = ibv_create_qp(pd_, &ia);
		EXPECT_NE(nullptr, qp);
		if (!qp)
			return nullptr;
		qps_.push_back(qp);
		Modify(id, qp, IBV_QPS_INIT);
		return qp;
	}

	void Modify(rdma_cm_id *id, ibv_qp *qp, ibv_qp_state st)
	{
		ibv_qp_attr attr = {};
		int mask = 0;
		attr.qp_state = st;
		ASSERT_EQ(0, rdma_init_qp_attr(id, &attr, &mask));
		mask &= ~0xe00000;
		ASSERT_EQ(0, ibv_modify_qp(qp, &attr, mask));
	}

	// Posts a SEND of @msg on @qp and waits for its completion.
	bool Send(ibv_qp *qp, const std::string &msg)
	{
		memcpy(buf_, msg.data(), msg.size());
		ibv_sge sge = {(uintptr_t)buf_, (uint32_t)msg.size(),
			       mr_->lkey};
		ibv_send_wr wr = {}, *bad;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (ibv_post_send(qp, &wr, &bad))
			return false;
		auto end = Clock::now() + kWait;
		ibv_wc wc;
		while (Clock::now() < end) {
			int n = ibv_poll_cq(cq_, 1, &wc);
			if (n > 0)
				return wc.status == IBV_WC_SUCCESS;
			std::this_thread::sleep_for(
				std::chrono::milliseconds(1));
		}
		return false;
	}

	// Listens on rxe0, any port; returns the port.
	uint16_t Listen()
	{
		rdma_cm_id *id = NewId();
		sockaddr_in a = Addr(0);
		EXPECT_EQ(0, rdma_bind_addr(id, (sockaddr *)&a));
		EXPECT_EQ(0, rdma_listen(id, 16));
		return ntohs(rdma_get_src_port(id));
	}

	// Accepts @id with a QP created on it (rdma_create_qp).
	void AcceptWithQp(rdma_cm_id *id)
	{
		Verbs(id);
		ibv_qp_init_attr ia = {};
		ia.send_cq = ia.recv_cq = cq_;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		ASSERT_EQ(0, rdma_create_qp(id, pd_, &ia));
		ASSERT_EQ(0, rdma_accept(id, nullptr));
	}

	rdma_event_channel *ch_ = nullptr;
	ibv_pd *pd_ = nullptr;
	ibv_cq *cq_ = nullptr;
	ibv_mr *mr_ = nullptr;
	char buf_[4096] = {};
	std::vector<rdma_cm_id *> ids_;
	std::vector<ibv_qp *> qps_;
};

} // namespace wharf_cm_test

#endif
