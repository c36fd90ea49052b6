// wharf-nvmf-tgt's command line (targets/nvmf/tgt_args.c): every spelling
// of the configuration file option loads the file, flags add to it, and
// --export binds the subsystem it follows; errors are -errno.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/tgt_main.h"
}

namespace
{

class TgtArgs : public ::testing::Test
{
      protected:
	std::string path_;
	tgt_args a_ = {};
	bool parsed_ = false;

	void SetUp() override
	{
		char tmpl[] = "/tmp/wharf-tgt-args-XXXXXX";
		int fd = mkstemp(tmpl);
		ASSERT_GE(fd, 0);
		path_ = tmpl;
		const std::string text = "listen 10.0.0.1 4420\n"
					 "subsystem nqn.2024-01.io.wharf:file\n"
					 "  namespace 1 ram:1M\n"
					 "  allow-any-host\n";
		ASSERT_EQ((ssize_t)text.size(),
			  write(fd, text.data(), text.size()));
		close(fd);
	}

	void TearDown() override
	{
		if (parsed_)
			nvmf_config_free(&a_.cfg);
		unlink(path_.c_str());
	}

	int Parse(std::vector<std::string> args)
	{
		std::vector<char *> argv;
		args.insert(args.begin(), "wharf-nvmf-tgt");
		for (std::string &s : args)
			argv.push_back(&s[0]);
		argv.push_back(nullptr);
		if (parsed_)
			nvmf_config_free(&a_.cfg);
		parsed_ = true;
		return tgt_args_parse(&a_, (int)args.size(), argv.data());
	}
};

TEST_F(TgtArgs, EverySpellingOfTheConfigFileLoadsIt)
{
	const std::vector<std::vector<std::string>> forms = {
		{"-c", path_},
		{"-c" + path_},
		{"--config", path_},
		{"--config=" + path_},
	};
	for (const auto &f : forms) {
		ASSERT_EQ(0, Parse(f)) << f[0];
		EXPECT_EQ(1u, a_.cfg.nsubsys) << f[0];
		EXPECT_EQ(1u, a_.cfg.nlisten) << f[0];
		EXPECT_STREQ(path_.c_str(), a_.cfg.source) << f[0];
	}
}

TEST_F(TgtArgs, FlagsAddToTheFileWhereverItIsNamed)
{
	ASSERT_EQ(0, Parse({"-l", "10.0.0.2:4421", "-s",
			    "nqn.2024-01.io.wharf:flag", "-n", "1 ram:1M", "-A",
			    "--config=" + path_}));
	ASSERT_EQ(2u, a_.cfg.nsubsys);
	EXPECT_STREQ("nqn.2024-01.io.wharf:file", a_.cfg.subsys[0].nqn);
	EXPECT_STREQ("nqn.2024-01.io.wharf:flag", a_.cfg.subsys[1].nqn);
	EXPECT_EQ(2u, a_.cfg.nlisten);
}

TEST_F(TgtArgs, ExportBindsTheSubsystemItFollows)
{
	ASSERT_EQ(0, Parse({"-l", "10.0.0.1", "-l", "[fd00::1]:4421", "-s",
			    "nqn.2024-01.io.wharf:a", "-A", "--export",
			    "[fd00::1]:4421", "-s", "nqn.2024-01.io.wharf:b",
			    "-A"}));
	ASSERT_EQ(2u, a_.cfg.nsubsys);
	EXPECT_EQ(0x2u, a_.cfg.subsys[0].listen_mask);
	EXPECT_EQ(0u, a_.cfg.subsys[1].listen_mask);
	// An export that names no listen address is refused.
	EXPECT_EQ(-EINVAL,
		  Parse({"-l", "10.0.0.1", "-s", "nqn.2024-01.io.wharf:a", "-A",
			 "-e", "10.0.0.1:4421"}));
}

TEST_F(TgtArgs, ErrorsAndInformationalOptions)
{
	EXPECT_EQ(-ENOENT, Parse({"--config=/nonexistent/wharf.conf"}));
	EXPECT_EQ(-EINVAL, Parse({"-c", path_, "--no-such-option"}));
	EXPECT_EQ(-EINVAL, Parse({"-c", path_, "stray"}));
	EXPECT_EQ(-EINVAL, Parse({"-c", path_, "--poll", "sometimes"}));
	EXPECT_EQ(1, Parse({"--version"}));
	EXPECT_EQ(1, Parse({"-c", path_, "--help"}));
}

} // namespace
