/* Loopback scaffolding for qp's guest tests and benchmarks; see the header. */
#include "tests/guest/qp_loopback.h"

#include <arpa/inet.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

extern "C" {
#include "cm/rej_busy.h"
}

namespace qpl
{

namespace
{

constexpr const char *kAddr = "198.18.0.1";
constexpr int kResolveMs = 20000;

int t_recv(wharf_qp *, void *buf, const wharf_qp_recv *rx, void *arg)
{
	return static_cast<Peer *>(arg)->recv(buf, *rx);
}

void t_send_done(wharf_qp *, wharf_wr *wr, void *arg)
{
	static_cast<Peer *>(arg)->send_done(wr);
}

void t_error(wharf_qp *, ibv_wc_status status, void *arg)
{
	Peer *p = static_cast<Peer *>(arg);
	p->errors++;
	p->last_error = status;
	p->error(status);
}

void t_async(wharf_qp *, ibv_event_type event, void *arg)
{
	static_cast<Peer *>(arg)->async(event);
}

void t_closed(wharf_qp *, void *arg)
{
	Peer *p = static_cast<Peer *>(arg);
	p->closed_calls++;
	p->closed();
}

const wharf_qp_ops kOps = {
	sizeof(wharf_qp_ops), t_recv, t_send_done, t_error, t_async, t_closed};

struct OnMsg {
	const std::function<void()> *fn;
	std::promise<void> done;
};

void on_msg(wharf_shard *, void *arg)
{
	OnMsg *m = static_cast<OnMsg *>(arg);
	(*m->fn)();
	m->done.set_value();
}

uint64_t now_ns()
{
	return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

std::string err(const char *what, int e)
{
	return std::string(what) + ": " + std::to_string(e);
}

} // namespace

int Peer::recv(void *, const wharf_qp_recv &)
{
	return 0;
}

void Peer::send_done(wharf_wr *)
{
}

void Peer::error(ibv_wc_status)
{
	wharf_qp_close(qp);
}

void Peer::async(ibv_event_type event)
{
	if (event == IBV_EVENT_COMM_EST) {
		comm_est++;
		rdma_notify(id, event);
	}
}

void Peer::closed()
{
}

Mr::~Mr()
{
	reset();
}

void Mr::reset()
{
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	mr = nullptr;
	buf = nullptr;
}

bool Mr::reg(ibv_pd *pd, size_t bytes, int access)
{
	len = bytes;
	buf = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
	if (!buf)
		return false;
	memset(buf, 0, bytes);
	mr = ibv_reg_mr(pd, buf, bytes, access);
	return mr != nullptr;
}

long long hw_counter(const char *name)
{
	std::string path =
		std::string("/sys/class/infiniband/rxe0/ports/1/hw_counters/") +
		name;
	FILE *f = fopen(path.c_str(), "r");
	long long v = -1;
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

Env::~Env()
{
	if (ctx)
		stop();
}

void Env::on(unsigned shard, const std::function<void()> &fn)
{
	OnMsg m{&fn, {}};
	auto fut = m.done.get_future();
	int e;
	while ((e = wharf_shard_send(wharf_ctx_shard(ctx, shard), on_msg,
				     &m)) == -EAGAIN)
		std::this_thread::yield();
	if (e) {
		fprintf(stderr, "qpl: wharf_shard_send: %d\n", e);
		abort();
	}
	fut.wait();
}

std::string Env::start(const wharf_qp_res_opts *srv,
		       const wharf_qp_res_opts *cli, wharf_poll_mode mode)
{
	wharf_ctx_opts co;
	int e;

	wharf_ctx_opts_init(&co);
	co.nshards = 2;
	co.poll_mode = mode;
	co.device = "rxe0";
	if ((e = wharf_ctx_create(&co, &ctx)))
		return err("wharf_ctx_create", e);
	sch_ = rdma_create_event_channel();
	cch_ = rdma_create_event_channel();
	if (!sch_ || !cch_)
		return "rdma_create_event_channel";
	if (rdma_create_id(sch_, &listen_, nullptr, RDMA_PS_TCP))
		return err("rdma_create_id", errno);
	addr_.sin_family = AF_INET;
	inet_pton(AF_INET, kAddr, &addr_.sin_addr);
	if (rdma_bind_addr(listen_, (sockaddr *)&addr_))
		return err("rdma_bind_addr", errno);
	if (rdma_listen(listen_, 0))
		return err("rdma_listen", errno);
	addr_.sin_port = rdma_get_src_port(listen_);
	if (!listen_->verbs)
		return "listen id has no device";
	if ((e = wharf_qp_dev_open(ctx, listen_->verbs, nullptr, &dev)))
		return err("wharf_qp_dev_open", e);
	const wharf_qp_res_opts *o[2] = {srv, cli};
	for (unsigned s = 0; s < 2; s++) {
		on(s, [&, s] {
			e = wharf_qp_res_create(dev, wharf_ctx_shard(ctx, s),
						o[s], &res[s]);
		});
		if (e)
			return err("wharf_qp_res_create", e);
	}
	if (!server_factory)
		server_factory = [](const wcm_conn_param &, unsigned) {
			return std::make_unique<Peer>();
		};
	return "";
}

const ibv_device_attr *Env::attr() const
{
	return wharf_qp_dev_attr(dev);
}

wcm_dev_limits Env::limits() const
{
	wcm_dev_limits l{};
	wcm_dev_limits_init(&l, attr()->max_qp_rd_atom,
			    attr()->max_qp_init_rd_atom);
	return l;
}

struct wharf_qp_res_stats Env::stats(unsigned side)
{
	struct wharf_qp_res_stats st {
	};
	st.size = sizeof(st);
	on(side, [&] { wharf_qp_res_stats(res[side], &st); });
	return st;
}

Peer *Env::add(std::unique_ptr<Peer> p)
{
	p->env = this;
	peers.push_back(std::move(p));
	return peers.back().get();
}

Peer *Env::server_of(unsigned index) const
{
	for (auto &p : peers)
		if (p->side == kSrv && p->index == index)
			return p.get();
	return nullptr;
}

bool Env::take(Peer *p, uint64_t *ns)
{
	int e = 0;
	p->qopts.size = sizeof(p->qopts);
	p->qopts.ops = &kOps;
	p->qopts.arg = p;
	on(p->side, [&] {
		uint64_t t0 = now_ns();
		e = wharf_qp_take(res[p->side], &p->qopts, &p->qp);
		if (ns)
			*ns = now_ns() - t0;
		if (!e)
			p->qpn = wharf_qp_num(p->qp);
	});
	if (e) {
		p->cm_err = e;
		return false;
	}
	qpns_used[p->side].push_back(p->qpn);
	return true;
}

void Env::connect(const std::vector<Peer *> &clients)
{
	for (Peer *p : clients) {
		p->side = kCli;
		p->state = P_CONNECTING;
		if (rdma_create_id(cch_, &p->id, p, RDMA_PS_TCP) ||
		    rdma_resolve_addr(p->id, nullptr, (sockaddr *)&addr_,
				      kResolveMs)) {
			p->cm_err = -errno;
			p->state = P_FAILED;
		}
	}
}

void Env::client_connect(Peer *p)
{
	wcm_conn_param want = p->param, out{};
	wcm_dev_limits lim = limits();
	rdma_conn_param rp{};
	uint32_t idx = htonl(p->index);
	int e = 0;

	if (!take(p)) {
		p->state = P_FAILED;
		return;
	}
	on(kCli, [&] { e = wharf_qp_cm_init(p->qp, p->id); });
	if (!e && p->role != WCM_ROLE_CUSTOM)
		e = wcm_conn_param_preset(p->role, p->queue_depth, &lim,
					  nullptr, p->explicit_mask, &want);
	want.private_data = &idx;
	want.private_data_len = sizeof(idx);
	if (!p->custom_param && p->role == WCM_ROLE_CUSTOM) {
		want.responder_resources = WCM_RD_ATOM_DEV_MAX;
		want.initiator_depth = WCM_RD_ATOM_DEV_MAX;
		want.retry_count = 7;
		want.rnr_retry_count = 7;
	}
	wcm_qp_info qi = {p->qpn, (uint8_t)wharf_qp_uses_srq(p->qp)};
	if (!e)
		e = wcm_conn_param_connect(&want, WCM_PS_RC, &lim, &qi, &out);
	if (!e)
		e = wcm_conn_param_to_rdma(&out, &rp);
	if (!e && rdma_connect(p->id, &rp))
		e = -errno;
	if (e) {
		p->cm_err = e;
		p->state = P_FAILED;
		finish_qp(p, true);
	}
}

void Env::server_request(rdma_cm_event *ev)
{
	wcm_conn_param req{}, want{}, out{};
	wcm_pdata pd{};
	rdma_cm_id *id = ev->id;
	uint32_t idx = 0;
	int e = wcm_conn_param_recv(&ev->param.conn, &req, &pd);

	rdma_ack_cm_event(ev);
	if (!e && pd.len >= 4) {
		memcpy(&idx, pd.bytes, 4);
		idx = ntohl(idx);
	}
	Peer *p = add(server_factory(req, idx));
	p->side = kSrv;
	p->index = idx;
	p->id = id;
	id->context = p;
	p->state = P_CONNECTING;
	uint64_t take_ns = 0, modify_ns = 0;
	if (!take(p, time_accepts ? &take_ns : nullptr)) {
		uint8_t rej[WCM_BUSY_LEN];
		wcm_rej_busy busy{};
		busy.reason = WCM_BUSY_RECV_BUDGET;
		busy.retry_after_ms = 100;
		if (p->cm_err == -EBUSY) {
			busy_rejects++;
			wcm_rej_busy_encode(&busy, rej, sizeof(rej), nullptr);
			rdma_reject(id, rej, sizeof(rej));
		} else {
			rdma_reject(id, nullptr, 0);
		}
		p->state = P_REJECTED;
		return;
	}
	wcm_dev_limits lim = limits();
	want = p->param;
	if (p->role != WCM_ROLE_CUSTOM)
		e = wcm_conn_param_preset(p->role, p->queue_depth, &lim, &req,
					  p->explicit_mask, &want);
	wcm_qp_info qi = {p->qpn, (uint8_t)wharf_qp_uses_srq(p->qp)};
	bool use = p->custom_param || p->role != WCM_ROLE_CUSTOM;
	if (!e)
		e = wcm_conn_param_accept(use ? &want : nullptr, &req,
					  WCM_PS_RC, &lim, &qi, &out);
	if (!e) {
		p->resp = out.responder_resources;
		p->init = out.initiator_depth;
		on(kSrv, [&] {
			uint64_t t0 = now_ns();
			e = wharf_qp_cm_accept_ready(p->qp, id, p->resp,
						     p->init);
			modify_ns = now_ns() - t0;
		});
	}
	rdma_conn_param rp{};
	if (!e)
		e = wcm_conn_param_to_rdma(&out, &rp);
	uint64_t t1 = now_ns();
	if (!e && rdma_accept(id, &rp))
		e = -errno;
	if (!e && time_accepts) {
		accept_take_ns.push_back(take_ns);
		accept_modify_ns.push_back(modify_ns);
		accept_cm_ns.push_back(now_ns() - t1);
	}
	if (e) {
		p->cm_err = e;
		p->state = P_FAILED;
		rdma_reject(id, nullptr, 0);
		finish_qp(p, true);
	}
}

void Env::client_response(Peer *p, const rdma_conn_param &cp)
{
	int e = 0;
	/* The kernel reports the REP's depths in the local view. */
	p->resp = cp.responder_resources;
	p->init = cp.initiator_depth;
	on(kCli,
	   [&] { e = wharf_qp_cm_rtr_rts(p->qp, p->id, p->resp, p->init); });
	if (!e && rdma_establish(p->id))
		e = -errno;
	if (e) {
		p->cm_err = e;
		p->state = P_FAILED;
		rdma_reject(p->id, nullptr, 0);
		finish_qp(p, true);
		return;
	}
	p->state = P_ESTABLISHED;
}

/* Closes the QP; with @release_unknown also releases it (FATE_UNKNOWN). */
void Env::finish_qp(Peer *p, bool release_unknown)
{
	if (!p->qp || p->released)
		return;
	on(p->side, [&] {
		wharf_qp_close(p->qp);
		if (release_unknown &&
		    !wharf_qp_release(p->qp, WHARF_QP_FATE_UNKNOWN))
			p->released = true;
	});
}

void Env::release_early(Peer *p)
{
	if (!p->release_at_disconnect || !p->qp || p->released)
		return;
	on(p->side, [&] {
		if (!wharf_qp_release(p->qp, p->fate_on_timewait))
			p->released = true;
	});
}

void Env::hang_up(Peer *p)
{
	p->we_disconnected = true;
	rdma_disconnect(p->id);
	finish_qp(p, false);
	release_early(p);
}

void Env::answer(Peer *p)
{
	p->hold_drep = false;
	rdma_disconnect(p->id);
}

void Env::handle(rdma_cm_event *ev)
{
	rdma_cm_event_type type = ev->event;
	int status = ev->status;

	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		server_request(ev);
		return;
	}
	Peer *p = static_cast<Peer *>(ev->id->context);
	rdma_conn_param cp = ev->param.conn;
	if (p && type == RDMA_CM_EVENT_REJECTED) {
		wcm_rej_busy busy{};
		p->reject_busy = wcm_rej_busy_decode(
			cp.private_data, cp.private_data_len, &busy);
		p->reject_busy_reason = busy.reason;
	}
	rdma_ack_cm_event(ev);
	if (!p)
		return;
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(p->id, kResolveMs)) {
			p->cm_err = -errno;
			p->state = P_FAILED;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		client_connect(p);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		client_response(p, cp);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		p->state = P_ESTABLISHED;
		break;
	case RDMA_CM_EVENT_REJECTED:
		p->reject_status = status;
		if (status == 10)
			stale_rejects++;
		p->state = P_REJECTED;
		finish_qp(p, true);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (!p->we_disconnected && !p->hold_drep)
			rdma_disconnect(p->id); /* sends the DREP */
		p->state = P_DISCONNECTED;
		finish_qp(p, false);
		release_early(p);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		p->timewait = true;
		if (p->qp && !p->released)
			on(p->side, [&] {
				wharf_qp_close(p->qp);
				if (!wharf_qp_release(p->qp,
						      p->fate_on_timewait))
					p->released = true;
			});
		break;
	default:
		p->cm_err = status ? status : -EIO;
		p->state = P_FAILED;
		finish_qp(p, true);
		break;
	}
}

bool Env::pump(const std::function<bool()> &done, int timeout_s)
{
	auto deadline = std::chrono::steady_clock::now() +
			std::chrono::seconds(timeout_s);
	while (!done()) {
		if (std::chrono::steady_clock::now() > deadline)
			return false;
		pollfd fds[2] = {{sch_->fd, POLLIN, 0}, {cch_->fd, POLLIN, 0}};
		if (poll(fds, 2, 5) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			rdma_cm_event *ev = nullptr;
			if (!(fds[i].revents & POLLIN))
				continue;
			if (!rdma_get_cm_event(i ? cch_ : sch_, &ev))
				handle(ev);
		}
	}
	return true;
}

bool Env::connect_all(const std::vector<Peer *> &clients, int timeout_s)
{
	connect(clients);
	return pump(
		[&] {
			for (Peer *p : clients) {
				int s = p->state;
				if (s == P_CONNECTING)
					return false;
				if (s != P_ESTABLISHED)
					continue;
				Peer *srv = server_of(p->index);
				if (srv && srv->state == P_CONNECTING)
					return false;
			}
			return true;
		},
		timeout_s);
}

bool Env::disconnect_all(const std::vector<Peer *> &clients, bool wait_timewait,
			 bool from_server, int timeout_s)
{
	std::vector<Peer *> ends;
	for (Peer *p : clients) {
		Peer *s = server_of(p->index);
		if (p->state != P_ESTABLISHED || !s)
			continue;
		ends.push_back(p);
		ends.push_back(s);
		hang_up(from_server ? s : p);
	}
	return pump(
		[&] {
			for (Peer *p : ends) {
				if (p->state != P_DISCONNECTED)
					return false;
				if (wait_timewait && !p->timewait)
					return false;
			}
			return true;
		},
		timeout_s);
}

void Env::reap_peers()
{
	std::vector<std::unique_ptr<Peer>> keep;
	for (auto &p : peers) {
		bool done = (p->released || !p->qp) &&
			    (p->state == P_REJECTED || p->state == P_FAILED ||
			     p->timewait);
		if (!done) {
			keep.push_back(std::move(p));
			continue;
		}
		if (p->id)
			rdma_destroy_id(p->id);
	}
	peers.swap(keep);
}

std::string Env::stop()
{
	std::string why;
	if (!ctx)
		return "";
	/* Close and release every QP still owned. */
	for (auto &p : peers)
		finish_qp(p.get(), true);
	for (auto &p : peers)
		if (p->id) {
			rdma_destroy_id(p->id);
			p->id = nullptr;
		}
	for (unsigned s = 0; s < 2; s++) {
		if (!res[s])
			continue;
		auto deadline = std::chrono::steady_clock::now() +
				std::chrono::seconds(60);
		int e = -EBUSY;
		while (e == -EBUSY &&
		       std::chrono::steady_clock::now() < deadline) {
			on(s, [&] { e = wharf_qp_res_destroy(res[s]); });
			if (e == -EBUSY)
				std::this_thread::sleep_for(
					std::chrono::milliseconds(5));
		}
		if (e)
			why = err("wharf_qp_res_destroy", e);
		else
			res[s] = nullptr;
	}
	peers.clear();
	if (dev) {
		int e = wharf_qp_dev_close(dev);
		if (e && why.empty())
			why = err("wharf_qp_dev_close", e);
		dev = nullptr;
	}
	if (listen_)
		rdma_destroy_id(listen_);
	listen_ = nullptr;
	if (sch_)
		rdma_destroy_event_channel(sch_);
	if (cch_)
		rdma_destroy_event_channel(cch_);
	sch_ = cch_ = nullptr;
	wharf_ctx_destroy(ctx);
	ctx = nullptr;
	return why;
}

} // namespace qpl
