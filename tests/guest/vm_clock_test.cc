/*
 * The guest's clock: every timing in the guest suite and the benchmarks
 * (wharf's step stamps, timers, fio, the kernel's own timekeeping) reads
 * it.  tools/vm/run.sh boots the TCG guest with tsc=reliable so that the
 * kernel keeps the TSC (a vDSO read) instead of falling back to the HPET
 * (a syscall plus an emulated MMIO read per clock_gettime).  That is only
 * sound if the vCPUs' TSCs agree: these tests check the clocksource and
 * that CLOCK_MONOTONIC never steps back, neither for a thread hopping
 * between CPUs nor between two threads pinned to different CPUs that
 * hand each other their latest reading.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/guest/guest_env.h"

namespace
{

uint64_t mono_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

std::vector<int> allowed_cpus()
{
	cpu_set_t set;
	std::vector<int> cpus;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				cpus.push_back(i);
	return cpus;
}

bool pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

TEST(VmClock, ClocksourceIsReadWithoutATrap)
{
	WHARF_REQUIRE_GUEST();
	std::ifstream f("/sys/devices/system/clocksource/clocksource0/"
			"current_clocksource");
	std::string src;
	ASSERT_TRUE(std::getline(f, src));
	// tsc under TCG (tools/vm/run.sh), kvm-clock under KVM; hpet or
	// acpi_pm mean the kernel dropped the TSC.
	EXPECT_TRUE(src == "tsc" || src == "kvm-clock") << src;
}

TEST(VmClock, MonotonicForAThreadHoppingBetweenCpus)
{
	WHARF_REQUIRE_GUEST();
	std::vector<int> cpus = allowed_cpus();
	ASSERT_GE(cpus.size(), 2u) << "the guest has 2 vCPUs";
	// Its own thread: the test's main thread keeps every CPU.
	uint64_t back = 0, worst = 0;
	bool pinned_ok = true;
	std::thread hopper([&] {
		uint64_t last = 0;
		for (int i = 0; i < 4000; i++) {
			if (!pin(cpus[i % cpus.size()]))
				pinned_ok = false;
			uint64_t t = mono_ns();
			if (t < last) {
				back++;
				if (last - t > worst)
					worst = last - t;
			}
			last = t;
		}
	});
	hopper.join();
	EXPECT_TRUE(pinned_ok);
	EXPECT_EQ(0u, back) << "worst step back " << worst << " ns";
}

TEST(VmClock, MonotonicBetweenThreadsOnDifferentCpus)
{
	WHARF_REQUIRE_GUEST();
	std::vector<int> cpus = allowed_cpus();
	ASSERT_GE(cpus.size(), 2u);
	// Each thread publishes its reading; the other reads its own clock
	// after seeing it, so its reading must not be earlier.
	std::atomic<uint64_t> published{0};
	std::atomic<uint64_t> back{0};
	std::atomic<bool> pinned_ok{true};
	auto run = [&](int cpu) {
		if (!pin(cpu))
			pinned_ok = false;
		for (int i = 0; i < 20000; i++) {
			uint64_t seen =
				published.load(std::memory_order_acquire);
			uint64_t t = mono_ns();
			if (t < seen)
				back.fetch_add(1, std::memory_order_relaxed);
			uint64_t cur = seen;
			while (cur < t &&
			       !published.compare_exchange_weak(
				       cur, t, std::memory_order_release,
				       std::memory_order_acquire)) {
			}
		}
	};
	std::thread a(run, cpus[0]), b(run, cpus[1]);
	a.join();
	b.join();
	EXPECT_TRUE(pinned_ok.load());
	EXPECT_EQ(0u, back.load());
}

} // namespace
