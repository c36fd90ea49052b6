/*
 * Loopback scaffolding for qp's guest tests and benchmarks.
 *
 * One process plays both ends of every connection over rxe0: a wharf
 * context with two shards, a wharf_qp_dev on the device, one wharf_qp_res
 * per shard (shard 0 = the server side, shard 1 = the client side).  The
 * RDMA CM is driven with raw librdmacm from the calling thread, standing in
 * for the cm layer: ids carry no QP, the wharf_qp's number and SRQ flag go
 * into the conn_param (negotiated with cm/conn_param.h), the passive side
 * does INIT/RTR/RTS before rdma_accept, the active side INIT before
 * rdma_connect and RTR/RTS + rdma_establish on CONNECT_RESPONSE, COMM_EST
 * is forwarded with rdma_notify, and TIMEWAIT_EXIT releases the QP.
 *
 * Every wharf_qp call runs on its shard through Env::on(), which blocks the
 * calling thread until the shard ran it.  Peer callbacks run on the shard.
 */
#ifndef WHARF_TESTS_GUEST_QP_LOOPBACK_H
#define WHARF_TESTS_GUEST_QP_LOOPBACK_H

#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <wharf/core.h>
#include <wharf/qp.h>

extern "C" {
#include "cm/conn_param.h"
}

namespace qpl
{

constexpr unsigned kSrv = 0; /* shard and res of the passive side */
constexpr unsigned kCli = 1; /* shard and res of the active side */

enum PeerState {
	P_NEW = 0,
	P_CONNECTING,
	P_ESTABLISHED,
	P_REJECTED, /* the peer (or we, busy) rejected the connection */
	P_FAILED,   /* a CM or QP step failed; see cm_err */
	P_DISCONNECTED,
};

class Env;

/*
 * One end of one connection.  Tests derive from it to handle data; the
 * virtual callbacks run on the end's shard thread.
 */
class Peer
{
      public:
	virtual ~Peer() = default;
	/* on_recv: return 0 or WHARF_QP_RECV_KEEP. */
	virtual int recv(void *buf, const wharf_qp_recv &rx);
	virtual void send_done(wharf_wr *wr);
	/* Default: count it and close the QP. */
	virtual void error(ibv_wc_status status);
	/* Default: COMM_EST -> rdma_notify(). */
	virtual void async(ibv_event_type event);
	virtual void closed();

	Env *env = nullptr;
	unsigned side = kCli;
	unsigned index = 0; /* client index, carried in the private data */
	rdma_cm_id *id = nullptr;
	wharf_qp *qp = nullptr;
	uint32_t qpn = 0;

	/* What to ask for (set before connecting). */
	wharf_qp_opts qopts{};	   /* ops/arg are filled in by Env */
	bool custom_param = false; /* else librdmacm's NULL defaults */
	wcm_conn_param param{};	   /* depths, retry, rnr_retry, ... */
	wcm_role role = WCM_ROLE_CUSTOM;
	uint32_t queue_depth = 0; /* TARGET preset */
	unsigned explicit_mask = 0;
	wharf_qp_fate fate_on_timewait = WHARF_QP_FATE_TIMEWAIT_EXIT;
	/*
	 * Release with @fate_on_timewait as soon as this end hangs up or
	 * sees DISCONNECTED, instead of at TIMEWAIT_EXIT (breaks the
	 * quarantine rule: negative tests).
	 */
	bool release_at_disconnect = false;
	/* On DISCONNECTED, do not answer with the DREP (see answer()). */
	bool hold_drep = false;

	/* What happened (written by the CM thread or the shard). */
	std::atomic<int> state{P_NEW};
	std::atomic<int> reject_status{-1};
	std::atomic<int> reject_busy{-1}; /* wcm_rej_busy_decode() result */
	std::atomic<unsigned> reject_busy_reason{0};
	std::atomic<int> cm_err{0};
	std::atomic<bool> timewait{false};
	std::atomic<bool> released{false};
	std::atomic<int> closed_calls{0};
	std::atomic<int> errors{0};
	std::atomic<int> last_error{IBV_WC_SUCCESS};
	std::atomic<int> comm_est{0};
	uint8_t resp = 0; /* depths applied to the QP */
	uint8_t init = 0;
	bool we_disconnected = false;
};

/* Memory registered on the device's PD. */
struct Mr {
	void *buf = nullptr;
	size_t len = 0;
	ibv_mr *mr = nullptr;
	Mr() = default;
	Mr(const Mr &) = delete;
	Mr &operator=(const Mr &) = delete;
	~Mr();
	bool reg(ibv_pd *pd, size_t bytes, int access);
	void reset(); /* deregister and free */
	char *at(size_t off) const
	{
		return (char *)buf + off;
	}
};

class Env
{
      public:
	Env() = default;
	Env(const Env &) = delete;
	Env &operator=(const Env &) = delete;
	~Env();

	/*
	 * Creates the context (2 shards), listens on rxe0 and creates the
	 * device and both resources.  NULL options = defaults.  Returns ""
	 * or what failed.
	 */
	std::string start(const wharf_qp_res_opts *srv,
			  const wharf_qp_res_opts *cli,
			  wharf_poll_mode mode = WHARF_POLL_EVENT);
	/* Tears everything down; returns "" or what failed. */
	std::string stop();

	/* Runs @fn on shard @shard and waits for it. */
	void on(unsigned shard, const std::function<void()> &fn);
	struct wharf_qp_res_stats stats(unsigned side);
	const ibv_device_attr *attr() const;
	wcm_dev_limits limits() const;

	/* Takes ownership; returns the raw pointer. */
	Peer *add(std::unique_ptr<Peer> p);
	/* Makes the server end for a request; default: a plain Peer. */
	std::function<std::unique_ptr<Peer>(const wcm_conn_param &req,
					    unsigned client_index)>
		server_factory;

	/* Starts connecting @clients (pipelined). */
	void connect(const std::vector<Peer *> &clients);
	/*
	 * Handles CM events until @done() holds; false after @timeout_s
	 * without it (a liveness bound, not a performance check).
	 */
	bool pump(const std::function<bool()> &done, int timeout_s = 120);
	/* connect() + pump() until every client is established or failed. */
	bool connect_all(const std::vector<Peer *> &clients,
			 int timeout_s = 120);
	/*
	 * The client ends (or, with @from_server, the server ends) of
	 * @clients disconnect; pump until both ends of each saw DISCONNECTED
	 * and (if @wait_timewait) TIMEWAIT_EXIT.
	 */
	bool disconnect_all(const std::vector<Peer *> &clients,
			    bool wait_timewait, bool from_server = false,
			    int timeout_s = 120);
	/* This end sends the DREQ (rdma_disconnect) and closes its QP. */
	void hang_up(Peer *p);
	/* Sends the DREP a hold_drep end held back. */
	void answer(Peer *p);
	/* The server end of client @index, or nullptr. */
	Peer *server_of(unsigned index) const;
	/* Destroys the CM ids of finished peers and forgets them. */
	void reap_peers();

	wharf_ctx *ctx = nullptr;
	wharf_qp_dev *dev = nullptr;
	wharf_qp_res *res[2] = {nullptr, nullptr};
	std::vector<std::unique_ptr<Peer>> peers;
	std::atomic<int> stale_rejects{0};  /* REJECTED with reason 10 */
	std::atomic<int> busy_rejects{0};   /* we rejected: receive budget */
	std::vector<uint32_t> qpns_used[2]; /* QPNs handed out per side */
	/*
	 * With @time_accepts, each accepted request records, in nanoseconds,
	 * the time its shard spent in wharf_qp_take() and in
	 * wharf_qp_cm_accept_ready(), and the time rdma_accept() took.
	 */
	bool time_accepts = false;
	std::vector<uint64_t> accept_take_ns, accept_modify_ns, accept_cm_ns;

      private:
	void handle(rdma_cm_event *ev);
	void client_connect(Peer *p);
	void server_request(rdma_cm_event *ev);
	void client_response(Peer *p, const rdma_conn_param &cp);
	void finish_qp(Peer *p, bool release_unknown);
	void release_early(Peer *p);
	bool take(Peer *p, uint64_t *ns = nullptr);

	rdma_event_channel *sch_ = nullptr, *cch_ = nullptr;
	rdma_cm_id *listen_ = nullptr;
	sockaddr_in addr_{};
};

/* A counter of rxe0's port 1 (/sys/.../hw_counters/@name), or -1. */
long long hw_counter(const char *name);

} // namespace qpl

#endif
