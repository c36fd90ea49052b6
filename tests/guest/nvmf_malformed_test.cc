// A misbehaving NVMe-oF host on wharf's own cm/qp API against
// wharf-nvmf-tgt: bad RDMA CM private data gets a REJ with the transport
// status, malformed capsules get error completions (or, when no response
// is possible, a disconnect), a controller whose host stops sending Keep
// Alive is torn down with all its queues, a host process that is killed
// (its kernel disconnects) has every queue reclaimed, and after all of it
// the target still serves a well-formed host and its counters are back to
// zero.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <wharf/cm.h>
#include <wharf/core.h>
#include <wharf/qp.h>

#include "tests/guest/nvmf_guest_util.h"

extern "C" {
#include "proto/nvme/rdma_pdata.h"
#include "proto/nvme/spec.h"
#include "proto/nvme/spec_data.h"
#include "proto/nvme/spec_fabrics.h"
}

namespace
{

using namespace nvmf_guest;

const char kSub[] = "nqn.2024-01.io.wharf:malformed";
const char kHost[] =
	"nqn.2014-08.org.nvmexpress:uuid:0badc0de-0000-4000-8000-000000000001";
constexpr uint16_t kPort = 4421;
constexpr uint32_t kTag = 0x54455354; // "TEST"
constexpr size_t kCapsule = NVME_SQE_SIZE + NVME_CONNECT_DATA_SIZE;

// One host queue: the connection's outcome and the completions received.
struct HostQueue {
	std::mutex lock;
	std::condition_variable cond;
	bool established = false, rejected = false, failed = false,
	     disconnected = false;
	std::vector<uint8_t> rej;
	std::vector<nvme_cqe> cqes;
	uint64_t id = 0;
	// Send buffers (registered on the connection's PD by Prepare()).
	ibv_mr *mr = nullptr;
	uint8_t buf[4][kCapsule];
	struct Wr {
		wharf_wr wr;
	} wrs[4];
	unsigned next = 0;

	template <class P> bool Wait(P pred)
	{
		std::unique_lock<std::mutex> g(lock);
		return cond.wait_for(g, wharf_cm_test::kWait, pred);
	}
	void Set(bool HostQueue::*flag)
	{
		std::lock_guard<std::mutex> g(lock);
		this->*flag = true;
		cond.notify_all();
	}
};

void OnEstablished(wharf_conn *, const wharf_conn_info *, void *arg)
{
	static_cast<HostQueue *>(arg)->Set(&HostQueue::established);
}

void OnRejected(wharf_conn *, const wharf_conn_reject *r, void *arg)
{
	HostQueue *h = static_cast<HostQueue *>(arg);
	std::lock_guard<std::mutex> g(h->lock);
	const uint8_t *p = static_cast<const uint8_t *>(r->private_data);
	if (r->reason == 28 && p)
		h->rej.assign(p, p + r->private_data_len);
	h->rejected = true;
	h->cond.notify_all();
}

void OnError(wharf_conn *, enum wharf_conn_error, int, void *arg)
{
	static_cast<HostQueue *>(arg)->Set(&HostQueue::failed);
}

void OnDisconnected(wharf_conn *, void *arg)
{
	static_cast<HostQueue *>(arg)->Set(&HostQueue::disconnected);
}

int OnRecv(wharf_conn *, void *buf, const wharf_qp_recv *rx, void *arg)
{
	HostQueue *h = static_cast<HostQueue *>(arg);
	std::lock_guard<std::mutex> g(h->lock);
	nvme_cqe c;
	if (rx->len >= sizeof(c)) {
		memcpy(&c, buf, sizeof(c));
		h->cqes.push_back(c);
	}
	h->cond.notify_all();
	return 0;
}

const wharf_conn_ops kOps = {
	.size = sizeof(wharf_conn_ops),
	.on_request = nullptr,
	.on_established = OnEstablished,
	.on_rejected = OnRejected,
	.on_error = OnError,
	.on_disconnected = OnDisconnected,
	.on_recv = OnRecv,
	.on_send_done = nullptr,
};

uint16_t Status(const nvme_cqe &c)
{
	return c.status >> 1;
}

// The host side: its own wharf context and cm, and queues on them.
class HostBase : public ::testing::Test
{
      protected:
	wharf_ctx *ctx_ = nullptr;
	wharf_cm *cm_ = nullptr;
	std::vector<HostQueue *> queues_;

	void SetUp() override
	{
		WHARF_REQUIRE_GUEST();
		wharf_ctx_opts co;
		wharf_ctx_opts_init(&co);
		co.nshards = 1;
		ASSERT_EQ(0, wharf_ctx_create(&co, &ctx_));
		ASSERT_EQ(0, wharf_cm_create(ctx_, nullptr, &cm_));
	}

	void TearDown() override
	{
		for (HostQueue *h : queues_)
			if (h->id)
				OnConn(h->id, [h](wharf_conn *c) {
					if (h->mr)
						ibv_dereg_mr(h->mr);
					h->mr = nullptr;
					if (c)
						wharf_conn_destroy(c);
				});
		if (cm_) {
			EXPECT_EQ(0, wharf_cm_destroy(cm_));
		}
		if (ctx_) {
			EXPECT_EQ(0, wharf_ctx_destroy(ctx_));
		}
		for (HostQueue *h : queues_)
			delete h;
		queues_.clear();
	}

	void OnConn(uint64_t id, std::function<void(wharf_conn *)> fn)
	{
		wharf_cm_test::OnConn(cm_, id, std::move(fn));
	}

	// Connects with @pdata and the host's depths (IRD @ird, ORD 0).
	HostQueue *Connect(const void *pdata, size_t len, uint8_t ird = 16)
	{
		HostQueue *h = new HostQueue();
		sockaddr_in dst = {};
		wharf_connect_opts o;
		wharf_conn_param p = {};

		queues_.push_back(h);
		dst.sin_family = AF_INET;
		dst.sin_port = htons(kPort);
		inet_pton(AF_INET, wharf_guest::kRxeAddr, &dst.sin_addr);
		p.size = sizeof(p);
		p.private_data = pdata;
		p.private_data_len = len;
		p.responder_resources = ird;
		p.initiator_depth = 0;
		p.retry_count = 7;
		p.rnr_retry_count = 7;
		wharf_connect_opts_init(&o);
		o.dst = reinterpret_cast<sockaddr *>(&dst);
		o.param = &p;
		o.ops = &kOps;
		o.arg = h;
		EXPECT_EQ(0, wharf_connect(cm_, &o, &h->id));
		EXPECT_TRUE(h->Wait([h] {
			return h->established || h->rejected || h->failed;
		}));
		return h;
	}

	HostQueue *ConnectQueue(uint16_t qid, uint32_t entries,
				uint16_t cntlid = 0)
	{
		nvme_rdma_cm_req req;
		EXPECT_EQ(0, nvme_rdma_req_build(qid, entries, cntlid, &req));
		return Connect(&req, sizeof(req));
	}

	// Expects a REJ carrying NVMe-oF status @sts.
	void ExpectRej(HostQueue *h, uint16_t sts)
	{
		std::lock_guard<std::mutex> g(h->lock);
		ASSERT_TRUE(h->rejected) << "not rejected";
		ASSERT_GE(h->rej.size(), sizeof(nvme_rdma_cm_rej));
		nvme_rdma_cm_rej r;
		memcpy(&r, h->rej.data(), sizeof(r));
		EXPECT_EQ(0, r.recfmt);
		EXPECT_EQ(sts, r.sts) << nvme_rdma_cm_sts_str(r.sts);
	}

	// Sends @len bytes of capsule @c (an SQE and in-capsule data).
	void Send(HostQueue *h, const void *c, size_t len)
	{
		OnConn(h->id, [&](wharf_conn *conn) {
			ASSERT_NE(nullptr, conn);
			if (!h->mr)
				h->mr = ibv_reg_mr(wharf_conn_pd(conn), h->buf,
						   sizeof(h->buf),
						   IBV_ACCESS_LOCAL_WRITE);
			ASSERT_NE(nullptr, h->mr);
			unsigned i = h->next++ % 4;
			memcpy(h->buf[i], c, len);
			ibv_sge sge = {(uintptr_t)h->buf[i], (uint32_t)len,
				       h->mr->lkey};
			wharf_wr_init(&h->wrs[i].wr, kTag);
			ASSERT_EQ(0, wharf_qp_post_send(wharf_conn_qp(conn),
							&h->wrs[i].wr, &sge, 1,
							false, 0));
		});
	}

	// Sends and waits for completion number @n (1-based) of @h.
	nvme_cqe Exchange(HostQueue *h, const void *c, size_t len)
	{
		size_t n;
		{
			std::lock_guard<std::mutex> g(h->lock);
			n = h->cqes.size() + 1;
		}
		Send(h, c, len);
		EXPECT_TRUE(h->Wait([&] { return h->cqes.size() >= n; }))
			<< "no completion";
		std::lock_guard<std::mutex> g(h->lock);
		return h->cqes.size() >= n ? h->cqes[n - 1] : nvme_cqe{};
	}

	// A Fabrics Connect with in-capsule data: the admin queue's by
	// default, or I/O queue @qid of controller @cntlid.
	static std::vector<uint8_t>
	ConnectCapsule(uint32_t kato, uint8_t sgl_type, uint16_t qid = 0,
		       uint16_t cntlid = NVME_CNTLID_DYNAMIC)
	{
		std::vector<uint8_t> b(kCapsule, 0);
		nvme_connect_cmd cmd = {};
		nvme_connect_data d = {};
		cmd.opc = NVME_OPC_FABRICS;
		cmd.cid = 7;
		cmd.fctype = NVME_FCTYPE_CONNECT;
		cmd.sgl.addr = 0;
		cmd.sgl.unkeyed.len = sizeof(d);
		cmd.sgl.unkeyed.type = sgl_type;
		cmd.qid = qid;
		cmd.sqsize = 31;
		cmd.kato = kato;
		memset(d.hostid, 0x5A, sizeof(d.hostid));
		d.cntlid = cntlid;
		snprintf(d.subnqn, sizeof(d.subnqn), "%s", kSub);
		snprintf(d.hostnqn, sizeof(d.hostnqn), "%s", kHost);
		memcpy(b.data(), &cmd, sizeof(cmd));
		memcpy(b.data() + NVME_SQE_SIZE, &d, sizeof(d));
		return b;
	}

	static uint8_t InCapsule()
	{
		return (uint8_t)(NVME_SGL_TYPE_DATA_BLOCK << 4 |
				 NVME_SGL_SUB_OFFSET);
	}

	// Connects the admin queue and a controller with keep-alive @kato
	// (ms, 0: none); returns the controller ID, 0 on any failure.
	uint16_t ConnectAdmin(uint32_t kato, HostQueue **admin)
	{
		HostQueue *h = *admin = ConnectQueue(0, 32);
		if (!h->established)
			return 0;
		std::vector<uint8_t> cc = ConnectCapsule(kato, InCapsule());
		nvme_cqe c = Exchange(h, cc.data(), cc.size());
		if (Status(c))
			return 0;
		// I/O queues need an enabled controller: CC.EN with the
		// queue entry sizes NVMe-oF fixes (64-byte SQE, 16-byte CQE).
		nvme_prop_cmd set = {};
		set.opc = NVME_OPC_FABRICS;
		set.cid = 8;
		set.fctype = NVME_FCTYPE_PROP_SET;
		set.attrib = NVME_PROP_SIZE_4;
		set.ofst = NVME_PROP_CC;
		set.value = NVME_CC_EN | 6u << 16 | 4u << 20;
		nvme_cqe e = Exchange(h, &set, sizeof(set));
		EXPECT_EQ(0, Status(e)) << std::hex << Status(e);
		return Status(e) ? 0 : (uint16_t)(c.result & 0xFFFF);
	}

	// Connects I/O queue @qid of controller @cntlid; nullptr on failure.
	HostQueue *ConnectIo(uint16_t qid, uint16_t cntlid)
	{
		HostQueue *h = ConnectQueue(qid, 32, cntlid);
		if (!h->established)
			return nullptr;
		std::vector<uint8_t> cc =
			ConnectCapsule(0, InCapsule(), qid, cntlid);
		nvme_cqe c = Exchange(h, cc.data(), cc.size());
		EXPECT_EQ(0, Status(c)) << std::hex << Status(c);
		return Status(c) ? nullptr : h;
	}
};

// The target under test, shared by the suite, with the host side above.
class Malformed : public HostBase
{
      protected:
	static Tgt *tgt_;

	static void SetUpTestSuite()
	{
		if (!wharf_guest::in_guest())
			return;
		tgt_ = new Tgt();
		ASSERT_TRUE(tgt_->Start(
			"nvmf_malformed",
			"listen 198.18.0.1 " + std::to_string(kPort) +
				"\nshards 2\nqueue-depth 32\nio-queues 2\n"
				"subsystem " +
				kSub +
				"\n  namespace 1 ram:1M\n  allow-any-host\n"));
	}

	static void TearDownTestSuite()
	{
		if (!tgt_)
			return;
		EXPECT_TRUE(tgt_->Stop());
		delete tgt_;
		tgt_ = nullptr;
	}

	void SetUp() override
	{
		HostBase::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		ASSERT_NE(nullptr, tgt_);
	}

	void TearDown() override
	{
		HostBase::TearDown();
		if (tgt_) {
			EXPECT_TRUE(tgt_->Alive()) << tgt_->Log();
			EXPECT_TRUE(tgt_->BackToZero());
		}
	}
};

// A host in a process of its own, for the test that kills it.
class HostProcess : public HostBase
{
};

Tgt *Malformed::tgt_ = nullptr;

TEST_F(Malformed, BadPrivateDataIsRejectedWithTheTransportStatus)
{
	nvme_rdma_cm_req req;

	ASSERT_EQ(0, nvme_rdma_req_build(0, 32, 0, &req));
	req.recfmt = 1;
	ExpectRej(Connect(&req, sizeof(req)), NVME_RDMA_CM_INVALID_RECFMT);

	ExpectRej(ConnectQueue(9, 32), NVME_RDMA_CM_INVALID_QID);
	ExpectRej(ConnectQueue(0, 1024), NVME_RDMA_CM_INVALID_HSQSIZE);

	ASSERT_EQ(0, nvme_rdma_req_build(0, 32, 0, &req));
	req.hrqsize = 4;
	ExpectRej(Connect(&req, sizeof(req)), NVME_RDMA_CM_INVALID_HRQSIZE);

	// No private data: the REQ's 56 padded bytes are zeros (hsqsize 0).
	ExpectRej(Connect(nullptr, 0), NVME_RDMA_CM_INVALID_HSQSIZE);

	ASSERT_EQ(0, nvme_rdma_req_build(0, 32, 0, &req));
	ExpectRej(Connect(&req, sizeof(req), 0), NVME_RDMA_CM_INVALID_IRD);

	// An I/O queue naming a controller that does not exist.
	ExpectRej(ConnectQueue(1, 32, 0x0bad), NVME_RDMA_CM_INVALID_CNTLID);

	std::map<std::string, uint64_t> s = tgt_->Stats();
	EXPECT_GE(s["rejected"], 7u);
}

TEST_F(Malformed, BadCapsulesGetErrorStatusesAndTheQueueKeepsServing)
{
	HostQueue *h = ConnectQueue(0, 32);
	ASSERT_TRUE(h->established);

	// An admin command before Connect: Command Sequence Error.
	nvme_sqe sqe = {};
	sqe.opc = 0x06; // Identify
	sqe.flags = NVME_FLAGS_PSDT_SGL;
	sqe.cid = 1;
	nvme_cqe c = Exchange(h, &sqe, sizeof(sqe));
	EXPECT_EQ(1, c.cid);
	EXPECT_NE(0, Status(c));

	// Connect whose SGL descriptor type is undefined.
	std::vector<uint8_t> bad = ConnectCapsule(0, 0xF0);
	c = Exchange(h, bad.data(), bad.size());
	EXPECT_EQ(7, c.cid);
	EXPECT_NE(0, Status(c));

	// The well-formed Connect still works on the same queue.
	std::vector<uint8_t> good = ConnectCapsule(0, InCapsule());
	c = Exchange(h, good.data(), good.size());
	EXPECT_EQ(0, Status(c)) << std::hex << Status(c);
	EXPECT_NE(0u, c.result & 0xFFFF); // the controller ID

	// An opcode no admin command set defines: Invalid Opcode.
	sqe.opc = 0xFF;
	sqe.cid = 2;
	c = Exchange(h, &sqe, sizeof(sqe));
	EXPECT_EQ(2, c.cid);
	EXPECT_NE(0, Status(c));

	// Shorter than an SQE: no response is possible, the queue goes.
	Send(h, &sqe, 20);
	EXPECT_TRUE(h->Wait([h] { return h->disconnected; }));
	std::map<std::string, uint64_t> s = tgt_->Stats();
	EXPECT_GE(s["dropped"], 1u);
}

TEST_F(Malformed, KeepAliveTimeoutTearsTheControllerDownWithEveryQueue)
{
	uint64_t before = tgt_->Stats()["kato_expired"];
	HostQueue *admin = nullptr;
	// 5 s: time to connect the I/O queue before the controller goes.
	uint16_t cntlid = ConnectAdmin(5000, &admin);
	ASSERT_NE(0, cntlid);
	HostQueue *io = ConnectIo(1, cntlid);
	ASSERT_NE(nullptr, io);
	// No Keep Alive follows: the target ends the association, the
	// I/O queue with the admin queue.
	EXPECT_TRUE(admin->Wait([admin] { return admin->disconnected; }));
	EXPECT_TRUE(io->Wait([io] { return io->disconnected; }));
	EXPECT_LT(before, tgt_->Stats()["kato_expired"]);
}

// The host process dies with a controller, an admin and an I/O queue and
// no keep-alive: its kernel sends the disconnects, and the target reclaims
// every queue and the controller (TearDown checks the counters too).
TEST_F(Malformed, AHostProcessThatIsKilledHasEveryQueueReclaimed)
{
	std::string filter = "--gtest_filter=HostProcess."
			     "DISABLED_ConnectsAControllerThenWaitsToBeKilled";
	uint64_t kato_before = tgt_->Stats()["kato_expired"];
	int fds[2];
	ASSERT_EQ(0, pipe2(fds, O_CLOEXEC));
	ASSERT_EQ(0, fcntl(fds[1], F_SETFD, 0));
	std::string fd_env = "WHARF_NVMF_READY_FD=" + std::to_string(fds[1]);
	std::vector<char *> env;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "GTEST_", 6) && strncmp(*e, "XML_OUTPUT", 10))
			env.push_back(*e);
	env.push_back(&fd_env[0]);
	env.push_back(nullptr);
	char self[] = "/proc/self/exe",
	     all[] = "--gtest_also_run_disabled_tests";
	char *argv[] = {self, all, &filter[0], nullptr};
	pid_t pid;
	ASSERT_EQ(0,
		  posix_spawn(&pid, self, nullptr, nullptr, argv, env.data()));
	close(fds[1]);

	// "ready CNTLID" once both queues are connected, EOF if it failed.
	std::string ready;
	pollfd pfd = {fds[0], POLLIN, 0};
	char buf[64];
	ssize_t n = 0;
	if (poll(&pfd, 1, 1000 * (int)wharf_cm_test::kWait.count()) == 1)
		n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	if (n > 0)
		ready.assign(buf, (size_t)n);
	bool connected = ready.rfind("ready ", 0) == 0;
	std::map<std::string, uint64_t> s;
	if (connected)
		s = tgt_->Stats();

	kill(pid, SIGKILL);
	int st = 0;
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(connected) << "host process did not connect: '" << ready
			       << "', status " << st;
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << st;
	EXPECT_EQ(1u, s["ctrls"]);
	EXPECT_EQ(2u, s["queues"]);

	EXPECT_TRUE(tgt_->BackToZero());
	EXPECT_EQ(kato_before, tgt_->Stats()["kato_expired"]);
}

TEST_F(Malformed, AWellFormedHostIsServedAfterAllOfIt)
{
	HostQueue *h = ConnectQueue(0, 32);
	ASSERT_TRUE(h->established);
	std::vector<uint8_t> cc = ConnectCapsule(0, InCapsule());
	EXPECT_EQ(0, Status(Exchange(h, cc.data(), cc.size())));
	OnConn(h->id, [](wharf_conn *c) {
		ASSERT_NE(nullptr, c);
		EXPECT_EQ(0, wharf_disconnect(c));
	});
	EXPECT_TRUE(h->Wait([h] { return h->disconnected; }));
}

// Run by the test above in a child process (--gtest_also_run_disabled_tests,
// WHARF_NVMF_READY_FD set): connects a controller with no keep-alive and an
// I/O queue, says "ready CNTLID" on the descriptor and waits to be killed
// (bounded: it exits by itself after 300 s).
TEST_F(HostProcess, DISABLED_ConnectsAControllerThenWaitsToBeKilled)
{
	const char *fd_env = getenv("WHARF_NVMF_READY_FD");
	if (!fd_env)
		GTEST_SKIP() << "run by AHostProcessThatIsKilled...";
	int fd = atoi(fd_env);
	HostQueue *admin = nullptr;
	uint16_t cntlid = ConnectAdmin(0, &admin);
	ASSERT_NE(0, cntlid);
	ASSERT_NE(nullptr, ConnectIo(1, cntlid));
	std::string msg = "ready " + std::to_string(cntlid) + "\n";
	ASSERT_EQ((ssize_t)msg.size(), write(fd, msg.data(), msg.size()));
	std::this_thread::sleep_for(std::chrono::seconds(300));
	FAIL() << "not killed within 300 s";
}

} // namespace
