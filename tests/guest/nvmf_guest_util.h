// Helpers for the NVMe-oF guest tests: wharf-nvmf-tgt as a child process
// (configuration file in the guest's /tmp, stats read through SIGUSR1
// from its log), and shell commands with a hard timeout and their output.
// Every wait is bounded; none asserts on durations.
#ifndef WHARF_TESTS_GUEST_NVMF_GUEST_UTIL_H
#define WHARF_TESTS_GUEST_NVMF_GUEST_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/guest/cm_guest_util.h"
#include "tests/guest/guest_proc.h"

namespace nvmf_guest
{

using wharf_cm_test::Poll;

inline std::string ReadFile(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

// The value of @key= in the last stats line of a program's @log
// (wharf-nbd, wharf-ublk: "...: stats...: key=value ..."), UINT64_MAX
// when there is none.
inline uint64_t Stat(const std::string &log, const std::string &key)
{
	size_t at = log.rfind("stats");
	if (at == std::string::npos)
		return UINT64_MAX;
	at = log.find(" " + key + "=", at);
	if (at == std::string::npos)
		return UINT64_MAX;
	return std::strtoull(log.c_str() + at + key.size() + 2, nullptr, 10);
}

inline std::string Trim(std::string s)
{
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

// Runs @cmd with sh -c under `timeout`, stdout+stderr into *out.
// Returns the exit status (124: timed out, -1: could not run).
inline int Sh(const std::string &cmd, std::string *out = nullptr,
	      int limit_s = 180)
{
	std::string full = "timeout -k 5 " + std::to_string(limit_s) +
			   " sh -c '" + cmd + "' 2>&1";
	FILE *p = popen(full.c_str(), "r");
	std::string o;
	char buf[4096];
	size_t n;

	if (!p)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		o.append(buf, n);
	int st = pclose(p);
	if (out)
		*out = o;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// One JSON-RPC 2.0 exchange with wharf-nvmf-tgt's --rpc socket @sock:
// the response line ("(no socket)" when nothing listens there).
inline std::string RpcCall(const std::string &sock, const std::string &method,
			   const std::string &params = "{}")
{
	sockaddr_un sa = {};
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock.c_str());
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return "(no socket)";
	}
	std::string req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" +
			  method + "\",\"params\":" + params + "}";
	std::string out;
	if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) ==
	    (ssize_t)req.size()) {
		char buf[4096];
		while (out.find('\n') == std::string::npos) {
			pollfd p = {fd, POLLIN, 0};
			ssize_t n;
			if (poll(&p, 1, 10000) != 1 ||
			    (n = read(fd, buf, sizeof(buf))) <= 0)
				break;
			out.append(buf, (size_t)n);
		}
	}
	close(fd);
	return out;
}

// The guest kernel's NVMe controllers (nvmeN) whose sysfs attribute
// @attr (e.g. "subsysnqn") contains @value.
inline std::vector<std::string> NvmeCtrls(const std::string &attr,
					  const std::string &value)
{
	std::vector<std::string> found;
	DIR *d = opendir("/sys/class/nvme");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		std::string c = e->d_name;
		if (c.rfind("nvme", 0) == 0 &&
		    ReadFile("/sys/class/nvme/" + c + "/" + attr).find(value) !=
			    std::string::npos)
			found.push_back(c);
	}
	if (d)
		closedir(d);
	return found;
}

// The namespace block devices of controller @ctrl: nvmeAnC, from nvmeAnC
// or (native multipath) the path node nvmeAcBnC.
inline std::vector<std::string> NvmeBlockNames(const std::string &ctrl)
{
	std::vector<std::string> found;
	DIR *d = opendir(("/sys/class/nvme/" + ctrl).c_str());
	struct dirent *e;
	while (d && (e = readdir(d))) {
		std::string n = e->d_name;
		size_t c = n.find('c', 4), ns = n.rfind('n');
		if (n.rfind("nvme", 0) != 0 || ns <= 4)
			continue;
		if (c != std::string::npos && c < ns)
			n = n.substr(0, c) + n.substr(ns);
		found.push_back(n);
	}
	if (d)
		closedir(d);
	return found;
}

inline std::string TgtPath()
{
	return wharf_guest::built_program("targets/nvmf/wharf-nvmf-tgt");
}

// The target as a child process.
class Tgt
{
      public:
	~Tgt()
	{
		if (pid_ > 0) {
			kill(pid_, SIGKILL);
			waitpid(pid_, nullptr, 0);
		}
	}

	// Writes @config, starts the target with @args after it, waits for
	// "listening".
	::testing::AssertionResult
	Start(const std::string &name, const std::string &config,
	      const std::vector<std::string> &args = {})
	{
		std::string bin = TgtPath();
		conf_ = "/tmp/" + name + ".conf";
		log_ = "/tmp/" + name + ".log";
		if (bin.empty())
			return ::testing::AssertionFailure()
			       << "wharf-nvmf-tgt not found";
		std::ofstream(conf_) << config;
		// Emptied here, not only in the child: a restart under the
		// same name must not find the last run's "listening on".
		std::ofstream(log_, std::ios::trunc).close();
		killed_ = false;
		std::vector<std::string> argv = {bin, "-v", "-c", conf_};
		argv.insert(argv.end(), args.begin(), args.end());
		pid_ = wharf_guest::SpawnLogged(argv, log_, false);
		if (pid_ < 0)
			return ::testing::AssertionFailure() << "spawn";
		if (!Poll([&] {
			    return Log().find("listening on") !=
					   std::string::npos ||
				   !Alive();
		    }) ||
		    !Alive())
			return ::testing::AssertionFailure()
			       << "target did not start:\n"
			       << Log();
		return ::testing::AssertionSuccess();
	}

	std::string Log() const
	{
		return ReadFile(log_);
	}

	// True when every thread of @pid is in state T (stopped): the state
	// follows the last ')' of /proc/PID/task/TID/stat.
	static bool AllThreadsStopped(pid_t pid)
	{
		std::string dir = "/proc/" + std::to_string(pid) + "/task";
		DIR *d = opendir(dir.c_str());
		if (!d)
			return false;
		bool all = true, any = false;
		while (struct dirent *e = readdir(d)) {
			if (e->d_name[0] == '.')
				continue;
			std::string st =
				ReadFile(dir + "/" + e->d_name + "/stat");
			size_t p = st.rfind(')');
			if (p == std::string::npos || p + 2 >= st.size())
				continue; /* exited meanwhile */
			any = true;
			all = all && st[p + 2] == 'T';
		}
		closedir(d);
		return any && all;
	}

	// The target's pid (-1 when not running), to stop and continue it.
	pid_t Pid() const
	{
		return pid_;
	}

	// Sends @sig (a test's own kill: not a death to report).
	bool Kill(int sig)
	{
		if (pid_ <= 0 || kill(pid_, sig))
			return false;
		killed_ |= sig == SIGKILL || sig == SIGTERM;
		return true;
	}

	// SIGSTOP, then waits (bounded) until every thread of the target is
	// stopped: kill() returns before they are, and a thread still
	// running may answer one more command.
	bool Freeze()
	{
		if (!Kill(SIGSTOP))
			return false;
		return Poll([&] { return AllThreadsStopped(pid_); });
	}

	// Exited or died although nobody killed or stopped it: its status
	// and log, else "".
	std::string UnexpectedDeath()
	{
		if (Alive() || killed_ || status_ == -1)
			return "";
		std::ostringstream m;
		if (WIFSIGNALED(status_))
			m << "wharf-nvmf-tgt killed by signal "
			  << WTERMSIG(status_);
		else
			m << "wharf-nvmf-tgt exited with status "
			  << WEXITSTATUS(status_);
		return m.str() + " (nobody stopped it); its log:\n" + Log();
	}

	bool Alive()
	{
		int st;
		if (pid_ <= 0)
			return false;
		if (waitpid(pid_, &st, WNOHANG) == pid_) {
			status_ = st;
			pid_ = -1;
			return false;
		}
		return true;
	}

	// SIGUSR1, then the counters of the new stats line.
	std::map<std::string, uint64_t> Stats()
	{
		std::map<std::string, uint64_t> m;
		size_t before = Count("stats:");
		if (!Alive() || kill(pid_, SIGUSR1))
			return m;
		if (!Poll([&] { return Count("stats:") > before; }))
			return m;
		std::string log = Log();
		size_t at = log.rfind("stats:");
		std::istringstream line(
			log.substr(at + 6, log.find('\n', at) - at - 6));
		std::string kv;
		while (line >> kv) {
			size_t eq = kv.find('=');
			if (eq != std::string::npos)
				m[kv.substr(0, eq)] = std::strtoull(
					kv.c_str() + eq + 1, nullptr, 10);
		}
		return m;
	}

	// Polls the stats until every gauge the binding and the core keep
	// is zero again (no controller, queue, request or buffer left).
	::testing::AssertionResult BackToZero()
	{
		std::map<std::string, uint64_t> s;
		bool ok = Poll([&] {
			s = Stats();
			return !s.empty() && !s["ctrls"] && !s["queues"] &&
			       !s["reqs"] && !s["held"] && !s["bufs"];
		});
		if (ok)
			return ::testing::AssertionSuccess();
		return ::testing::AssertionFailure()
		       << "counters not back to zero: ctrls=" << s["ctrls"]
		       << " queues=" << s["queues"] << " reqs=" << s["reqs"]
		       << " held=" << s["held"] << " bufs=" << s["bufs"];
	}

	// SIGTERM and a clean exit (status 0) with the final stats line.
	::testing::AssertionResult Stop()
	{
		if (!Alive())
			return ::testing::AssertionFailure()
			       << "target died: status " << status_ << "\n"
			       << Log();
		Kill(SIGTERM);
		if (!Poll([&] { return !Alive(); }))
			return ::testing::AssertionFailure()
			       << "target did not exit on SIGTERM";
		if (!WIFEXITED(status_) || WEXITSTATUS(status_) != 0)
			return ::testing::AssertionFailure()
			       << "target exit status " << status_ << "\n"
			       << Log();
		if (Log().find("stats at exit:") == std::string::npos)
			return ::testing::AssertionFailure()
			       << "no final stats line";
		return ::testing::AssertionSuccess();
	}

      private:
	size_t Count(const std::string &what) const
	{
		std::string log = Log();
		size_t n = 0;
		for (size_t at = log.find(what); at != std::string::npos;
		     at = log.find(what, at + 1))
			n++;
		return n;
	}

	pid_t pid_ = -1;
	int status_ = -1;
	bool killed_ = false; /* by the test: Kill(), Stop() */
	std::string conf_, log_;
};

} // namespace nvmf_guest

#endif // WHARF_TESTS_GUEST_NVMF_GUEST_UTIL_H
