/*
 * bench/storm/children.h - the client processes of a wharf variant, as the
 * parent sees them (children.c): spawned as `storm client ...`, talked to
 * over their stdin/stdout (the protocol is in client.c), read with poll,
 * killed (--kill) and reaped.
 */
#ifndef WHARF_BENCH_STORM_CHILDREN_H
#define WHARF_BENCH_STORM_CHILDREN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench/storm/storm.h"

struct child {
	pid_t pid;
	int in, out; /* its stdin (we write), its stdout (we read) */
	unsigned first, count;
	char buf[8192];
	size_t len;
	unsigned progress;
	bool ready, handshakes, ended, eof, victim, killed;
	double cpu_s, heap, teardown_cpu_s;
	uint64_t busy_retried;
	/* Its connect window at the end (0: none), and how often the
	 * adaptive one moved. */
	uint64_t window, window_grows, window_shrinks;
	/* Its disconnects that ended, and of them those that ended on
	 * wharf's disconnect timer (no DREP came). */
	uint64_t disconnected, forced;
};

struct storm_tick_arg {
	const char *name;
	uint64_t go;
	unsigned total;
};

/* Forks and execs `storm client` for @c's range, on CPU @cpu (-1: where
 * the library places it); 0 or -errno. */
int storm_child_spawn(struct child *c, const struct storm_opts *o,
		      uint16_t port, double rate, int cpu);
/* `storm client ARGV[1..]` through the relay at @hostport (relay.c): the
 * socket is @c's in and out, and it has no local pid; 0 or -errno. */
int storm_child_spawn_remote(struct child *c, const char *hostport,
			     char *const argv[]);
/* Sends one command byte ('g' go, 'd' disconnect). */
void storm_child_tell(struct child *c, char ch);
/* Reads the children's lines (records into @conns, by connection index)
 * until @done or @deadline (ns); @tick runs about once a second. */
bool storm_children_pump(struct child *cs, unsigned n, struct storm_conn *conns,
			 bool (*done)(struct child *, unsigned),
			 uint64_t deadline,
			 void (*tick)(struct child *, unsigned, void *),
			 void *arg);
bool storm_children_ready(struct child *cs, unsigned n);
bool storm_children_handshakes(struct child *cs, unsigned n);
bool storm_children_ended(struct child *cs, unsigned n);
/* Progress on stderr; kills the victims once they are mid-storm
 * (@arg: struct storm_tick_arg). */
void storm_children_tick(struct child *cs, unsigned n, void *arg);
/* Kills what still runs, waits for every child, closes the pipes. */
void storm_children_reap(struct child *cs, unsigned n);

#endif
