/*
 * initiators/common/sig_pipe.c - SIGINT / SIGTERM / SIGUSR1 through a
 * self-pipe (sig_pipe.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "initiators/common/sig_pipe.h"

static int sig_fds[2] = {-1, -1};

static void on_sig(int sig)
{
	uint8_t b = (uint8_t)sig;
	int e = errno;

	if (write(sig_fds[1], &b, 1) < 0) {
		/* full: a signal is pending already */
	}
	errno = e;
}

int sig_pipe_setup(sigset_t *set)
{
	struct sigaction sa = {.sa_handler = on_sig, .sa_flags = SA_RESTART};

	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
	if (pipe2(sig_fds, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	return sig_fds[0];
}

int sig_pipe_take(int fd, void (*on_usr1)(void))
{
	uint8_t b[16];
	ssize_t n = read(fd, b, sizeof(b));
	int stop = 0;

	for (ssize_t i = 0; i < n; i++) {
		if (b[i] != SIGUSR1)
			stop = 1;
		else if (on_usr1)
			on_usr1();
	}
	return stop;
}
