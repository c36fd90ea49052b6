// The core's thread model under concurrency (run it under --config=tsan
// too): an admin queue and two I/O queues of one controller, each driven
// by its own thread as shards would, while a fourth thread adds and
// removes namespaces (raising AERs on the admin queue) and scans
// keep-alive. held_ready hands requests to the admin thread through a
// mutex-protected mailbox, as the binding would with a shard message.
// Fixed iteration counts; no timing.
#include <atomic>
#include <mutex>
#include <thread>

#include "tests/unit/nvmf_test_util.h"

namespace
{

using namespace nvmf_test;

struct Mailbox {
	std::mutex mu;
	std::vector<nvmf_req *> ready;
};

Mailbox *g_mailbox;

void HeldReadyToMailbox(nvmf_queue *, nvmf_req *req, void *)
{
	std::lock_guard<std::mutex> g(g_mailbox->mu);
	g_mailbox->ready.push_back(req);
}

class NvmfThreads : public NvmfTest
{
      protected:
	Mailbox mailbox_;

	void SetUp() override
	{
		nvmf_config cfg;
		char err[256] = "";
		std::string text = DefaultConfig();
		nvmf_tgt_ops ops = {};

		g_mailbox = &mailbox_;
		ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t",
					       &cfg, err, sizeof(err)));
		ops.size = sizeof(ops);
		ops.now_ms = [](void *) -> uint64_t { return 5; };
		ops.held_ready = HeldReadyToMailbox;
		ops.kill = Fake::Kill; // never called: KATO 0, no reset
		ASSERT_EQ(0, nvmf_tgt_create(&cfg, &ops, &fake_, &tgt_, err,
					     sizeof(err)));
		nvmf_config_free(&cfg);
	}
};

TEST_F(NvmfThreads, QueuesOnTheirOwnThreadsWithEvents)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	nvmf_queue *io[2] = {Io(1, cntlid), Io(2, cntlid)};
	const int kIters = 3000;
	std::atomic<bool> events_done{false}, armed{false};
	std::atomic<int> io_errors{0}, aers_done{0};

	auto io_thread = [&](int n) {
		std::vector<uint8_t> buf(4096);
		for (int i = 0; i < kIters; i++) {
			Capsule c = Cmd(i % 2 ? NVME_IO_READ : NVME_IO_WRITE,
					(uint16_t)i, 1);
			c.sqe.cdw10 = (uint32_t)(n * 1000 + i % 500);
			c.sqe.cdw12 = 7; // 8 blocks
			SetKeyed(&c.sqe, buf.data(), 4096);
			Slot s;
			nvmf_act act = Run(io[n], &s, c);
			if ((act != NVMF_ACT_RESPOND &&
			     act != NVMF_ACT_WRITE_RESPOND) ||
			    Status(s.req)) {
				ADD_FAILURE() << "queue " << n << " cmd " << i
					      << ": act " << act << " status 0x"
					      << std::hex << Status(s.req);
				io_errors++;
			}
		}
	};
	auto admin_thread = [&]() {
		std::vector<Slot> aers(4);
		std::vector<uint8_t> buf(4096);
		// Held AERs keep their CIDs; log-page commands take CIDs from
		// a disjoint range so a wrap never reuses an outstanding one
		// (at most 4 + one per raised notice AER CIDs are used).
		uint16_t aer_cid = 1, log_cid = 20000;
		ASSERT_EQ(0, Status(Exec(admin, [] {
				  Capsule c = Cmd(NVME_ADM_SET_FEATURES, 999);
				  c.sqe.cdw10 = NVME_FEAT_ASYNC_EVENT;
				  c.sqe.cdw11 = NVME_OAES_NS_ATTR;
				  return c;
			  }())));
		for (auto &a : aers)
			ASSERT_EQ(NVMF_ACT_HOLD,
				  Run(admin, &a,
				      Cmd(NVME_ADM_ASYNC_EVENT, aer_cid++)));
		auto drain = [&]() {
			std::vector<nvmf_req *> ready;
			{
				std::lock_guard<std::mutex> g(mailbox_.mu);
				ready.swap(mailbox_.ready);
			}
			for (nvmf_req *r : ready) {
				EXPECT_EQ(NVMF_ACT_RESPOND,
					  nvmf_req_resume(admin, r));
				aers_done++;
				Slot *s = nullptr;
				for (auto &a : aers)
					if (&a.req == r)
						s = &a;
				ASSERT_NE(nullptr, s);
				ASSERT_EQ(NVMF_ACT_HOLD,
					  Run(admin, s,
					      Cmd(NVME_ADM_ASYNC_EVENT,
						  aer_cid++)));
			}
		};
		armed = true;
		for (int i = 0; !events_done || i < kIters; i++) {
			Capsule c = Cmd(NVME_ADM_GET_LOG_PAGE, log_cid++);
			c.sqe.cdw10 = NVME_LID_SMART | 127u << 16;
			SetKeyed(&c.sqe, buf.data(), 512);
			uint16_t sts = Status(Exec(admin, c));
			if (sts) {
				ADD_FAILURE() << "SMART log: status 0x"
					      << std::hex << sts;
				io_errors++;
			}
			c = Cmd(NVME_ADM_GET_LOG_PAGE, log_cid++);
			c.sqe.cdw10 = NVME_LID_CHANGED_NS | 1023u << 16;
			SetKeyed(&c.sqe, buf.data(), 4096);
			Exec(admin, c); // clears the list, re-arms notices
			drain();
			if (log_cid > 65000)
				log_cid = 20000;
			ASSERT_LT(aer_cid, 20000); // notices are bounded
		}
		drain(); // events raised after the last pass
	};
	auto event_thread = [&]() {
		while (!armed) // the AERs are outstanding: not a timed wait
			std::this_thread::yield();
		for (uint32_t i = 0; i < 200; i++) {
			uint32_t nsid = 10 + i;
			EXPECT_EQ(0, nvmf_tgt_ns_add_ram(tgt_, kSub, nsid, 4096,
							 512));
			EXPECT_EQ(0, nvmf_tgt_ns_remove(tgt_, kSub, nsid));
			nvmf_tgt_kato_scan(tgt_, 1000 + i);
			EXPECT_EQ(0, nvmf_tgt_check_cntlid(tgt_, 1, cntlid));
			nvmf_tgt_stats st;
			nvmf_tgt_get_stats(tgt_, &st);
		}
		events_done = true;
	};

	std::thread t0(io_thread, 0), t1(io_thread, 1), ta(admin_thread),
		te(event_thread);
	t0.join();
	t1.join();
	te.join();
	ta.join();
	EXPECT_EQ(0, io_errors.load());
	EXPECT_GT(aers_done.load(), 0);
	EXPECT_TRUE(fake_.killed.empty());
	EXPECT_EQ(4u, Stats().held);
}

} // namespace
