/*
 * Helpers shared by the tests that run inside wharf's soft-RoCE guest.
 *
 * A guest test needs real verbs.  On the host (no WHARF_GUEST in the
 * environment) it skips; inside the guest (tools/vm/guest-init.sh sets
 * WHARF_GUEST=1) a missing device is a failure, never a skip.
 */
#ifndef WHARF_TESTS_GUEST_ENV_H
#define WHARF_TESTS_GUEST_ENV_H

#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace wharf_guest
{

/* The address guest-init.sh puts on veth0, where rxe0 is bound. */
constexpr const char *kRxeAddr = "198.18.0.1";
constexpr const char *kRxeDev = "rxe0";

inline bool in_guest()
{
	const char *v = std::getenv("WHARF_GUEST");
	return v && std::strcmp(v, "1") == 0;
}

/*
 * A program the workspace builds, @path relative to the workspace root
 * (e.g. "targets/echo/wharf-echo"): next to this test in bazel-bin
 * (bazel-bin/tests/guest/X -> bazel-bin/PATH), or in the test's runfiles.
 * "" when neither is an executable.
 */
inline std::string built_program(const std::string &path)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return "";
	self[n] = 0;
	std::string dir(self);
	dir = dir.substr(0, dir.rfind('/'));
	for (const std::string &p :
	     {dir + "/../../" + path,
	      std::string(self) + ".runfiles/wharf/" + path})
		if (access(p.c_str(), X_OK) == 0)
			return p;
	return "";
}

} // namespace wharf_guest

/* First statement of every guest test. */
#define WHARF_REQUIRE_GUEST()                                                  \
	do {                                                                   \
		if (!wharf_guest::in_guest())                                  \
			GTEST_SKIP() << "needs the soft-RoCE guest "           \
					"(./wharf vm or ./wharf test)";        \
	} while (0)

#endif
