// The public reader calls of <wharf/cm.h>: a thread registered with
// wharf_rcu_register_thread() holds grace periods (hence the freeing of
// destroyed connections) back while it is online and not quiescent, and
// lets them pass at wharf_rcu_quiescent_state() / _thread_offline().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <urcu/urcu-qsbr.h>

extern "C" {
#include <wharf/cm.h>
}

namespace
{

// Runs a grace period on another thread; done() tells whether it ended.
class GracePeriod
{
      public:
	GracePeriod()
	    : t_([this] {
		      urcu_qsbr_synchronize_rcu();
		      done_ = true;
	      })
	{
	}
	~GracePeriod()
	{
		t_.join();
	}
	bool done() const
	{
		return done_;
	}
	// Whether it ends within @ms (it cannot end while a reader holds it).
	bool EndsWithin(int ms)
	{
		for (int i = 0; i < ms && !done_; i++)
			std::this_thread::sleep_for(
				std::chrono::milliseconds(1));
		return done_;
	}

      private:
	std::atomic<bool> done_{false};
	std::thread t_;
};

TEST(CmRcuApi, RegisterTwiceIsRefused)
{
	ASSERT_EQ(0, wharf_rcu_register_thread());
	EXPECT_EQ(-EALREADY, wharf_rcu_register_thread());
	wharf_rcu_unregister_thread();
	// Unregistered: a second unregister is harmless, registering works.
	wharf_rcu_unregister_thread();
	ASSERT_EQ(0, wharf_rcu_register_thread());
	wharf_rcu_unregister_thread();
}

TEST(CmRcuApi, AnOnlineReaderHoldsGracePeriods)
{
	ASSERT_EQ(0, wharf_rcu_register_thread());
	{
		wharf_rcu_read_lock();
		GracePeriod gp;
		// Held: it cannot end before this thread is quiescent.
		EXPECT_FALSE(gp.EndsWithin(100));
		wharf_rcu_read_unlock();
		EXPECT_FALSE(gp.done());
		wharf_rcu_quiescent_state();
		// Quiescent once: it ends (waiting without announcing more).
		wharf_rcu_thread_offline();
		EXPECT_TRUE(gp.EndsWithin(60000));
		wharf_rcu_thread_online();
	}
	{
		wharf_rcu_thread_offline();
		GracePeriod gp;
		EXPECT_TRUE(gp.EndsWithin(60000)); // offline holds nothing
		wharf_rcu_thread_online();
	}
	wharf_rcu_unregister_thread();
}

} // namespace
