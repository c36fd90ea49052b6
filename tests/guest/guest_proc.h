/*
 * A child process of a guest test: started with its output in a log,
 * waited for with a deadline (killed, with its process group, past it).
 */
#ifndef WHARF_TESTS_GUEST_PROC_H
#define WHARF_TESTS_GUEST_PROC_H

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace wharf_guest
{

using Clock = std::chrono::steady_clock;

// Starts @argv (looked up in PATH when it has no '/') with stdout and
// stderr to @log (truncated), in a process group of its own when
// @own_group.  Returns its pid, or -1.  It dies with the test binary
// (setpriv --pdeathsig, which then execs @argv in the same process), so
// that a crashed test leaves no process holding a port or a device for
// the next run; the death signal follows the spawning thread: spawn from
// the test's own thread, not a short-lived one.  posix_spawn, not fork:
// the child runs no atfork handler (jemalloc's takes every arena's locks
// at once, more than ThreadSanitizer's deadlock detector can hold).
inline pid_t SpawnLogged(const std::vector<std::string> &argv,
			 const std::string &log, bool own_group)
{
	std::vector<char *> a = {(char *)"setpriv", (char *)"--pdeathsig",
				 (char *)"KILL", (char *)"--"};
	for (const std::string &s : argv)
		a.push_back((char *)s.c_str());
	a.push_back(nullptr);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log.c_str(),
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawnattr_init(&at);
	if (own_group) {
		posix_spawnattr_setpgroup(&at, 0);
		posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	}
	pid_t pid = -1;
	int rc = posix_spawnp(&pid, a[0], &fa, &at, a.data(), environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc ? -1 : pid;
}

struct Proc {
	pid_t pid = -1;
	std::string log;
	int status = -1;

	// Starts @argv with stdout+stderr to @log; the stock tools under
	// stdbuf -oL (their printf would wait for exit), wharf-echo as it is
	// (it flushes; and an ASan build must come first in the preload
	// order, which stdbuf's LD_PRELOAD would break).
	void Start(const std::vector<std::string> &argv, const std::string &l)
	{
		bool stock = argv[0].find('/') == std::string::npos;
		log = l;
		// Emptied here, before the spawn, not only in the child:
		// until the child's open, WaitFor() would read the last run's
		// log (an earlier case or round under the same name) and take
		// its "listening" for this process's.
		std::ofstream(log, std::ios::trunc).close();
		std::vector<std::string> a;
		if (stock) {
			a.push_back("stdbuf");
			a.push_back("-oL");
		}
		a.insert(a.end(), argv.begin(), argv.end());
		pid = SpawnLogged(a, l, true);
		ASSERT_GE(pid, 0);
	}

	// Waits (bounded) for the exit; kills the group on timeout.
	bool Wait(Clock::time_point deadline)
	{
		while (Clock::now() < deadline) {
			pid_t r = waitpid(pid, &status, WNOHANG);
			if (r == pid)
				return true;
			std::this_thread::sleep_for(
				std::chrono::milliseconds(50));
		}
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		return false;
	}

	bool Exited0() const
	{
		return WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}

	std::string Output() const
	{
		std::ifstream f(log);
		std::stringstream s;
		s << f.rdbuf();
		return s.str();
	}

	// Waits until the log contains @what (bounded).
	bool WaitFor(const std::string &what, Clock::time_point deadline)
	{
		while (Clock::now() < deadline) {
			if (Output().find(what) != std::string::npos)
				return true;
			if (waitpid(pid, &status, WNOHANG) == pid) {
				pid = -1;
				return false;
			}
			std::this_thread::sleep_for(
				std::chrono::milliseconds(50));
		}
		return false;
	}
};

/*
 * Runs @server, waits for @ready in its output (plus a second: stock tools
 * print before they listen), runs @client; both must exit 0 within
 * @bound_sec and print @sok / @cok.  Logs: @log_prefix_server.log and
 * @log_prefix_client.log.
 */
inline void Exchange(const std::vector<std::string> &server,
		     const std::string &ready,
		     const std::vector<std::string> &client,
		     const std::string &sok, const std::string &cok,
		     int bound_sec, const std::string &log_prefix)
{
	auto deadline = Clock::now() + std::chrono::seconds(bound_sec);
	Proc s, c;
	s.Start(server, log_prefix + "_server.log");
	ASSERT_TRUE(s.WaitFor(ready, deadline)) << s.Output();
	std::this_thread::sleep_for(std::chrono::seconds(1));
	c.Start(client, log_prefix + "_client.log");
	bool cdone = c.Wait(deadline);
	bool sdone = s.Wait(deadline);
	EXPECT_TRUE(cdone) << "client killed after " << bound_sec << " s";
	EXPECT_TRUE(sdone) << "server killed after " << bound_sec << " s";
	EXPECT_TRUE(c.Exited0()) << c.Output();
	EXPECT_TRUE(s.Exited0()) << s.Output();
	EXPECT_NE(std::string::npos, s.Output().find(sok)) << s.Output();
	EXPECT_NE(std::string::npos, c.Output().find(cok)) << c.Output();
}

} // namespace wharf_guest

#endif
