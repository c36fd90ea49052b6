// Torture test for the cm RCU tables: registered reader threads look up by
// ID and by QP while writer threads churn inserts, binds, unbinds and
// removals. A removed object is poisoned (and, under ASan, made
// unaddressable) instead of being freed right away; a reader that ever sees
// a poisoned object, or touches one under ASan, fails the test. Run under
// --config=tsan and --config=asan as well.
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "cm/conn_rcu.h"
#include "cm/conn_table.h"
}

#if defined(__SANITIZE_ADDRESS__)
#define WHARF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WHARF_ASAN 1
#endif
#endif
#ifdef WHARF_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace
{

const uint64_t kLive = 0x4c4956454c495645ull; // "LIVELIVE"
const uint64_t kDead = 0xdeaddeaddeaddeadull;

struct Obj {
	wcm_conn_entry entry;
	uint64_t magic;
	uint64_t id;
	uint32_t dev, qpn;
	bool bound;
	uint64_t pattern[6];
};

uint64_t Pattern(uint64_t id, int i)
{
	return id * 0x9E3779B97F4A7C15ull + (uint64_t)i;
}

// Where "freed" objects go until the end of the test.
std::mutex g_grave_lock;
std::vector<Obj *> g_grave;

void Bury(wcm_conn_entry *e)
{
	Obj *o = caa_container_of(e, Obj, entry);
	o->magic = kDead;
	memset(o->pattern, 0xDB, sizeof(o->pattern));
#ifdef WHARF_ASAN
	ASAN_POISON_MEMORY_REGION(o, sizeof(*o));
#endif
	std::lock_guard<std::mutex> g(g_grave_lock);
	g_grave.push_back(o);
}

void EmptyGrave()
{
	std::lock_guard<std::mutex> g(g_grave_lock);
	for (Obj *o : g_grave) {
#ifdef WHARF_ASAN
		ASAN_UNPOISON_MEMORY_REGION(o, sizeof(*o));
#endif
		delete o;
	}
	g_grave.clear();
}

size_t GraveSize()
{
	std::lock_guard<std::mutex> g(g_grave_lock);
	return g_grave.size();
}

// Reader-side check of an object found by a lookup.
bool Sound(const Obj *o, uint64_t id)
{
	if (o->magic != kLive || o->id != id)
		return false;
	for (int i = 0; i < 6; i++)
		if (o->pattern[i] != Pattern(id, i))
			return false;
	return true;
}

constexpr int kWriters = 2;
constexpr int kReaders = 2;
constexpr int kOpsPerWriter = 20000;
constexpr int kFinalPerWriter = 32;

struct Shared {
	wcm_conn_table *table = nullptr;
	std::atomic<uint64_t> max_seq[kWriters];
	std::atomic<int> writers_done{0};
	std::atomic<long> removed{0};
	std::atomic<long> hits{0};
	std::atomic<long> qp_hits{0};
	std::atomic<long> bad{0};
	std::atomic<long> reader_iters{0};
	std::vector<uint64_t> final_ids[kWriters];
	std::vector<Obj *> final_objs[kWriters];
};

void Writer(Shared *s, int w)
{
	ASSERT_EQ(0, wcm_rcu_register_thread());
	std::mt19937 rng(1000 + w);
	wcm_conn_id_gen gen;
	ASSERT_EQ(0, wcm_conn_id_gen_init(&gen, (unsigned)w + 1));
	std::vector<Obj *> live;
	auto remove_at = [&](size_t i) {
		Obj *o = live[i];
		live[i] = live.back();
		live.pop_back();
		if (o->bound && rng() % 2) {
			ASSERT_EQ(0, wcm_conn_table_unbind_qp(s->table,
							      &o->entry));
			o->bound = false;
		}
		ASSERT_EQ(0, wcm_conn_table_remove(s->table, &o->entry, Bury));
		s->removed++;
	};
	for (int op = 0; op < kOpsPerWriter; op++) {
		if (live.size() < 8 || (live.size() < 256 && rng() % 2)) {
			Obj *o = new Obj();
			uint64_t id;
			ASSERT_EQ(0, wcm_conn_id_gen_next(&gen, &id));
			o->magic = kLive;
			o->id = id;
			o->dev = (uint32_t)w;
			o->qpn = (uint32_t)(wcm_conn_id_seq(id) % 1024) + 1;
			for (int i = 0; i < 6; i++)
				o->pattern[i] = Pattern(id, i);
			ASSERT_EQ(0, wcm_conn_table_insert(s->table, &o->entry,
							   id));
			int rc = wcm_conn_table_bind_qp(s->table, &o->entry,
							o->dev, o->qpn);
			ASSERT_TRUE(rc == 0 || rc == -EEXIST) << rc;
			o->bound = rc == 0;
			live.push_back(o);
			s->max_seq[w].store(wcm_conn_id_seq(id));
		} else {
			remove_at(rng() % live.size());
		}
		wcm_rcu_quiescent_state();
		// Interleave with the readers without relying on timing: every
		// 64 operations, wait until they have done lookups too.
		if (op % 64 == 63) {
			long want = (op / 64 + 1) * 64L;
			while (s->reader_iters.load() < want) {
				wcm_rcu_quiescent_state();
				std::this_thread::yield();
			}
		}
	}
	while (live.size() > kFinalPerWriter)
		remove_at(rng() % live.size());
	for (Obj *o : live) {
		s->final_ids[w].push_back(o->id);
		s->final_objs[w].push_back(o);
	}
	wcm_rcu_unregister_thread();
	s->writers_done++;
}

void Reader(Shared *s, int r)
{
	ASSERT_EQ(0, wcm_rcu_register_thread());
	std::mt19937 rng(2000 + r);
	// Phase 1: random lookups while the writers churn.
	while (s->writers_done.load() < kWriters) {
		int w = rng() % kWriters;
		uint64_t max = s->max_seq[w].load();
		if (!max) {
			wcm_rcu_quiescent_state();
			continue;
		}
		// Mostly recent sequence numbers: those are the live ones.
		uint64_t back = rng() % 512, id;
		uint64_t seq = back < max ? max - back : 1 + rng() % max;
		ASSERT_EQ(0, wcm_conn_id_make((unsigned)w + 1, seq, &id));
		urcu_qsbr_read_lock();
		wcm_conn_entry *e = wcm_conn_table_lookup(s->table, id);
		if (e) {
			Obj *o = caa_container_of(e, Obj, entry);
			if (!Sound(o, id) || wcm_conn_entry_id(e) != id)
				s->bad++;
			s->hits++;
		}
		uint32_t qpn = 1 + rng() % 1024;
		e = wcm_conn_table_lookup_qp(s->table, (uint32_t)w, qpn);
		if (e) {
			Obj *o = caa_container_of(e, Obj, entry);
			if (!Sound(o, o->id) || o->qpn != qpn ||
			    o->dev != (uint32_t)w)
				s->bad++;
			s->qp_hits++;
		}
		urcu_qsbr_read_unlock();
		wcm_rcu_quiescent_state();
		s->reader_iters++;
	}
	// Phase 2: the objects the writers left must all be found.
	for (int w = 0; w < kWriters; w++) {
		for (size_t i = 0; i < s->final_ids[w].size(); i++) {
			uint64_t id = s->final_ids[w][i];
			urcu_qsbr_read_lock();
			wcm_conn_entry *e = wcm_conn_table_lookup(s->table, id);
			EXPECT_EQ(&s->final_objs[w][i]->entry, e);
			if (e && !Sound(caa_container_of(e, Obj, entry), id))
				s->bad++;
			urcu_qsbr_read_unlock();
			wcm_rcu_quiescent_state();
		}
	}
	wcm_rcu_unregister_thread();
}

TEST(CmConnTableTorture, ReadersNeverSeeFreedObjectsUnderChurn)
{
	Shared s;
	for (auto &m : s.max_seq)
		m.store(0);
	ASSERT_EQ(0, wcm_conn_table_create(64, &s.table));
	std::vector<std::thread> threads;
	for (int r = 0; r < kReaders; r++)
		threads.emplace_back(Reader, &s, r);
	for (int w = 0; w < kWriters; w++)
		threads.emplace_back(Writer, &s, w);
	for (auto &t : threads)
		t.join();
	EXPECT_EQ(0, s.bad.load());
	EXPECT_GT(s.removed.load(), 0);
	EXPECT_GT(s.hits.load(), 0); // the readers did meet live objects

	// Tear down: remove what is left, wait for every free.
	ASSERT_EQ(0, wcm_rcu_register_thread());
	long final_count = 0;
	for (int w = 0; w < kWriters; w++) {
		for (Obj *o : s.final_objs[w]) {
			ASSERT_EQ(0, wcm_conn_table_remove(s.table, &o->entry,
							   Bury));
			final_count++;
		}
	}
	wcm_rcu_barrier();
	EXPECT_EQ((size_t)(s.removed.load() + final_count), GraveSize());
	EXPECT_EQ(0, wcm_conn_table_destroy(s.table));
	wcm_rcu_unregister_thread();
	EmptyGrave();
	RecordProperty("hits", (int)s.hits.load());
	RecordProperty("qp_hits", (int)s.qp_hits.load());
}

// A reader holding an entry across its removal keeps it alive until its
// next quiescent state; the free happens only after that.
TEST(CmConnTableTorture, RemovedEntryStaysValidUntilReaderQuiesces)
{
	wcm_conn_table *t;
	ASSERT_EQ(0, wcm_conn_table_create(8, &t));
	ASSERT_EQ(0, wcm_rcu_register_thread());
	Obj *o = new Obj();
	o->magic = kLive;
	o->id = 42;
	for (int i = 0; i < 6; i++)
		o->pattern[i] = Pattern(42, i);
	ASSERT_EQ(0, wcm_conn_table_insert(t, &o->entry, 42));

	std::atomic<int> stage{0};
	std::atomic<bool> sound_after_removal{false};
	std::thread reader([&] {
		ASSERT_EQ(0, wcm_rcu_register_thread());
		urcu_qsbr_read_lock();
		wcm_conn_entry *e = wcm_conn_table_lookup(t, 42);
		stage = 1;
		while (stage.load() != 2)
			std::this_thread::yield();
		// Removed meanwhile, but not freed: we have not quiesced.
		sound_after_removal =
			e && Sound(caa_container_of(e, Obj, entry), 42) &&
			GraveSize() == 0;
		urcu_qsbr_read_unlock();
		wcm_rcu_quiescent_state();
		wcm_rcu_unregister_thread();
	});
	while (stage.load() != 1)
		std::this_thread::yield();
	ASSERT_EQ(0, wcm_conn_table_remove(t, &o->entry, Bury));
	wcm_rcu_thread_offline(); // do not hold up the grace period ourselves
	stage = 2;
	reader.join();
	wcm_rcu_thread_online();
	EXPECT_TRUE(sound_after_removal.load());
	wcm_rcu_barrier();
	EXPECT_EQ(1u, GraveSize());
	EXPECT_EQ(0, wcm_conn_table_destroy(t));
	wcm_rcu_unregister_thread();
	EmptyGrave();
}

} // namespace
