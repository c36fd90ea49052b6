// wharf-nvmf-tgt's management RPC (targets/nvmf/rpc.h) against a real core
// target: the JSON-RPC envelope and its errors, every method with its
// failures, allow-list changes that disconnect the hosts they revoke,
// save_config parsed back to the same text, the Unix socket server
// (requests back to back or split, garbage, oversized requests, clients
// that vanish, too many clients) and the wharf-nvmf-rpc client program.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include <string>
#include <vector>

#include "tests/unit/nvmf_test_util.h"

extern "C" {
#include "proto/nvme/auth.h"
#include "targets/nvmf/rpc.h"
}

namespace
{

using namespace nvmf_test;

// A parsed response; owns its reference.
struct Resp {
	json_t *doc = nullptr;
	explicit Resp(const char *text)
	{
		if (text)
			doc = json_loads(text, 0, nullptr);
	}
	~Resp()
	{
		json_decref(doc);
	}
	json_t *Result() const
	{
		return json_object_get(doc, "result");
	}
	int Code() const
	{
		return (int)json_integer_value(
			json_object_get(json_object_get(doc, "error"), "code"));
	}
	std::string Message() const
	{
		const char *m = json_string_value(json_object_get(
			json_object_get(doc, "error"), "message"));
		return m ? m : "";
	}
};

class NvmfRpc : public NvmfTest
{
      protected:
	nvmf_config cfg_;
	nvmf_rpc_env env_ = {};

	void SetUp() override
	{
		char err[256] = "";
		std::string text = DefaultConfig();
		NvmfTest::SetUp();
		ASSERT_EQ(0, nvmf_config_parse(text.data(), text.size(), "t",
					       &cfg_, err, sizeof(err)));
		env_.tgt = tgt_;
		env_.cfg = &cfg_;
	}

	void TearDown() override
	{
		NvmfTest::TearDown();
		nvmf_config_free(&cfg_);
	}

	std::string Raw(const std::string &req)
	{
		char *out = nvmf_rpc_handle(&env_, req.data(), req.size());
		std::string s = out ? out : "(none)";
		free(out);
		return s;
	}

	// METHOD with PARAMS (a JSON object's text, "" for none).
	std::string Call(const std::string &method,
			 const std::string &params = "")
	{
		return Raw("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"" +
			   method + "\"" +
			   (params.empty() ? "" : ",\"params\":" + params) +
			   "}");
	}

	// The subsystem @nqn of nvmf_get_subsystems, as compact JSON.
	std::string Subsys(const char *nqn, const char *member)
	{
		Resp r(Call("nvmf_get_subsystems").c_str());
		size_t i;
		json_t *s;
		json_array_foreach(r.Result(), i, s)
		{
			if (strcmp(json_string_value(json_object_get(s, "nqn")),
				   nqn))
				continue;
			char *t = json_dumps(json_object_get(s, member),
					     JSON_COMPACT | JSON_ENCODE_ANY);
			std::string out = t ? t : "";
			free(t);
			return out;
		}
		return "(no such subsystem)";
	}
};

TEST_F(NvmfRpc, EnvelopeErrorsAreJsonRpcErrors)
{
	struct {
		const char *req;
		int code;
		const char *message_part;
	} cases[] = {
		{"{\"jsonrpc\":", -32700, "parse error"},
		{"[1]", -32600, "batches are not supported"},
		{"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}", -32600,
		 "\"jsonrpc\" must be \"2.0\""},
		{"{\"jsonrpc\":\"2.0\",\"id\":1}", -32600,
		 "\"method\" must be a string"},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":3}", -32600,
		 "\"method\""},
		{"{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"x\"}", -32600,
		 "\"id\""},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", -32601,
		 "no method \"nope\""},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nvmf_get_stats\","
		 "\"params\":[1]}",
		 -32602, "\"params\" must be an object"},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nvmf_get_stats\","
		 "\"params\":{\"x\":1}}",
		 -32602, "unknown member \"x\""},
		{"{\"a\":1,\"a\":2}", -32700, "parse error"},
		{"\"x\"", -32600, "a request is a JSON object"},
		// No id, but not a valid request: answered (id null).
		{"{\"method\":1}", -32600, "\"jsonrpc\" must be \"2.0\""},
	};
	for (const auto &c : cases) {
		Resp r(Raw(c.req).c_str());
		ASSERT_NE(nullptr, r.doc) << c.req;
		EXPECT_EQ(c.code, r.Code()) << c.req;
		EXPECT_NE(std::string::npos, r.Message().find(c.message_part))
			<< c.req << " -> " << r.Message();
	}
	// The id comes back as sent; a notification gets no answer.
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":[\"rpc_get_methods\","
		  "\"nvmf_get_subsystems\",\"nvmf_subsystem_get_controllers\","
		  "\"nvmf_subsystem_get_qpairs\","
		  "\"nvmf_get_stats\",\"nvmf_subsystem_add_ns\","
		  "\"nvmf_subsystem_remove_ns\",\"nvmf_subsystem_add_host\","
		  "\"nvmf_subsystem_remove_host\","
		  "\"nvmf_subsystem_allow_any_host\",\"save_config\","
		  "\"nvmf_create_subsystem\",\"nvmf_delete_subsystem\","
		  "\"nvmf_subsystem_add_listener\","
		  "\"nvmf_subsystem_remove_listener\"],"
		  "\"id\":\"abc\"}",
		  Raw("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":"
		      "\"rpc_get_methods\"}"));
	EXPECT_EQ("(none)", Raw("{\"jsonrpc\":\"2.0\",\"method\":"
				"\"rpc_get_methods\"}"));
}

TEST_F(NvmfRpc, GetSubsystemsDescribesTheTarget)
{
	EXPECT_EQ("false", Subsys(kSub, "allow_any_host"));
	EXPECT_EQ(std::string("[{\"nqn\":\"") + kHost + "\"}]",
		  Subsys(kSub, "hosts"));
	EXPECT_EQ("\"SN-TEST\"", Subsys(kSub, "serial_number"));
	EXPECT_EQ("true", Subsys(kOpen, "allow_any_host"));
	std::string ns = Subsys(kSub, "namespaces");
	EXPECT_NE(std::string::npos,
		  ns.find("{\"nsid\":2,\"backing\":\"ram\",\"size\":1048576,"
			  "\"block_size\":4096,\"read_only\":false,\"state\":"
			  "\"active\""))
		<< ns;
	EXPECT_EQ("[{\"trtype\":\"RDMA\",\"adrfam\":\"IPv4\",\"traddr\":"
		  "\"198.18.0.1\",\"trsvcid\":\"4420\"},{\"trtype\":\"RDMA\","
		  "\"adrfam\":\"IPv6\",\"traddr\":\"fd00::1\",\"trsvcid\":"
		  "\"4421\"}]",
		  Subsys(NVME_DISC_NQN, "listen_addresses"));
}

TEST_F(NvmfRpc, NamespacesComeAndGoWhileAControllerIsConnected)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	(void)admin;
	std::string p = std::string("{\"nqn\":\"") + kSub + "\",";
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ("{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":7}",
			  Call("nvmf_subsystem_add_ns",
			       p + "\"nsid\":5,\"bdev\":\"ram:64K\","
				   "\"block_size\":4096}"))
			<< i;
		ASSERT_NE(std::string::npos,
			  Subsys(kSub, "namespaces").find("\"nsid\":5"));
		ASSERT_EQ("{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":7}",
			  Call("nvmf_subsystem_remove_ns", p + "\"nsid\":5}"))
			<< i;
	}
	EXPECT_EQ(std::string::npos,
		  Subsys(kSub, "namespaces").find("\"nsid\":5"));
	struct {
		std::string params;
		int code;
		const char *part;
	} bad[] = {
		{p + "\"nsid\":1,\"bdev\":\"ram:1M\"}", -EEXIST,
		 "namespace 1 of nqn.2024-01.io.wharf:test exists"},
		{p + "\"nsid\":6,\"bdev\":\"disk:1M\"}", -32602,
		 "namespace: backing \"disk:1M\" is not ram:SIZE"},
		{p + "\"nsid\":6,\"bdev\":\"ram:1000\"}", -32602,
		 "is not a multiple of the 512-byte block"},
		{p + "\"nsid\":0,\"bdev\":\"ram:1M\"}", -32602,
		 "\"nsid\": 0 is not 1..1024"},
		{p + "\"nsid\":\"6\",\"bdev\":\"ram:1M\"}", -32602,
		 "\"nsid\": must be an integer"},
		{p + "\"nsid\":6}", -32602, "\"bdev\": missing"},
		{p + "\"nsid\":6,\"bdev\":\"ram:1M io=direct\"}", -32602,
		 "single words"},
		{p + "\"nsid\":6,\"bdev\":\"file:/tmp/x\"}", -EOPNOTSUPP,
		 "need io_uring"},
		{"{\"nqn\":\"nqn.2024-01.io.wharf:none\",\"nsid\":6,\"bdev\":"
		 "\"ram:1M\"}",
		 -ENOENT, "no subsystem nqn.2024-01.io.wharf:none"},
		{std::string("{\"nqn\":\"") + NVME_DISC_NQN +
			 "\",\"nsid\":6,\"bdev\":\"ram:1M\"}",
		 -ENOENT, "no subsystem"},
	};
	for (const auto &b : bad) {
		Resp r(Call("nvmf_subsystem_add_ns", b.params).c_str());
		EXPECT_EQ(b.code, r.Code()) << b.params;
		EXPECT_NE(std::string::npos, r.Message().find(b.part))
			<< b.params << " -> " << r.Message();
	}
	Resp gone(Call("nvmf_subsystem_remove_ns", p + "\"nsid\":9}").c_str());
	EXPECT_EQ(-ENOENT, gone.Code());
	// The controller saw every change: its namespace notices piled up
	// in the Changed Namespace List (no AER was outstanding).
	EXPECT_EQ(1u, Stats().ctrls);
}

TEST_F(NvmfRpc, RemovingAHostDisconnectsIt)
{
	uint16_t cntlid;
	nvmf_queue *admin = Admin(kSub, &cntlid);
	nvmf_queue *io = Io(1, cntlid);
	std::string p = std::string("{\"nqn\":\"") + kSub + "\",\"host\":\"";
	Resp dup(Call("nvmf_subsystem_add_host", p + kHost + "\"}").c_str());
	EXPECT_EQ(-EEXIST, dup.Code());
	Resp inval(Call("nvmf_subsystem_add_host", p + "host1\"}").c_str());
	EXPECT_EQ(-32602, inval.Code());
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":7}",
		  Call("nvmf_subsystem_add_host", p + kStranger + "\"}"));
	// Any host cannot be switched on while hosts are listed.
	Resp any(Call("nvmf_subsystem_allow_any_host",
		      std::string("{\"nqn\":\"") + kSub +
			      "\",\"allow_any_host\":true}")
			 .c_str());
	EXPECT_EQ(-EPERM, any.Code());
	EXPECT_NE(std::string::npos, any.Message().find("remove them first"));
	// Removing kHost tears its controller down: every queue killed.
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":7}",
		  Call("nvmf_subsystem_remove_host", p + kHost + "\"}"));
	EXPECT_TRUE(fake_.WasKilled(admin));
	EXPECT_TRUE(fake_.WasKilled(io));
	Resp again(
		Call("nvmf_subsystem_remove_host", p + kHost + "\"}").c_str());
	EXPECT_EQ(-ENOENT, again.Code());
	// It cannot connect again; the host still listed can.
	nvmf_queue *q = NewQueue(0, 32);
	nvmf_req r = Connect(q, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC);
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_HOST, Sc(r));
	EXPECT_EQ(0, Status(Connect(q, 0, 31, kSub, kStranger,
				    NVME_CNTLID_DYNAMIC)));
	// The last host gone: nobody (save_config says allow-no-host).
	Call("nvmf_subsystem_remove_host", p + kStranger + "\"}");
	EXPECT_EQ("[]", Subsys(kSub, "hosts"));
}

TEST_F(NvmfRpc, AHostAddedWithASecretMustAuthenticate)
{
	// 32 bytes of 0x41, no transformation, as nvme gen-dhchap-key prints.
	nvme_auth_key k = {};
	char key[NVME_AUTH_KEY_TEXT_MAX];
	k.len = 32;
	memset(k.key, 0x41, 32);
	ASSERT_GT(nvme_auth_key_format(&k, key, sizeof(key)), 0);
	std::string p = std::string("{\"nqn\":\"") + kSub + "\",\"host\":\"" +
			kStranger + "\"";
	Resp bad(Call("nvmf_subsystem_add_host",
		      p + ",\"dhchap_key\":\"DHHC-1:00:abc:\"}")
			 .c_str());
	EXPECT_EQ(-32602, bad.Code());
	EXPECT_NE(std::string::npos, bad.Message().find("\"dhchap_key\""))
		<< bad.Message();
	Resp lone(Call("nvmf_subsystem_add_host",
		       p + ",\"dhchap_hash\":\"sha512\"}")
			  .c_str());
	EXPECT_EQ(-32602, lone.Code());
	EXPECT_NE(std::string::npos, lone.Message().find("need a dhchap-key"));
	ASSERT_EQ("{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":7}",
		  Call("nvmf_subsystem_add_host",
		       p + ",\"dhchap_key\":\"" + key +
			       "\",\"dhchap_dhgroup\":\"ffdhe3072\"}"));
	// Listed as authenticating; the secret itself is never shown.
	std::string hosts = Subsys(kSub, "hosts");
	EXPECT_NE(std::string::npos,
		  hosts.find(std::string("{\"nqn\":\"") + kStranger +
			     "\",\"dhchap\":true,\"dhchap_ctrlr\":false}"))
		<< hosts;
	EXPECT_EQ(std::string::npos, hosts.find("DHHC-1")) << hosts;
	// Its Connect asks for authentication; save_config keeps the secret.
	nvmf_queue *q = NewQueue(0, 32);
	nvmf_req r = Connect(q, 0, 31, kSub, kStranger, NVME_CNTLID_DYNAMIC);
	ASSERT_EQ(0, Status(r));
	EXPECT_TRUE(r.rsp.result & NVME_CONNECT_AUTHREQ_ATR);
	Resp saved(Call("save_config").c_str());
	std::string text =
		json_string_value(json_object_get(saved.Result(), "config"));
	EXPECT_NE(std::string::npos,
		  text.find(std::string("allow-host ") + kStranger +
			    " dhchap-key=" + key +
			    " dhchap-dhgroup=ffdhe3072\n"))
		<< text;
}

TEST_F(NvmfRpc, AllowAnyHostOffDisconnectsTheUnlisted)
{
	nvmf_queue *q = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(q, 0, 31, kOpen, kStranger,
				    NVME_CNTLID_DYNAMIC)));
	std::string p = std::string("{\"nqn\":\"") + kOpen + "\"";
	Resp add(Call("nvmf_subsystem_add_host",
		      p + ",\"host\":\"" + kHost + "\"}")
			 .c_str());
	EXPECT_EQ(-EPERM, add.Code());
	EXPECT_NE(std::string::npos,
		  add.Message().find("allow_any_host false"));
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":7}",
		  Call("nvmf_subsystem_allow_any_host",
		       p + ",\"allow_any_host\":false}"));
	EXPECT_TRUE(fake_.WasKilled(q));
	Resp bad(Call("nvmf_subsystem_allow_any_host",
		      p + ",\"allow_any_host\":1}")
			 .c_str());
	EXPECT_EQ(-32602, bad.Code());
}

TEST_F(NvmfRpc, ControllersAndStats)
{
	uint16_t cntlid;
	Admin(kSub, &cntlid);
	Resp c(Call("nvmf_subsystem_get_controllers",
		    std::string("{\"nqn\":\"") + kSub + "\"}")
		       .c_str());
	ASSERT_EQ(1u, json_array_size(c.Result()));
	json_t *ctrl = json_array_get(c.Result(), 0);
	EXPECT_EQ(cntlid, json_integer_value(json_object_get(ctrl, "cntlid")));
	EXPECT_STREQ(kHost,
		     json_string_value(json_object_get(ctrl, "hostnqn")));
	EXPECT_STREQ("abababab-abab-abab-abab-abababababab",
		     json_string_value(json_object_get(ctrl, "hostid")));
	EXPECT_EQ(1, json_integer_value(json_object_get(ctrl, "queues")));
	EXPECT_STREQ("live", json_string_value(json_object_get(ctrl, "state")));
	Resp s(Call("nvmf_get_stats").c_str());
	EXPECT_EQ(1, json_integer_value(json_object_get(s.Result(), "ctrls")));
	EXPECT_EQ(nullptr, json_object_get(s.Result(), "transport"));
	env_.stats = [](void *, void (*add)(void *, const char *, uint64_t),
			void *ctx) { add(ctx, "capsules", 42); };
	Resp t(Call("nvmf_get_stats").c_str());
	EXPECT_EQ(42, json_integer_value(json_object_get(
			      json_object_get(t.Result(), "transport"),
			      "capsules")));
}

// Per queue: commands, errors and the latency histogram; per subsystem:
// Connects created and refused, and its queues' commands.
TEST_F(NvmfRpc, QpairsAndSubsystemStats)
{
	uint16_t cntlid;
	nvmf_queue *aq = Admin(kSub, &cntlid);
	nvmf_queue *io = Io(1, cntlid);
	// A host the subsystem does not let in.
	nvmf_queue *q2 = NewQueue(0, 32);
	EXPECT_NE(0, Status(Connect(q2, 0, 31, kSub, kStranger,
				    NVME_CNTLID_DYNAMIC)));
	// A command the controller does not know: an error.
	EXPECT_NE(0, Status(Exec(aq, Cmd(0xFF, 11))));
	EXPECT_EQ(0, Status(PropGet(aq, NVME_PROP_CSTS, NVME_PROP_SIZE_4)));
	EXPECT_EQ(0, Status(Exec(io, Cmd(NVME_IO_FLUSH, 12, 1))));

	Resp qp(Call("nvmf_subsystem_get_qpairs",
		     std::string("{\"nqn\":\"") + kSub + "\"}")
			.c_str());
	ASSERT_EQ(2u, json_array_size(qp.Result()));
	uint64_t all = 0;
	for (size_t i = 0; i < 2; i++) {
		json_t *q = json_array_get(qp.Result(), i);
		uint64_t qid = json_integer_value(json_object_get(q, "qid"));
		uint64_t cmds =
			json_integer_value(json_object_get(q, "commands"));
		json_t *lat = json_object_get(q, "latency_us");
		uint64_t in_hist = 0;
		size_t j;
		json_t *b;

		EXPECT_EQ(cntlid,
			  json_integer_value(json_object_get(q, "cntlid")));
		// Admin: Connect, Property Set CC, the bad one, Property Get;
		// I/O: Connect, Flush.
		EXPECT_EQ(qid == 0 ? 4u : 2u, cmds) << qid;
		EXPECT_EQ(qid == 0 ? 0 : 1,
			  json_integer_value(json_object_get(q, "flush_cmds")));
		EXPECT_EQ(qid == 0 ? 1 : 0,
			  json_integer_value(json_object_get(q, "errors")));
		json_array_foreach(json_object_get(lat, "histogram"), j, b)
		{
			in_hist +=
				json_integer_value(json_object_get(b, "count"));
			EXPECT_TRUE(
				json_is_integer(json_object_get(b, "le_us")));
		}
		EXPECT_EQ(cmds, in_hist) << "every command in the histogram";
		EXPECT_GT(json_integer_value(json_object_get(lat, "p50")), 0);
		EXPECT_GE(json_integer_value(json_object_get(lat, "p99_9")),
			  json_integer_value(json_object_get(lat, "p50")));
		all += cmds;
	}

	Resp s(Call("nvmf_get_stats").c_str());
	json_t *sub = nullptr, *e;
	size_t i;
	json_array_foreach(json_object_get(s.Result(), "subsystems"), i, e)
	{
		if (!strcmp(kSub, json_string_value(json_object_get(e, "nqn"))))
			sub = e;
	}
	ASSERT_NE(nullptr, sub);
	EXPECT_EQ(1, json_integer_value(json_object_get(sub, "controllers")));
	EXPECT_EQ(1, json_integer_value(json_object_get(sub, "connects")));
	EXPECT_EQ(1, json_integer_value(
			     json_object_get(sub, "refused_host_not_allowed")));
	EXPECT_EQ(0, json_integer_value(json_object_get(sub, "refused_other")));
	EXPECT_EQ(all, (uint64_t)json_integer_value(
			       json_object_get(sub, "commands")));
	EXPECT_EQ(1, json_integer_value(json_object_get(sub, "errors")));
	// A queue that goes keeps its commands in its subsystem's count.
	DestroyQueue(io);
	Resp t(Call("nvmf_get_stats").c_str());
	json_array_foreach(json_object_get(t.Result(), "subsystems"), i, e)
	{
		if (!strcmp(kSub,
			    json_string_value(json_object_get(e, "nqn")))) {
			EXPECT_EQ(all, (uint64_t)json_integer_value(
					       json_object_get(e, "commands")));
		}
	}
	DestroyQueue(q2);
}

TEST_F(NvmfRpc, SaveConfigRestartsTheSameTarget)
{
	std::string p = std::string("{\"nqn\":\"") + kSub + "\",";
	Call("nvmf_subsystem_add_ns",
	     p + "\"nsid\":7,\"bdev\":\"null:1G\",\"block_size\":4096}");
	Call("nvmf_subsystem_remove_ns", p + "\"nsid\":1}");
	Call("nvmf_subsystem_remove_host", p + "\"host\":\"" + kHost + "\"}");
	char dir[] = "/tmp/wharf-rpc-save-XXXXXX";
	ASSERT_NE(nullptr, mkdtemp(dir));
	std::string path = std::string(dir) + "/tgt.conf";
	Resp r(Call("save_config", "{\"path\":\"" + path + "\"}").c_str());
	ASSERT_NE(nullptr, r.Result()) << r.Message();
	std::string text =
		json_string_value(json_object_get(r.Result(), "config"));
	EXPECT_NE(std::string::npos, text.find("  namespace 7 null:1073741824 "
					       "block=4096\n"));
	size_t blk = text.find(std::string("subsystem ") + kSub + "\n");
	ASSERT_NE(std::string::npos, blk) << text;
	std::string sub =
		text.substr(blk, text.find("\nsubsystem ", blk) - blk);
	EXPECT_EQ(std::string::npos, sub.find("namespace 1 ")) << sub;
	EXPECT_NE(std::string::npos, sub.find("namespace 2 ram:1048576 "
					      "block=4096\n"))
		<< sub;
	EXPECT_NE(std::string::npos, text.find("  allow-no-host\n"));
	struct stat st;
	ASSERT_EQ(0, stat(path.c_str(), &st));
	EXPECT_EQ(0600u, st.st_mode & 0777);
	EXPECT_EQ((off_t)text.size(), st.st_size);
	// Parsed back and saved again: the same text.
	nvmf_config again;
	char err[256] = "";
	ASSERT_EQ(0, nvmf_config_load(path.c_str(), &again, err, sizeof(err)))
		<< err << "\n"
		<< text;
	nvmf_tgt_ops ops = Fake::Ops();
	Fake fake;
	nvmf_tgt *t2 = nullptr;
	ASSERT_EQ(0,
		  nvmf_tgt_create(&again, &ops, &fake, &t2, err, sizeof(err)))
		<< err;
	char *text2 = nullptr;
	ASSERT_EQ(0, nvmf_tgt_save_config(t2, &again, &text2, nullptr));
	EXPECT_EQ(text, std::string(text2));
	free(text2);
	EXPECT_EQ(0, nvmf_tgt_destroy(t2));
	nvmf_config_free(&again);
	Resp bad(Call("save_config", "{\"path\":\"/nonexistent/dir/x\"}")
			 .c_str());
	EXPECT_EQ(-ENOENT, bad.Code());
	unlink(path.c_str());
	rmdir(dir);
}

TEST_F(NvmfRpc, SubsystemsAreCreatedAndDeletedWhileHostsRun)
{
	const char *nqn = "nqn.2024-01.io.wharf:new";
	std::string p = std::string("{\"nqn\":\"") + nqn + "\"";
	const std::string ok = "{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":7}";
	ASSERT_EQ(ok, Call("nvmf_create_subsystem",
			   p + ",\"serial_number\":\"SN-NEW\","
			       "\"model_number\":\"a new disk\"}"));
	EXPECT_EQ("\"SN-NEW\"", Subsys(nqn, "serial_number"));
	EXPECT_EQ("false", Subsys(nqn, "allow_any_host"));
	EXPECT_EQ("[]", Subsys(nqn, "namespaces"));
	// On no listener until one is added (as in SPDK).
	listener_ = 1;
	nvmf_queue *q = NewQueue(0, 32);
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM,
		  Sc(Connect(q, 0, 31, nqn, kHost, NVME_CNTLID_DYNAMIC)));
	EXPECT_EQ("[]", Subsys(nqn, "listen_addresses"));
	ASSERT_EQ(ok, Call("nvmf_subsystem_add_listener",
			   p + ",\"listen_address\":{\"traddr\":"
			       "\"198.18.0.1\",\"trsvcid\":\"4420\"}}"));
	// Closed until a host is added; then that host gets a controller.
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_HOST,
		  Sc(Connect(q, 0, 31, nqn, kHost, NVME_CNTLID_DYNAMIC)));
	ASSERT_EQ(ok, Call("nvmf_subsystem_add_host",
			   p + ",\"host\":\"" + kHost + "\"}"));
	ASSERT_EQ(ok, Call("nvmf_subsystem_add_ns",
			   p + ",\"nsid\":1,\"bdev\":\"ram:64K\"}"));
	uint16_t cntlid;
	nvmf_queue *admin = Admin(nqn, &cntlid);
	nvmf_queue *io = Io(1, cntlid, 32, nqn);
	// A controller of another subsystem is not touched by the delete.
	uint16_t other;
	nvmf_queue *keep = Admin(kSub, &other);
	struct {
		const char *method;
		std::string params;
		int code;
		const char *part;
	} bad[] = {
		{"nvmf_create_subsystem", p + "}", -EEXIST, "exists already"},
		{"nvmf_create_subsystem", "{\"nqn\":\"not-an-nqn\"}", -32602,
		 "is not a valid NQN"},
		{"nvmf_create_subsystem",
		 std::string("{\"nqn\":\"") + NVME_DISC_NQN + "\"}", -32602,
		 "discovery"},
		{"nvmf_create_subsystem",
		 "{\"nqn\":\"nqn.2024-01.io.wharf:x\",\"serial_number\":"
		 "\"has space\"}",
		 -32602, "no space"},
		{"nvmf_create_subsystem",
		 "{\"nqn\":\"nqn.2024-01.io.wharf:x\",\"model_number\":"
		 "\"two  spaces\"}",
		 -32602, "single spaces"},
		{"nvmf_create_subsystem",
		 "{\"nqn\":\"nqn.2024-01.io.wharf:x\",\"allow_any_host\":1}",
		 -32602, "true or false"},
		{"nvmf_create_subsystem",
		 "{\"nqn\":\"nqn.2024-01.io.wharf:x\",\"ns\":1}", -32602,
		 "unknown member \"ns\""},
		{"nvmf_create_subsystem",
		 "{\"nqn\":\"nqn.2024-01.io.wharf:x\",\"serial_number\":"
		 "\"#1\"}",
		 -32602, "not starting with #"},
		{"nvmf_create_subsystem",
		 "{\"nqn\":\"nqn.2024-01.io.wharf:x\",\"model_number\":"
		 "\"disk #2\"}",
		 -32602, "no word starting with #"},
		{"nvmf_delete_subsystem",
		 "{\"nqn\":\"nqn.2024-01.io.wharf:no\"}", -ENOENT,
		 "no subsystem"},
		{"nvmf_delete_subsystem",
		 std::string("{\"nqn\":\"") + NVME_DISC_NQN + "\"}", -ENOENT,
		 "no subsystem"},
	};
	for (const auto &b : bad) {
		Resp r(Call(b.method, b.params).c_str());
		EXPECT_EQ(b.code, r.Code()) << b.method << " " << b.params;
		EXPECT_NE(std::string::npos, r.Message().find(b.part))
			<< b.params << " -> " << r.Message();
	}
	// The delete kills the controller's queues; the test's binding
	// destroys them later, so the subsystem waits on tgt->dead.
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":7}",
		  Call("nvmf_delete_subsystem", p + "}"));
	EXPECT_TRUE(fake_.WasKilled(admin));
	EXPECT_TRUE(fake_.WasKilled(io));
	EXPECT_FALSE(fake_.WasKilled(keep));
	EXPECT_EQ("(no such subsystem)", Subsys(nqn, "nqn"));
	nvmf_queue *late = NewQueue(0, 32);
	nvmf_req r = Connect(late, 0, 31, nqn, kHost, NVME_CNTLID_DYNAMIC);
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM, Sc(r));
	// The test's binding never destroyed the killed queues, so the
	// delete gave up waiting (5 s) and parked the subsystem. Their queues
	// gone, the next change frees it (under ASan, a use after free
	// would show here).
	DestroyQueue(io);
	DestroyQueue(admin);
	EXPECT_EQ(1u, Stats().ctrls); // kSub's
	// Created again under the same name: a new, empty subsystem.
	ASSERT_EQ(ok, Call("nvmf_create_subsystem",
			   p + ",\"allow_any_host\":true}"));
	EXPECT_EQ("[]", Subsys(nqn, "namespaces"));
	EXPECT_EQ("true", Subsys(nqn, "allow_any_host"));
}

TEST_F(NvmfRpc, ListenersAreAddedAndRemovedPerSubsystem)
{
	std::string p = std::string("{\"nqn\":\"") + kSub + "\"";
	auto la = [](const char *addr, const char *port) {
		return std::string(",\"listen_address\":{\"trtype\":\"RDMA\","
				   "\"adrfam\":\"IPv4\",\"traddr\":\"") +
		       addr + "\",\"trsvcid\":\"" + port + "\"}}";
	};
	const std::string ok = "{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":7}";
	// kSub has no export lines: it is on both listen lines. Adding a
	// new address starts a listener it is served on too.
	ASSERT_EQ(ok, Call("nvmf_subsystem_add_listener",
			   p + la("198.18.0.2", "4430")));
	std::string addrs = Subsys(kSub, "listen_addresses");
	EXPECT_NE(std::string::npos, addrs.find("\"198.18.0.2\"")) << addrs;
	EXPECT_NE(std::string::npos,
		  Subsys(NVME_DISC_NQN, "listen_addresses").find("198.18.0.2"));
	// A host connected through the new listener (slot 3).
	listener_ = 3;
	uint16_t cntlid;
	nvmf_queue *via3 = Admin(kSub, &cntlid);
	listener_ = 1;
	uint16_t c1;
	nvmf_queue *via1 = Admin(kSub, &c1);
	// Taking kSub off the new address disconnects that host only; the
	// address has nothing else to serve (kOpen and kOther export...
	// everything: they have no export lines), so it stays.
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":7}",
		  Call("nvmf_subsystem_remove_listener",
		       p + la("198.18.0.2", "4430")));
	EXPECT_TRUE(fake_.WasKilled(via3));
	EXPECT_FALSE(fake_.WasKilled(via1));
	addrs = Subsys(kSub, "listen_addresses");
	EXPECT_EQ(std::string::npos, addrs.find("198.18.0.2")) << addrs;
	// kSub now has export lines for the other two; a Connect through
	// slot 3 no longer finds it.
	listener_ = 3;
	nvmf_queue *q = NewQueue(0, 32);
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM,
		  Sc(Connect(q, 0, 31, kSub, kHost, NVME_CNTLID_DYNAMIC)));
	listener_ = 1;
	struct {
		const char *method;
		std::string params;
		int code;
		const char *part;
	} bad[] = {
		{"nvmf_subsystem_remove_listener", p + la("198.18.0.2", "4430"),
		 -ENOENT, "is not exported on 198.18.0.2 4430"},
		{"nvmf_subsystem_remove_listener", p + la("198.18.0.9", "4430"),
		 -ENOENT, "does not listen on 198.18.0.9 4430"},
		{"nvmf_subsystem_add_listener", p + la("198.18.0.1", "4420"),
		 -EEXIST, "exported on 198.18.0.1 4420 already"},
		{"nvmf_subsystem_add_listener", p + la("300.1.1.1", "4420"),
		 -32602, "is not a numeric IPv4 address"},
		{"nvmf_subsystem_add_listener", p + la("198.18.0.1", "0"),
		 -32602, "\"trsvcid\": a port"},
		{"nvmf_subsystem_add_listener", p + la("198.18.0.1", "44x"),
		 -32602, "\"trsvcid\": a port"},
		{"nvmf_subsystem_add_listener",
		 p + ",\"listen_address\":{\"trtype\":\"TCP\",\"traddr\":"
		     "\"198.18.0.1\"}}",
		 -32602, "only RDMA"},
		{"nvmf_subsystem_add_listener",
		 p + ",\"listen_address\":{\"traddr\":\"198.18.0.1\",\"x\":1}}",
		 -32602, "unknown member \"x\""},
		{"nvmf_subsystem_add_listener", p + ",\"listen_address\":3}",
		 -32602, "must be an object"},
		{"nvmf_subsystem_add_listener", p + "}", -32602, "missing"},
	};
	for (const auto &b : bad) {
		Resp r(Call(b.method, b.params).c_str());
		EXPECT_EQ(b.code, r.Code()) << b.method << " " << b.params;
		EXPECT_NE(std::string::npos, r.Message().find(b.part))
			<< b.params << " -> " << r.Message();
	}
	// Its last listener may go: it is then served nowhere, and
	// save_config says so (export-none).
	ASSERT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":0},"
		  "\"id\":7}",
		  Call("nvmf_subsystem_remove_listener",
		       p + ",\"listen_address\":{\"adrfam\":\"IPv6\","
			   "\"traddr\":\"fd00::1\",\"trsvcid\":4421}}"));
	Resp nowhere(Call("save_config").c_str());
	std::string none_text =
		json_string_value(json_object_get(nowhere.Result(), "config"));
	EXPECT_EQ(std::string::npos, none_text.find("  export-none\n"));
	ASSERT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":7}",
		  Call("nvmf_subsystem_remove_listener",
		       p + la("198.18.0.1", "4420")));
	EXPECT_TRUE(fake_.WasKilled(via1));
	EXPECT_EQ("[]", Subsys(kSub, "listen_addresses"));
	Resp none(Call("save_config").c_str());
	none_text = json_string_value(json_object_get(none.Result(), "config"));
	EXPECT_NE(std::string::npos, none_text.find("  export-none\n"))
		<< none_text;
	ASSERT_EQ(ok, Call("nvmf_subsystem_add_listener",
			   p + la("198.18.0.1", "4420")));
	// save_config writes the added address and kSub's one export line.
	Resp saved(Call("save_config").c_str());
	std::string text =
		json_string_value(json_object_get(saved.Result(), "config"));
	EXPECT_NE(std::string::npos, text.find("listen 198.18.0.2 4430\n"))
		<< text;
	EXPECT_NE(std::string::npos, text.find("  export 198.18.0.1 4420\n"))
		<< text;
}

TEST_F(NvmfRpc, AListenerNobodyServesOnStops)
{
	// Give every subsystem export lines, then add and remove an address
	// only kOther is exported on: the listener itself goes.
	for (const char *nqn : {kSub, kOpen, kOther})
		ASSERT_EQ(
			"{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":0},"
			"\"id\":7}",
			Call("nvmf_subsystem_remove_listener",
			     std::string("{\"nqn\":\"") + nqn +
				     "\",\"listen_address\":{\"traddr\":"
				     "\"fd00::1\",\"trsvcid\":\"4421\"}}"));
	std::string p = std::string("{\"nqn\":\"") + kOther + "\"";
	std::string la = ",\"listen_address\":{\"traddr\":\"198.18.0.3\","
			 "\"trsvcid\":\"4440\"}}";
	ASSERT_EQ("{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":7}",
		  Call("nvmf_subsystem_add_listener", p + la));
	// fd00::1 had nobody left: it stopped, so the new address took the
	// lowest free slot, 2.
	listener_ = 2;
	nvmf_queue *disc = NewQueue(0, 32);
	ASSERT_EQ(0, Status(Connect(disc, 0, 31, NVME_DISC_NQN, kHost,
				    NVME_CNTLID_DYNAMIC)));
	nvmf_queue *early = NewQueue(0, 32); // no Connect yet
	EXPECT_EQ("{\"jsonrpc\":\"2.0\",\"result\":{\"disconnected\":1},"
		  "\"id\":7}",
		  Call("nvmf_subsystem_remove_listener", p + la));
	EXPECT_TRUE(fake_.WasKilled(disc)); // its discovery controller too
	std::string addrs = Subsys(NVME_DISC_NQN, "listen_addresses");
	EXPECT_EQ("[{\"trtype\":\"RDMA\",\"adrfam\":\"IPv4\",\"traddr\":"
		  "\"198.18.0.1\",\"trsvcid\":\"4420\"}]",
		  addrs);
	// early came in through the old slot 2 and has not sent Connect:
	// slot 2 now holds another address, which it must not be taken for.
	listener_ = 1;
	nvmf_cfg_listen l = {};
	snprintf(l.addr, sizeof(l.addr), "198.18.0.4");
	l.family = AF_INET;
	l.port = 4450;
	uint16_t slot = 0;
	ASSERT_EQ(0, nvmf_tgt_listener_add(tgt_, &l, &slot));
	EXPECT_EQ(2, slot);
	// Reserved, not live: not listed, not matched.
	EXPECT_EQ(addrs, Subsys(NVME_DISC_NQN, "listen_addresses"));
	ASSERT_EQ(0, nvmf_tgt_listener_commit(tgt_, slot, true));
	EXPECT_NE(std::string::npos,
		  Subsys(NVME_DISC_NQN, "listen_addresses").find("198.18.0.4"));
	EXPECT_EQ(NVME_SC_CONNECT_INVALID_PARAM,
		  Sc(Connect(early, 0, 31, NVME_DISC_NQN, kHost,
			     NVME_CNTLID_DYNAMIC)));
	// A binding that failed to listen gives its reservation back.
	snprintf(l.addr, sizeof(l.addr), "198.18.0.5");
	ASSERT_EQ(0, nvmf_tgt_listener_add(tgt_, &l, &slot));
	EXPECT_EQ(3, slot);
	ASSERT_EQ(0, nvmf_tgt_listener_commit(tgt_, slot, false));
	EXPECT_EQ(-ENOENT, nvmf_tgt_listener_commit(tgt_, slot, true));
	EXPECT_EQ(std::string::npos,
		  Subsys(NVME_DISC_NQN, "listen_addresses").find("198.18.0.5"));
}

TEST_F(NvmfRpc, TheLastListenerAndSubsystemStay)
{
	// Every subsystem on 198.18.0.1 only, then taken off it: the
	// address stays (a saved configuration needs a listen line).
	for (const char *nqn : {kSub, kOpen, kOther}) {
		std::string p = std::string("{\"nqn\":\"") + nqn + "\"";
		Call("nvmf_subsystem_remove_listener",
		     p + ",\"listen_address\":{\"traddr\":\"fd00::1\","
			 "\"trsvcid\":\"4421\"}}");
		Call("nvmf_subsystem_remove_listener",
		     p + ",\"listen_address\":{\"traddr\":\"198.18.0.1\","
			 "\"trsvcid\":\"4420\"}}");
	}
	EXPECT_EQ("[{\"trtype\":\"RDMA\",\"adrfam\":\"IPv4\",\"traddr\":"
		  "\"198.18.0.1\",\"trsvcid\":\"4420\"}]",
		  Subsys(NVME_DISC_NQN, "listen_addresses"));
	// The last subsystem cannot be deleted, for the same reason.
	Call("nvmf_delete_subsystem",
	     std::string("{\"nqn\":\"") + kOpen + "\"}");
	Call("nvmf_delete_subsystem",
	     std::string("{\"nqn\":\"") + kOther + "\"}");
	Resp last(Call("nvmf_delete_subsystem",
		       std::string("{\"nqn\":\"") + kSub + "\"}")
			  .c_str());
	EXPECT_EQ(-EBUSY, last.Code());
	EXPECT_NE(std::string::npos, last.Message().find("last subsystem"));
	// What is saved parses back.
	Resp saved(Call("save_config").c_str());
	std::string text =
		json_string_value(json_object_get(saved.Result(), "config"));
	nvmf_config again;
	char err[256] = "";
	EXPECT_EQ(0, nvmf_config_parse(text.data(), text.size(), "saved",
				       &again, err, sizeof(err)))
		<< err << "\n"
		<< text;
	EXPECT_EQ(0, nvmf_config_finish(&again, err, sizeof(err)))
		<< err << "\n"
		<< text;
	nvmf_config_free(&again);
}

TEST_F(NvmfRpc, SaveConfigWritesCpuRuns)
{
	nvmf_config c = cfg_; // the global lines only are read
	const int cpus[] = {0, 1, 2, 3, 8, 10, 11, 5};
	memcpy(c.cpus, cpus, sizeof(cpus));
	c.ncpus = 8;
	c.shards = 8;
	char *text = nullptr;
	ASSERT_EQ(0, nvmf_tgt_save_config(tgt_, &c, &text, nullptr));
	EXPECT_NE(nullptr, strstr(text, "\nshards 8\ncpus 0-3,8,10-11,5\n"))
		<< text;
	free(text);
}

TEST(NvmfRpcClient, NameValueWordsBecomeTypedParams)
{
	char err[256] = "";
	std::vector<std::string> w = {
		"nsid=2",  "bdev=ram:64M", "allow_any_host=true",
		"s=\"5\"", "o={\"a\":1}",  "host=nqn.x:y=z"};
	std::vector<char *> argv;
	for (auto &s : w)
		argv.push_back(&s[0]);
	char *req = nvmf_rpc_build_request("m", argv.data(), (int)argv.size(),
					   3, err, sizeof(err));
	ASSERT_NE(nullptr, req) << err;
	EXPECT_STREQ("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{"
		     "\"nsid\":2,\"bdev\":\"ram:64M\",\"allow_any_host\":true,"
		     "\"s\":\"5\",\"o\":{\"a\":1},\"host\":\"nqn.x:y=z\"},"
		     "\"id\":3}",
		     req);
	free(req);
	for (const char *badw : {"novalue", "=x"}) {
		std::string b = badw;
		char *a[] = {&b[0]};
		EXPECT_EQ(nullptr, nvmf_rpc_build_request("m", a, 1, 1, err,
							  sizeof(err)));
		EXPECT_NE(std::string::npos,
			  std::string(err).find("is not NAME=VALUE"));
	}
	std::string d1 = "a=1", d2 = "a=2";
	char *dd[] = {&d1[0], &d2[0]};
	EXPECT_EQ(nullptr,
		  nvmf_rpc_build_request("m", dd, 2, 1, err, sizeof(err)));
	EXPECT_STREQ("a given twice", err);
}

// The socket server, with a client of raw bytes.
class NvmfRpcServer : public NvmfRpc
{
      protected:
	std::string path_;
	nvmf_rpc_server *srv_ = nullptr;

	void SetUp() override
	{
		NvmfRpc::SetUp();
		char dir[] = "/tmp/wharf-rpc-XXXXXX";
		ASSERT_NE(nullptr, mkdtemp(dir));
		path_ = std::string(dir) + "/sock";
		ASSERT_EQ(0,
			  nvmf_rpc_server_start(path_.c_str(), &env_, &srv_));
	}

	void TearDown() override
	{
		nvmf_rpc_server_stop(srv_);
		struct stat st;
		EXPECT_NE(0, stat(path_.c_str(), &st)); // removed
		rmdir(path_.substr(0, path_.rfind('/')).c_str());
		NvmfRpc::TearDown();
	}

	int Dial()
	{
		sockaddr_un sa = {};
		sa.sun_family = AF_UNIX;
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path_.c_str());
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		EXPECT_EQ(0, connect(fd, (sockaddr *)&sa, sizeof(sa)));
		return fd;
	}

	static void Send(int fd, const std::string &s)
	{
		EXPECT_EQ((ssize_t)s.size(),
			  send(fd, s.data(), s.size(), MSG_NOSIGNAL));
	}

	// Everything until @lines newlines or EOF (10 s at most).
	static std::string Recv(int fd, int lines, bool *eof = nullptr)
	{
		std::string out;
		char buf[4096];
		if (eof)
			*eof = false;
		while (std::count(out.begin(), out.end(), '\n') < lines) {
			pollfd p = {fd, POLLIN, 0};
			if (poll(&p, 1, 10000) != 1)
				break;
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n <= 0) {
				if (eof)
					*eof = true;
				break;
			}
			out.append(buf, (size_t)n);
		}
		return out;
	}

	static std::string Req(const char *method, int id)
	{
		return std::string("{\"jsonrpc\":\"2.0\",\"id\":") +
		       std::to_string(id) + ",\"method\":\"" + method + "\"}";
	}
};

TEST_F(NvmfRpcServer, RequestsBackToBackSplitAndBad)
{
	struct stat st;
	ASSERT_EQ(0, stat(path_.c_str(), &st));
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	EXPECT_EQ(0600u, st.st_mode & 0777);
	int fd = Dial();
	// Two in one write, a notification between them (no answer).
	Send(fd,
	     Req("nvmf_get_stats", 1) +
		     "\n{\"jsonrpc\":\"2.0\",\"method\":\"nvmf_get_stats\"}" +
		     Req("rpc_get_methods", 2));
	std::string two = Recv(fd, 2);
	EXPECT_NE(std::string::npos, two.find("\"id\":1}\n")) << two;
	EXPECT_NE(std::string::npos, two.find("\"id\":2}\n")) << two;
	// One request in three pieces.
	std::string r = Req("nvmf_get_subsystems", 3);
	Send(fd, r.substr(0, 5));
	Send(fd, r.substr(5, 20));
	usleep(20000);
	Send(fd, r.substr(25));
	EXPECT_NE(std::string::npos, Recv(fd, 1).find("\"id\":3}\n"));
	// Cut inside a literal and inside a UTF-8 character ("é").
	std::string lit =
		std::string("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
			    "\"nvmf_subsystem_allow_any_host\","
			    "\"params\":{\"nqn\":\"") +
		kOpen + "\",\"allow_any_host\":tr";
	Send(fd, lit);
	usleep(20000);
	Send(fd, "ue}}{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"caf\xc3");
	usleep(20000);
	Send(fd, "\xa9\"}");
	std::string two2 = Recv(fd, 2);
	EXPECT_NE(std::string::npos,
		  two2.find("\"result\":{\"disconnected\":0},"
			    "\"id\":6}\n"))
		<< two2;
	EXPECT_NE(std::string::npos, two2.find("no method \\\"caf\xc3\xa9\\\""))
		<< two2;
	// Garbage: a parse error, then the connection is closed.
	Send(fd, "{\"jsonrpc\" 2}");
	bool eof;
	std::string e = Recv(fd, 2, &eof);
	EXPECT_NE(std::string::npos, e.find("\"code\":-32700")) << e;
	EXPECT_TRUE(eof);
	close(fd);
	// A request that never ends within 1 MiB.
	fd = Dial();
	std::string huge = "{\"jsonrpc\":\"2.0\",\"x\":\"" +
			   std::string(NVMF_RPC_MAX_REQUEST + 10, 'a');
	send(fd, huge.data(), huge.size(), MSG_NOSIGNAL);
	e = Recv(fd, 2, &eof);
	EXPECT_NE(std::string::npos, e.find("larger than")) << e.substr(0, 200);
	EXPECT_TRUE(eof);
	close(fd);
	// A client gone mid-request leaves the server serving.
	fd = Dial();
	Send(fd, "{\"jsonrpc\":\"2.0\",\"id\":4,\"meth");
	close(fd);
	fd = Dial();
	Send(fd, Req("rpc_get_methods", 5));
	EXPECT_NE(std::string::npos, Recv(fd, 1).find("\"id\":5}"));
	close(fd);
}

TEST_F(NvmfRpcServer, AtMostSixteenClients)
{
	std::vector<int> fds;
	for (int i = 0; i < 16; i++) {
		fds.push_back(Dial());
		Send(fds.back(), Req("rpc_get_methods", i));
		ASSERT_NE(std::string::npos,
			  Recv(fds.back(), 1).find("\"id\""));
	}
	int extra = Dial();
	bool eof;
	Recv(extra, 1, &eof);
	EXPECT_TRUE(eof);
	close(extra);
	// A slot comes free once the server has seen a client leave.
	close(fds[0]);
	std::string got;
	for (int i = 0; i < 500 && got.empty(); i++) {
		int again = Dial();
		std::string q = Req("rpc_get_methods", 99);
		(void)!send(again, q.data(), q.size(), MSG_NOSIGNAL);
		got = Recv(again, 1, &eof);
		close(again);
		if (got.empty())
			usleep(10000);
	}
	EXPECT_NE(std::string::npos, got.find("\"id\":99}"));
	for (size_t i = 1; i < fds.size(); i++)
		close(fds[i]);
}

TEST_F(NvmfRpcServer, StartRefusesWhatIsNotAStaleSocket)
{
	nvmf_rpc_server *other = nullptr;
	std::string file = path_ + ".file";
	close(open(file.c_str(), O_CREAT | O_WRONLY, 0600));
	EXPECT_EQ(-EEXIST, nvmf_rpc_server_start(file.c_str(), &env_, &other));
	unlink(file.c_str());
	// The path of a running server is not taken over.
	EXPECT_EQ(-EADDRINUSE,
		  nvmf_rpc_server_start(path_.c_str(), &env_, &other));
	std::string longp(200, 'x');
	EXPECT_EQ(-ENAMETOOLONG,
		  nvmf_rpc_server_start(longp.c_str(), &env_, &other));
}

// wharf-nvmf-rpc, the client program, against the same server.
TEST_F(NvmfRpcServer, ClientProgramPrintsResultsAndErrors)
{
	const std::string bin = "targets/nvmf/wharf-nvmf-rpc";
	auto run = [&](const std::string &args, std::string *out) {
		std::string cmd = bin + " " + args + " 2>&1";
		FILE *p = popen(cmd.c_str(), "r");
		char buf[4096];
		size_t n;
		out->clear();
		while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0)
			out->append(buf, n);
		int st = p ? pclose(p) : -1;
		return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	};
	std::string out;
	EXPECT_EQ(0, run("-s " + path_ + " nvmf_subsystem_add_ns nqn=" + kSub +
				 " nsid=8 bdev=ram:128K",
			 &out))
		<< out;
	EXPECT_EQ("true\n", out);
	EXPECT_EQ(0, run("-s " + path_ + " nvmf_get_subsystems", &out)) << out;
	EXPECT_NE(std::string::npos, out.find("\"nsid\": 8")) << out;
	EXPECT_EQ(1, run("-s " + path_ + " nvmf_subsystem_add_ns nqn=" + kSub +
				 " nsid=8 bdev=ram:128K",
			 &out));
	EXPECT_NE(std::string::npos, out.find("\"code\": -17")) << out;
	EXPECT_EQ(2, run("-s " + path_ + ".none rpc_get_methods", &out));
	EXPECT_NE(std::string::npos, out.find("is wharf-nvmf-tgt running"))
		<< out;
	EXPECT_EQ(2, run("-s " + path_ + " m novalue", &out));
	EXPECT_EQ(0, run("--help", &out));
	EXPECT_NE(std::string::npos, out.find("nvmf_subsystem_remove_host"));
	EXPECT_EQ(0, run("--version", &out));
	EXPECT_NE(std::string::npos, out.find("wharf-nvmf-rpc (wharf)")) << out;
}

} // namespace
