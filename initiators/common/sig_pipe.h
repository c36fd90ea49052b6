/*
 * initiators/common/sig_pipe.h - the signals of the host programs that
 * run until stopped (wharf-nbd, wharf-ublk): SIGINT and SIGTERM stop
 * them, SIGUSR1 asks for the stats line.  The handler only writes the
 * signal's number to a self-pipe; the main thread polls the pipe's read
 * end with its other fds and takes the signals there.
 */
#ifndef WHARF_INITIATORS_COMMON_SIG_PIPE_H
#define WHARF_INITIATORS_COMMON_SIG_PIPE_H

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * sig_pipe_setup() - install the handlers and block the three signals in
 * the calling thread (threads created from now on inherit the mask, so
 * the library's shards never take them); the caller unblocks them
 * (pthread_sigmask(SIG_UNBLOCK, @set)) once its threads exist.  SIGPIPE
 * is ignored.
 * @set: receives the three signals (filled even on failure).
 * Return: the pipe's read end (non-blocking), or -errno of pipe2().
 * Context: the main thread, once, before any other thread starts.
 */
int sig_pipe_setup(sigset_t *set);

/**
 * sig_pipe_take() - read the signals that came from @fd: @on_usr1 (may
 * be NULL) once for each SIGUSR1.
 * Return: 1 when SIGINT or SIGTERM came, 0 otherwise.
 * Context: the main thread, when @fd is readable; does not block.
 */
int sig_pipe_take(int fd, void (*on_usr1)(void));

#ifdef __cplusplus
}
#endif

#endif /* WHARF_INITIATORS_COMMON_SIG_PIPE_H */
