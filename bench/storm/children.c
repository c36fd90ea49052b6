/*
 * bench/storm/children.c - the client processes of a wharf variant: spawn
 * (`storm client ...` through /proc/self/exe, pipes close-on-exec so no
 * child holds another's), the line protocol of client.c read with poll,
 * progress and the --kill victims, reaping.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/storm/children.h"
#include "bench/storm/rdma.h"

int storm_child_spawn(struct child *c, const struct storm_opts *o,
		      uint16_t port, double rate, int cpu)
{
	int pin[2], pout[2];
	char sport[16], sfirst[16], scount[16], srate[32], stmo[16], swin[16];
	char scpu[16] = "-";
	const char *smsg = o->msg ? "1" : "0";

	snprintf(sport, sizeof(sport), "%u", port);
	snprintf(sfirst, sizeof(sfirst), "%u", c->first);
	snprintf(scount, sizeof(scount), "%u", c->count);
	snprintf(srate, sizeof(srate), "%.6f", rate);
	snprintf(stmo, sizeof(stmo), "%u", o->client_timeout_ms);
	if (o->window == STORM_WINDOW_NONE)
		snprintf(swin, sizeof(swin), "none");
	else
		snprintf(swin, sizeof(swin), "%u", o->window);
	if (cpu >= 0)
		snprintf(scpu, sizeof(scpu), "%d", cpu);
	fflush(NULL);
	/*
	 * posix_spawn, not fork: no atfork handlers run in this threaded
	 * process (jemalloc's would take every arena lock, which a TSan
	 * build's deadlock detector cannot track), and nothing but exec
	 * happens in the child.  The pipes are close-on-exec; dup2 onto
	 * stdin / stdout clears that for the two the child keeps.
	 */
	posix_spawn_file_actions_t fa;
	char *argv[] = {
		"storm", "client", (char *)o->addr, sport, sfirst, scount,
		srate,	 stmo,	   (char *)smsg,    swin,  scpu,   NULL};
	int err;

	if (o->clients_at)
		return storm_child_spawn_remote(c, o->clients_at, argv);
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC))
		return -errno;
	err = posix_spawn_file_actions_init(&fa);

	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
	if (!err)
		err = posix_spawn(&c->pid, "/proc/self/exe", &fa, NULL, argv,
				  environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		close(pin[0]);
		close(pin[1]);
		close(pout[0]);
		close(pout[1]);
		c->pid = -1;
		return -err;
	}
	close(pin[0]);
	close(pout[1]);
	c->in = pin[1];
	c->out = pout[0];
	return 0;
}

void storm_child_tell(struct child *c, char ch)
{
	if (c->in >= 0 && !c->killed && write(c->in, &ch, 1) != 1) {
		/* a dead child: its EOF will say so */
	}
}

/* One line of a child. */
static void child_line(struct child *c, char *line, struct storm_conn *conns)
{
	if (!strcmp(line, "ready")) {
		c->ready = true;
	} else if (!strncmp(line, "p ", 2)) {
		c->progress = (unsigned)strtoul(line + 2, NULL, 10);
	} else if (!strncmp(line, "handshakes ", 11)) {
		c->handshakes = true;
		c->progress = (unsigned)strtoul(line + 11, NULL, 10);
	} else if (!strncmp(line, "c ", 2)) {
		char *p = line + 2, *end;
		unsigned long g = strtoul(p, &end, 10);
		struct storm_conn r = {0};
		unsigned long v[3];

		p = end;
		for (int i = 0; i < 3; i++) {
			v[i] = strtoul(p, &end, 10);
			p = end;
		}
		r.outcome = (uint8_t)v[0];
		r.rej_reason = (uint8_t)v[1];
		r.rej_app = v[2] & 1;
		r.rej_busy = v[2] & 2;
		for (int s = 0; s < STORM_T_COUNT; s++) {
			r.t[s] = strtoull(p, &end, 10);
			p = end;
		}
		r.fail_kind = (uint8_t)strtoul(p, &end, 10);
		p = end;
		r.fail_err = (int32_t)strtol(p, &end, 10);
		if (g >= c->first && g < c->first + c->count)
			conns[g] = r;
	} else if (!strncmp(line, "stats ", 6)) {
		sscanf(line + 6,
		       "%" SCNu64 " %lf %lf %" SCNu64 " %" SCNu64 " %" SCNu64
		       " %lf %" SCNu64 " %" SCNu64,
		       &c->busy_retried, &c->cpu_s, &c->heap, &c->window,
		       &c->window_grows, &c->window_shrinks, &c->teardown_cpu_s,
		       &c->disconnected, &c->forced);
	} else if (!strcmp(line, "end")) {
		c->ended = true;
	}
}

static void child_read(struct child *c, struct storm_conn *conns)
{
	ssize_t k = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	char *nl, *start;

	if (k <= 0) {
		c->eof = true;
		return;
	}
	c->len += (size_t)k;
	c->buf[c->len] = '\0';
	start = c->buf;
	while ((nl = strchr(start, '\n'))) {
		*nl = '\0';
		child_line(c, start, conns);
		start = nl + 1;
	}
	c->len -= (size_t)(start - c->buf);
	memmove(c->buf, start, c->len);
}

/* Reads what the children say until @done(children) or @deadline. */
bool storm_children_pump(struct child *cs, unsigned n, struct storm_conn *conns,
			 bool (*done)(struct child *, unsigned),
			 uint64_t deadline,
			 void (*tick)(struct child *, unsigned, void *),
			 void *arg)
{
	struct pollfd pf[256];
	uint64_t next_tick = 0;

	while (!done(cs, n)) {
		unsigned k = 0;

		if (wharf_now_ns() > deadline)
			return false;
		for (unsigned i = 0; i < n; i++)
			if (!cs[i].eof)
				pf[k++] = (struct pollfd){cs[i].out, POLLIN, 0};
		if (!k)
			return done(cs, n);
		poll(pf, k, 100);
		for (unsigned i = 0, j = 0; i < n; i++) {
			if (cs[i].eof)
				continue;
			if (pf[j++].revents)
				child_read(&cs[i], conns);
		}
		if (tick && wharf_now_ns() >= next_tick) {
			tick(cs, n, arg);
			next_tick = wharf_now_ns() + 1000000000u;
		}
	}
	return true;
}

bool storm_children_ready(struct child *cs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!cs[i].ready && !cs[i].eof)
			return false;
	return true;
}

bool storm_children_handshakes(struct child *cs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (!cs[i].handshakes && !cs[i].eof && !cs[i].killed)
			return false;
		/* A --kill victim dies in this phase, however fast it was
		 * (storm_children_tick kills it within a second of 'g'). */
		if (cs[i].victim && !cs[i].killed && !cs[i].eof)
			return false;
	}
	return true;
}

bool storm_children_ended(struct child *cs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!cs[i].eof)
			return false;
	return true;
}

/* Progress, and the victims' end: killed once they are mid-storm. */
void storm_children_tick(struct child *cs, unsigned n, void *arg)
{
	struct storm_tick_arg *t = arg;
	unsigned done = 0;

	for (unsigned i = 0; i < n; i++) {
		struct child *c = &cs[i];

		done += c->progress;
		if (c->victim && !c->killed && c->pid > 0 &&
		    (c->progress >= c->count / 4 ||
		     wharf_now_ns() - t->go > 1000000000u)) {
			kill(c->pid, SIGKILL);
			c->killed = true;
			fprintf(stderr,
				"storm: %s: killed client %u (pid %d) after "
				"%u of its %u handshakes\n",
				t->name, i, (int)c->pid, c->progress, c->count);
		}
	}
	fprintf(stderr, "storm: %s: %u/%u handshakes ended, %.1f s\n", t->name,
		done, t->total, (wharf_now_ns() - t->go) / 1e9);
}

void storm_children_reap(struct child *cs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (cs[i].pid > 0) {
			if (!cs[i].eof)
				kill(cs[i].pid, SIGKILL);
			waitpid(cs[i].pid, NULL, 0);
		}
		if (cs[i].in >= 0)
			close(cs[i].in);
		if (cs[i].out >= 0)
			close(cs[i].out);
	}
}
