// Unit tests for targets/nvmf/config: a full configuration, the defaults,
// flags-style line-by-line use, and one test per error, each checking the
// line number and the message a user sees.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "targets/nvmf/config.h"
#include "targets/nvmf/nqn.h"
}

namespace
{

const char kHost[] =
	"nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

// Parse; return the error message ("" on success).
std::string Err(const std::string &text)
{
	nvmf_config cfg;
	char err[512] = "";
	int rc = nvmf_config_parse(text.data(), text.size(), "t.conf", &cfg,
				   err, sizeof(err));
	nvmf_config_free(&cfg);
	if (rc == 0)
		return "";
	EXPECT_EQ(-EINVAL, rc);
	EXPECT_NE('\0', err[0]);
	return err;
}

// A valid head: listen + one subsystem, then @tail.
std::string Head(const std::string &tail)
{
	return "listen 10.0.0.1\nsubsystem nqn.2024-01.io.wharf:a\n"
	       "allow-any-host\n" +
	       tail;
}

TEST(NvmfConfig, FullConfiguration)
{
	std::string text = "# wharf-nvmf-tgt\n"
			   "listen 198.18.0.1 4420   # RoCE\n"
			   "listen fd00::1 4421\n"
			   "shards 2\n"
			   "queue-depth 256\n"
			   "io-queues 16\n"
			   "in-capsule 8192\n"
			   "max-io-size 1M\n"
			   "\n"
			   "subsystem nqn.2024-01.io.wharf:disk0\n"
			   "\tserial WHARF0001\n"
			   "\tmodel wharf ram  disk\n"
			   "\tnamespace 1 ram:64M\n"
			   "\tnamespace 7 file:/srv/d7#x block=4096\n"
			   "\tnamespace 9 null:1T block=4096\n"
			   "\tallow-host " +
			   std::string(kHost) +
			   "\n"
			   "subsystem nqn.2024-01.io.wharf:disk1\n"
			   "\tallow-any-host\n";
	nvmf_config cfg;
	char err[256] = "";
	ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t.conf", &cfg,
				       err, sizeof(err)))
		<< err;
	ASSERT_EQ(2u, cfg.nlisten);
	EXPECT_STREQ("198.18.0.1", cfg.listen[0].addr);
	EXPECT_EQ(AF_INET, cfg.listen[0].family);
	EXPECT_EQ(4420, cfg.listen[0].port);
	EXPECT_EQ(2u, cfg.listen[0].line);
	EXPECT_EQ(AF_INET6, cfg.listen[1].family);
	EXPECT_EQ(4421, cfg.listen[1].port);
	EXPECT_EQ(2u, cfg.shards);
	EXPECT_EQ(256u, cfg.queue_depth);
	EXPECT_EQ(16u, cfg.io_queues);
	EXPECT_EQ(8192u, cfg.in_capsule);
	EXPECT_EQ(1u << 20, cfg.max_io_size);
	ASSERT_EQ(2u, cfg.nsubsys);
	const nvmf_cfg_subsys &s = cfg.subsys[0];
	EXPECT_STREQ("nqn.2024-01.io.wharf:disk0", s.nqn);
	EXPECT_STREQ("WHARF0001", s.serial);
	EXPECT_STREQ("wharf ram disk", s.model);
	EXPECT_FALSE(s.allow_any);
	ASSERT_EQ(1u, s.nhosts);
	EXPECT_STREQ(kHost, s.hosts[0]);
	ASSERT_EQ(3u, s.nns);
	EXPECT_EQ(1u, s.ns[0].nsid);
	EXPECT_EQ(NVMF_BDEV_RAM, s.ns[0].kind);
	EXPECT_EQ(64ull << 20, s.ns[0].size);
	EXPECT_EQ(512u, s.ns[0].block_size);
	EXPECT_EQ(13u, s.ns[0].line);
	EXPECT_EQ(7u, s.ns[1].nsid);
	EXPECT_EQ(NVMF_BDEV_FILE, s.ns[1].kind);
	EXPECT_STREQ("/srv/d7#x", s.ns[1].path); // '#' inside a word
	EXPECT_EQ(4096u, s.ns[1].block_size);
	EXPECT_EQ(9u, s.ns[2].nsid);
	EXPECT_EQ(NVMF_BDEV_NULL, s.ns[2].kind);
	EXPECT_EQ(1ull << 40, s.ns[2].size);
	EXPECT_EQ(nullptr, s.ns[2].path);
	EXPECT_TRUE(cfg.subsys[1].allow_any);
	EXPECT_EQ(0u, cfg.subsys[1].nns);
	nvmf_config_free(&cfg);
}

TEST(NvmfConfig, DefaultsAndNoTrailingNewline)
{
	std::string text = "listen 10.0.0.1\nsubsystem nqn.2024-01.io.w:a\n"
			   "allow-any-host";
	nvmf_config cfg;
	char err[256] = "";
	ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), nullptr, &cfg,
				       err, sizeof(err)))
		<< err;
	EXPECT_EQ(4420, cfg.listen[0].port);
	EXPECT_EQ(0u, cfg.shards); // auto
	EXPECT_EQ(128u, cfg.queue_depth);
	EXPECT_EQ(8u, cfg.io_queues);
	EXPECT_EQ(4096u, cfg.in_capsule);
	EXPECT_EQ(128u * 1024, cfg.max_io_size);
	EXPECT_STREQ("WHARF0001", cfg.subsys[0].serial);
	nvmf_config_free(&cfg);
}

TEST(NvmfConfig, LineByLineLikeFlags)
{
	nvmf_config cfg;
	char err[256] = "";
	nvmf_config_init(&cfg, "flags");
	ASSERT_EQ(0, nvmf_config_line(&cfg, "listen 1.2.3.4 4420", 1, err,
				      sizeof(err)));
	ASSERT_EQ(0, nvmf_config_line(&cfg, "subsystem nqn.2024-01.io.w:a", 2,
				      err, sizeof(err)));
	EXPECT_EQ(-EINVAL, nvmf_config_finish(&cfg, err, sizeof(err)));
	EXPECT_STREQ("flags:2: subsystem nqn.2024-01.io.w:a: no allow-host, "
		     "allow-any-host or allow-no-host (who may connect must "
		     "be explicit)",
		     err);
	ASSERT_EQ(0, nvmf_config_line(&cfg, "allow-any-host", 3, err,
				      sizeof(err)));
	EXPECT_EQ(0, nvmf_config_finish(&cfg, err, sizeof(err)));
	EXPECT_EQ(-EINVAL,
		  nvmf_config_line(&cfg, "shards x", 4, err, sizeof(err)));
	EXPECT_STREQ("flags:4: shards: \"x\" is not auto or 1..1024", err);
	nvmf_config_free(&cfg);
}

TEST(NvmfConfig, MissingListenSubsystemOrAllow)
{
	EXPECT_EQ("t.conf: no \"listen ADDRESS [PORT]\" line",
		  Err("subsystem nqn.2024-01.io.w:a\nallow-any-host\n"));
	EXPECT_EQ("t.conf: no \"subsystem NQN\" block",
		  Err("listen 10.0.0.1\n"));
	EXPECT_EQ("t.conf: no \"listen ADDRESS [PORT]\" line", Err(""));
	EXPECT_EQ("t.conf:4: subsystem nqn.2024-01.io.w:b: no allow-host, "
		  "allow-any-host or allow-no-host (who may connect must be "
		  "explicit)",
		  Err(Head("subsystem nqn.2024-01.io.w:b\nnamespace 1 "
			   "ram:1M\n")));
}

TEST(NvmfConfig, ListenErrors)
{
	EXPECT_EQ("t.conf:1: listen: \"foo\" is not an IPv4 or IPv6 address",
		  Err("listen foo\n"));
	EXPECT_EQ("t.conf:1: listen: port \"0\" is not 1..65535",
		  Err("listen 1.2.3.4 0\n"));
	EXPECT_EQ("t.conf:1: listen: port \"65536\" is not 1..65535",
		  Err("listen 1.2.3.4 65536\n"));
	EXPECT_EQ("t.conf:1: listen: expected \"listen ADDRESS [PORT]\"",
		  Err("listen\n"));
	EXPECT_EQ("t.conf:2: listen: 1.2.3.4 port 4420 twice (first on line "
		  "1)",
		  Err("listen 1.2.3.4\nlisten 1.2.3.4 4420\n"));
	std::string many;
	for (int i = 0; i < 17; i++)
		many += "listen 10.0.0." + std::to_string(i + 1) + "\n";
	EXPECT_EQ("t.conf:17: listen: more than 16 addresses", Err(many));
}

TEST(NvmfConfig, ExportBindsASubsystemToListenLines)
{
	// Export lines may come before the listen line they name (flags).
	std::string text = "listen 10.0.0.1\n"
			   "subsystem nqn.2024-01.io.wharf:a\n"
			   "  allow-any-host\n"
			   "  export fd00:0::1 4421\n" // fd00::1, spelt longer
			   "  export 10.0.0.1 4420\n"
			   "subsystem nqn.2024-01.io.wharf:b\n"
			   "  allow-any-host\n"
			   "listen 10.0.0.2 4421\n"
			   "listen fd00::1 4421\n";
	nvmf_config cfg;
	char err[256] = "";
	ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t.conf", &cfg,
				       err, sizeof(err)))
		<< err;
	ASSERT_EQ(0, nvmf_config_finish(&cfg, err, sizeof(err))) << err;
	EXPECT_EQ(2u, cfg.subsys[0].nexports);
	EXPECT_EQ(4u, cfg.subsys[0].exports[0].line);
	EXPECT_EQ(0x5u, cfg.subsys[0].listen_mask); // lines 1 and 3
	EXPECT_EQ(0u, cfg.subsys[1].listen_mask);   // every one
	nvmf_config_free(&cfg);
}

TEST(NvmfConfig, ExportErrors)
{
	EXPECT_EQ("t.conf:1: export: outside a subsystem (put \"subsystem "
		  "NQN\" first)",
		  Err("export 10.0.0.1\n"));
	EXPECT_EQ("t.conf:4: export: \"x\" is not an IPv4 or IPv6 address",
		  Err(Head("export x\n")));
	EXPECT_EQ("t.conf:4: export: expected \"export ADDRESS [PORT]\"",
		  Err(Head("export\n")));
	EXPECT_EQ("t.conf:5: export: 10.0.0.1 port 4420 twice (first on "
		  "line 4)",
		  Err(Head("export 10.0.0.1\nexport 10.0.0.1 4420\n")));
	EXPECT_EQ("t.conf:4: export: 10.0.0.1 port 4421 is not a listen "
		  "address (add \"listen 10.0.0.1 4421\")",
		  Err(Head("export 10.0.0.1 4421\n")));
	EXPECT_EQ("t.conf:5: export-none: the subsystem has export lines",
		  Err(Head("export 10.0.0.1\nexport-none\n")));
	EXPECT_EQ("t.conf:5: export: the subsystem has export-none",
		  Err(Head("export-none\nexport 10.0.0.1\n")));
	EXPECT_EQ("t.conf:4: export-none: expected \"export-none\"",
		  Err(Head("export-none x\n")));
}

TEST(NvmfConfig, GlobalNumberErrors)
{
	EXPECT_EQ("t.conf:1: shards: \"0\" is not auto or 1..1024",
		  Err("shards 0\n"));
	EXPECT_EQ("t.conf:1: queue-depth: \"1\" is not 2..1024",
		  Err("queue-depth 1\n"));
	EXPECT_EQ("t.conf:1: queue-depth: \"4096\" is not 2..1024",
		  Err("queue-depth 4096\n"));
	EXPECT_EQ("t.conf:1: io-queues: \"0\" is not 1..1024",
		  Err("io-queues 0\n"));
	EXPECT_EQ("t.conf:1: io-queues: \"-1\" is not 1..1024",
		  Err("io-queues -1\n"));
	EXPECT_EQ("t.conf:1: in-capsule: 100 is not a multiple of 16",
		  Err("in-capsule 100\n"));
	EXPECT_EQ("t.conf:1: in-capsule: \"70000\" is not 0..65536",
		  Err("in-capsule 70000\n"));
	EXPECT_EQ("t.conf:1: max-io-size: \"96K\" is not a power of two from "
		  "4K to 2M",
		  Err("max-io-size 96K\n"));
	EXPECT_EQ("t.conf:1: max-io-size: \"4M\" is not a power of two from "
		  "4K to 2M",
		  Err("max-io-size 4M\n"));
	EXPECT_EQ("t.conf:1: shards: expected \"shards N|auto\"",
		  Err("shards 1 2\n"));
}

TEST(NvmfConfig, CpusListsAndRanges)
{
	nvmf_config cfg;
	char err[512] = "";
	std::string text = Head("cpus 3,0-1,1\n");
	ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t.conf", &cfg,
				       err, sizeof(err)))
		<< err;
	ASSERT_EQ(4u, cfg.ncpus);
	EXPECT_EQ(3, cfg.cpus[0]);
	EXPECT_EQ(0, cfg.cpus[1]);
	EXPECT_EQ(1, cfg.cpus[2]);
	EXPECT_EQ(1, cfg.cpus[3]); // a repeat shares a CPU
	EXPECT_EQ(0u, cfg.shards); // auto: one shard per CPU listed
	nvmf_config_free(&cfg);

	text = Head("shards 2\ncpus 1-2\n");
	ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t.conf", &cfg,
				       err, sizeof(err)))
		<< err;
	EXPECT_EQ(2u, cfg.ncpus);
	nvmf_config_free(&cfg);

	nvmf_config_init(&cfg, "flags");
	EXPECT_EQ(0u, cfg.ncpus); // default: the placement policy
	nvmf_config_free(&cfg);
}

TEST(NvmfConfig, CpusErrors)
{
	const char *bad = "is not a list of CPUs 0..1023 and ranges A-B";
	for (const char *l : {"x", "1,", ",1", "2-1", "1-", "-1", "1024",
			      "0-1024", "1--2", "1,,2"})
		EXPECT_EQ(std::string("t.conf:1: cpus: \"") + l + "\" " + bad,
			  Err(std::string("cpus ") + l + "\n"))
			<< l;
	EXPECT_EQ("t.conf:1: cpus: more than 1024 entries",
		  Err("cpus 0-1023,0\n"));
	EXPECT_EQ("t.conf:1: cpus: expected \"cpus LIST (e.g. 0,2-3)\"",
		  Err("cpus\n"));
	EXPECT_EQ("t.conf:5: cpus: 3 CPUs listed for 2 shards",
		  Err(Head("shards 2\ncpus 0-2\n")));
}

TEST(NvmfConfig, SubsystemErrors)
{
	EXPECT_EQ("t.conf:1: subsystem: \"disk0\" is not a valid NQN "
		  "(nqn.yyyy-mm.reverse.domain[:name], <= 223 bytes)",
		  Err("subsystem disk0\n"));
	EXPECT_EQ("t.conf:1: subsystem: the discovery NQN is built in",
		  Err("subsystem nqn.2014-08.org.nvmexpress.discovery\n"));
	EXPECT_EQ("t.conf:4: subsystem: nqn.2024-01.io.wharf:a twice (first "
		  "on line 2)",
		  Err(Head("subsystem nqn.2024-01.io.wharf:a\n")));
	EXPECT_EQ("t.conf:1: namespace: outside a subsystem (put \"subsystem "
		  "NQN\" first)",
		  Err("namespace 1 ram:1M\n"));
	EXPECT_EQ("t.conf:1: allow-any-host: outside a subsystem (put "
		  "\"subsystem NQN\" first)",
		  Err("allow-any-host\n"));
	EXPECT_EQ("t.conf:4: serial: at most 20 printable characters",
		  Err(Head("serial 012345678901234567890\n")));
	EXPECT_EQ("t.conf:4: model: at most 40 printable characters",
		  Err(Head("model " + std::string(41, 'm') + "\n")));
	EXPECT_EQ("t.conf:4: model: expected \"model TEXT\"",
		  Err(Head("model\n")));
	std::string subs = "listen 10.0.0.1\n";
	for (int i = 0; i < 65; i++)
		subs += "subsystem nqn.2024-01.io.w:s" + std::to_string(i) +
			"\nallow-any-host\n";
	EXPECT_EQ("t.conf:130: subsystem: more than 64 subsystems", Err(subs));
}

TEST(NvmfConfig, NamespaceErrors)
{
	EXPECT_EQ("t.conf:4: namespace: NSID \"0\" is not 1..1024",
		  Err(Head("namespace 0 ram:1M\n")));
	EXPECT_EQ("t.conf:4: namespace: NSID \"1025\" is not 1..1024",
		  Err(Head("namespace 1025 ram:1M\n")));
	EXPECT_EQ("t.conf:5: namespace: duplicate NSID 1 (first on line 4)",
		  Err(Head("namespace 1 ram:1M\nnamespace 1 ram:2M\n")));
	EXPECT_EQ("t.conf:4: namespace: \"ram:lots\": bad size (ram:SIZE, "
		  "e.g. ram:64M)",
		  Err(Head("namespace 1 ram:lots\n")));
	EXPECT_EQ("t.conf:4: namespace: \"ram:0\": bad size (ram:SIZE, e.g. "
		  "ram:64M)",
		  Err(Head("namespace 1 ram:0\n")));
	EXPECT_EQ("t.conf:4: namespace: \"ram:99999999999T\": bad size "
		  "(ram:SIZE, e.g. ram:64M)",
		  Err(Head("namespace 1 ram:99999999999T\n")));
	EXPECT_EQ("t.conf:4: namespace: size 1000 is not a multiple of the "
		  "512-byte block",
		  Err(Head("namespace 1 ram:1000\n")));
	EXPECT_EQ("t.conf:4: namespace: size 2048 is not a multiple of the "
		  "4096-byte block",
		  Err(Head("namespace 1 ram:2K block=4096\n")));
	EXPECT_EQ("t.conf:4: namespace: file: needs a path",
		  Err(Head("namespace 1 file:\n")));
	EXPECT_EQ("t.conf:4: namespace: \"null:0\": bad size (null:SIZE, e.g. "
		  "null:64M)",
		  Err(Head("namespace 1 null:0\n")));
	EXPECT_EQ("t.conf:4: namespace: size 6144 is not a multiple of the "
		  "4096-byte block",
		  Err(Head("namespace 1 null:6K block=4096\n")));
	EXPECT_EQ("t.conf:4: namespace: backing \"nulls:1M\" is not "
		  "ram:SIZE, null:SIZE or file:PATH",
		  Err(Head("namespace 1 nulls:1M\n")));
	EXPECT_EQ("t.conf:4: namespace: backing \"nvme0n1\" is not ram:SIZE, "
		  "null:SIZE or file:PATH",
		  Err(Head("namespace 1 nvme0n1\n")));
	EXPECT_EQ("t.conf:4: namespace: \"block=1024\" is not block=512 or "
		  "block=4096",
		  Err(Head("namespace 1 ram:1M block=1024\n")));
	EXPECT_EQ("t.conf:4: namespace: \"bs=512\" is not block=512 or "
		  "block=4096",
		  Err(Head("namespace 1 ram:1M bs=512\n")));
	EXPECT_EQ("t.conf:4: namespace: expected \"namespace NSID "
		  "ram:SIZE|null:SIZE|file:PATH [block=N] "
		  "[io=direct|buffered]\"",
		  Err(Head("namespace 1\n")));
	EXPECT_EQ("t.conf:4: namespace: \"io=fast\" is not io=direct or "
		  "io=buffered",
		  Err(Head("namespace 1 file:/dev/sdb io=fast\n")));
	EXPECT_EQ("t.conf:4: namespace: io= is for file: backings",
		  Err(Head("namespace 1 ram:1M io=direct\n")));
}

TEST(NvmfConfig, FileOptions)
{
	std::string text = "listen 10.0.0.1\nsubsystem nqn.2024-01.io.w:a\n"
			   "namespace 1 file:/dev/nullb0\n"
			   "namespace 2 file:/srv/f io=direct block=4096\n"
			   "namespace 3 file:/srv/g io=buffered\n"
			   "allow-any-host\n";
	nvmf_config cfg;
	char err[256] = "";
	ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t.conf", &cfg,
				       err, sizeof(err)))
		<< err;
	const nvmf_cfg_subsys &s = cfg.subsys[0];
	ASSERT_EQ(3u, s.nns);
	EXPECT_EQ(0u, s.ns[0].block_size); // the device's, found at open
	EXPECT_EQ(NVMF_BDEV_IO_DEFAULT, s.ns[0].io);
	EXPECT_EQ(4096u, s.ns[1].block_size);
	EXPECT_EQ(NVMF_BDEV_IO_DIRECT, s.ns[1].io);
	EXPECT_EQ(NVMF_BDEV_IO_BUFFERED, s.ns[2].io);
	nvmf_config_free(&cfg);
}

TEST(NvmfConfig, AllowListErrors)
{
	std::string h = "listen 10.0.0.1\nsubsystem nqn.2024-01.io.w:a\n";
	EXPECT_EQ("t.conf:3: allow-host: \"host1\" is not a valid NQN",
		  Err(h + "allow-host host1\n"));
	EXPECT_EQ("t.conf:4: allow-any-host: the subsystem already lists "
		  "hosts (line 3)",
		  Err(h + "allow-host " + kHost + "\nallow-any-host\n"));
	EXPECT_EQ("t.conf:4: allow-host: the subsystem already has "
		  "allow-any-host (line 3)",
		  Err(h + "allow-any-host\nallow-host " + kHost + "\n"));
	EXPECT_EQ("t.conf:4: allow-any-host: twice (first on line 3)",
		  Err(h + "allow-any-host\nallow-any-host\n"));
	// allow-no-host: a closed subsystem, alone.
	EXPECT_EQ("", Err(h + "allow-no-host\n"));
	EXPECT_EQ("t.conf:4: allow-no-host: the subsystem already says who "
		  "may connect (line 3)",
		  Err(h + "allow-host " + kHost + "\nallow-no-host\n"));
	EXPECT_EQ("t.conf:4: allow-host: the subsystem already has "
		  "allow-no-host (line 3)",
		  Err(h + "allow-no-host\nallow-host " + kHost + "\n"));
	EXPECT_EQ("t.conf:4: allow-any-host: the subsystem has allow-no-host "
		  "(line 3)",
		  Err(h + "allow-no-host\nallow-any-host\n"));
	EXPECT_EQ("t.conf:4: allow-host: " + std::string(kHost) + " twice",
		  Err(h + "allow-host " + kHost + "\nallow-host " + kHost +
		      "\n"));
	EXPECT_EQ("t.conf:3: allow-any-host: expected \"allow-any-host\"",
		  Err(h + "allow-any-host please\n"));
}

TEST(NvmfConfig, LexicalErrors)
{
	EXPECT_EQ("t.conf:2: unknown directive \"listn\"",
		  Err("# ok\nlistn 1.2.3.4\n"));
	EXPECT_EQ("t.conf:1: line longer than 1024 bytes",
		  Err("# " + std::string(1100, 'x') + "\n"));
	EXPECT_EQ("t.conf:2: NUL byte",
		  Err(std::string("# a\nlisten\0x\n", 13)));
	EXPECT_EQ("t.conf:1: control character 0x01", Err("listen \x01\n"));
	EXPECT_EQ("t.conf:1: too many words (at most 16)",
		  Err("model a b c d e f g h i j k l m n o p q\n"));
}

TEST(NvmfConfig, LoadFromFile)
{
	char path[] = "/tmp/nvmf_config_testXXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	std::string text = Head("namespace 1 ram:1M\nbogus\n");
	ASSERT_EQ((ssize_t)text.size(), write(fd, text.data(), text.size()));
	close(fd);

	nvmf_config cfg;
	char err[512] = "";
	EXPECT_EQ(-EINVAL, nvmf_config_load(path, &cfg, err, sizeof(err)));
	EXPECT_EQ(std::string(path) + ":5: unknown directive \"bogus\"", err);
	nvmf_config_free(&cfg);
	unlink(path);

	EXPECT_EQ(-ENOENT, nvmf_config_load(path, &cfg, err, sizeof(err)));
	EXPECT_EQ(std::string(path) + ": No such file or directory", err);
	nvmf_config_free(&cfg);
}

TEST(NvmfConfig, ParseSize)
{
	uint64_t v;
	EXPECT_EQ(0, nvmf_parse_size("4096", &v));
	EXPECT_EQ(4096u, v);
	EXPECT_EQ(0, nvmf_parse_size("64k", &v));
	EXPECT_EQ(65536u, v);
	EXPECT_EQ(0, nvmf_parse_size("3M", &v));
	EXPECT_EQ(3u << 20, v);
	EXPECT_EQ(0, nvmf_parse_size("2G", &v));
	EXPECT_EQ(2ull << 30, v);
	EXPECT_EQ(0, nvmf_parse_size("1t", &v));
	EXPECT_EQ(1ull << 40, v);
	EXPECT_EQ(0, nvmf_parse_size("0", &v));
	EXPECT_EQ(0u, v);
	EXPECT_EQ(-EINVAL, nvmf_parse_size("", &v));
	EXPECT_EQ(-EINVAL, nvmf_parse_size("M", &v));
	EXPECT_EQ(-EINVAL, nvmf_parse_size("1MB", &v));
	EXPECT_EQ(-EINVAL, nvmf_parse_size("1X", &v));
	EXPECT_EQ(-EINVAL, nvmf_parse_size("-1", &v));
	EXPECT_EQ(-EINVAL, nvmf_parse_size("18446744073709551616", &v));
	EXPECT_EQ(-EINVAL, nvmf_parse_size("16777216T", &v));
}

TEST(NvmfConfig, NqnFormat)
{
	EXPECT_TRUE(nvmf_nqn_valid("nqn.2014-08.org.nvmexpress.discovery"));
	EXPECT_TRUE(nvmf_nqn_valid(kHost));
	EXPECT_TRUE(nvmf_nqn_valid("nqn.2024-12.io.wharf:a"));
	EXPECT_FALSE(nvmf_nqn_valid(nullptr));
	EXPECT_FALSE(nvmf_nqn_valid(""));
	EXPECT_FALSE(nvmf_nqn_valid("nqn.2024-13.io.w"));
	EXPECT_FALSE(nvmf_nqn_valid("nqn.2024-00.io.w"));
	EXPECT_FALSE(nvmf_nqn_valid("nqn.24-01.io.wharf"));
	EXPECT_FALSE(nvmf_nqn_valid("nqn.2024-01."));
	EXPECT_FALSE(nvmf_nqn_valid("nqm.2024-01.io.w"));
	EXPECT_FALSE(nvmf_nqn_valid("nqn.2024-01.io w"));
	EXPECT_TRUE(nvmf_nqn_valid(
		("nqn.2024-01.io.w:" + std::string(223 - 17, 'a')).c_str()));
	EXPECT_FALSE(nvmf_nqn_valid(
		("nqn.2024-01.io.w:" + std::string(224 - 17, 'a')).c_str()));
	char field[8] = {'a', 'b', 0, 'x', 'x', 'x', 'x', 'x'};
	EXPECT_EQ(2, nvmf_nqn_field(field, sizeof(field)));
	memset(field, 'a', sizeof(field));
	EXPECT_EQ(-1, nvmf_nqn_field(field, sizeof(field)));
	nvmf_ascii_field(field, sizeof(field), "abc");
	EXPECT_EQ(0, memcmp(field, "abc     ", 8)); // space padded, no NUL
	nvmf_ascii_field(field, sizeof(field), "0123456789");
	EXPECT_EQ(0, memcmp(field, "01234567", 8)); // truncated
}

} // namespace
