// wharf-nbd's NBD wire protocol (initiators/nbd/nbd_proto.h): the
// greeting and client flags, every option the server answers (GO, INFO,
// EXPORT_NAME, ABORT) and the refusal of the others, malformed option
// payloads, request parsing and the checks that decide an error reply
// (alignment, past the end, oversize, commands not offered), the simple
// reply and the errno mapping; and wharf-nbd's command line.
#include <errno.h>
#include <string.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/nbd_wire_util.h"

#include "initiators/nbd/nbd_args.h"
#include "initiators/nbd/nbd_proto.h"

namespace
{

using namespace nbd_wire;

const uint16_t kFlags =
	NBDP_TFLAG_HAS_FLAGS | NBDP_TFLAG_SEND_FLUSH | NBDP_TFLAG_SEND_TRIM;

struct nbd_export Export()
{
	struct nbd_export e = {};
	e.name = "disk";
	e.size = 1 << 20;
	e.tflags = kFlags;
	e.block = 512;
	e.max_payload = 1 << 16;
	return e;
}

// One option through a negotiation started with @client_flags.
struct Answer {
	enum nbd_neg_result res;
	Bytes out;
};

Answer Option(const struct nbd_export *e, uint32_t opt, const Bytes &payload,
	      uint32_t client_flags = NBDP_FLAG_C_FIXED_NEWSTYLE |
				      NBDP_FLAG_C_NO_ZEROES)
{
	struct nbd_neg n;
	Bytes cf;
	Put(&cf, client_flags, 4);
	EXPECT_EQ(0, nbd_neg_client_flags(&n, e, cf.data()));
	struct nbd_opt o = {opt, (uint32_t)payload.size()};
	uint8_t out[NBD_NEG_OUT_MAX];
	size_t len = 999;
	Answer a;
	a.res = nbd_neg_option(&n, &o, payload.data(), out, sizeof(out), &len);
	a.out.assign(out, out + len);
	return a;
}

// The option replies in @b: (type, data) each, checking magic and option.
std::vector<std::pair<uint32_t, Bytes>> Replies(const Bytes &b, uint32_t opt)
{
	std::vector<std::pair<uint32_t, Bytes>> r;
	size_t at = 0;
	while (at + NBDP_OPT_REP_HDR_LEN <= b.size()) {
		EXPECT_EQ(NBDP_REP_MAGIC, Get(&b[at], 8));
		EXPECT_EQ(opt, Get(&b[at + 8], 4));
		uint32_t type = (uint32_t)Get(&b[at + 12], 4);
		uint32_t len = (uint32_t)Get(&b[at + 16], 4);
		at += NBDP_OPT_REP_HDR_LEN;
		EXPECT_LE(at + len, b.size());
		r.push_back(
			{type, Bytes(b.begin() + at, b.begin() + at + len)});
		at += len;
	}
	EXPECT_EQ(at, b.size());
	return r;
}

TEST(NbdProto, GreetingAndClientFlags)
{
	uint8_t g[NBDP_GREETING_LEN];
	nbd_neg_greeting(g);
	EXPECT_EQ(0, memcmp(g, "NBDMAGICIHAVEOPT", 16));
	EXPECT_EQ(NBDP_FLAG_FIXED_NEWSTYLE | NBDP_FLAG_NO_ZEROES,
		  Get(g + 16, 2));

	struct nbd_export e = Export();
	struct nbd_neg n;
	uint8_t f[4] = {0, 0, 0, 0};
	EXPECT_EQ(-EPROTO, nbd_neg_client_flags(&n, &e, f))
		<< "plain newstyle clients are not served";
	f[3] = 1;
	EXPECT_EQ(0, nbd_neg_client_flags(&n, &e, f));
	EXPECT_FALSE(n.no_zeroes);
	f[3] = 3;
	EXPECT_EQ(0, nbd_neg_client_flags(&n, &e, f));
	EXPECT_TRUE(n.no_zeroes);
	f[3] = 5;
	EXPECT_EQ(-EPROTO, nbd_neg_client_flags(&n, &e, f)) << "unknown bit";
}

TEST(NbdProto, OptionHeader)
{
	Bytes h;
	Put(&h, NBDP_IHAVEOPT, 8);
	Put(&h, NBDP_OPT_GO, 4);
	Put(&h, 10, 4);
	struct nbd_opt o;
	ASSERT_EQ(0, nbd_opt_parse(h.data(), &o));
	EXPECT_EQ(NBDP_OPT_GO, o.opt);
	EXPECT_EQ(10u, o.len);
	h[15] = 0;
	h[12] = 1; // 16 MiB of payload
	EXPECT_EQ(-EMSGSIZE, nbd_opt_parse(h.data(), &o));
	h[0] ^= 1;
	EXPECT_EQ(-EBADMSG, nbd_opt_parse(h.data(), &o));
}

TEST(NbdProto, GoWithBlockSize)
{
	struct nbd_export e = Export();
	Answer a = Option(
		&e, NBDP_OPT_GO,
		GoPayload("disk", {NBDP_INFO_NAME, NBDP_INFO_BLOCK_SIZE}));
	EXPECT_EQ(NBD_NEG_TRANSMIT, a.res);
	auto r = Replies(a.out, NBDP_OPT_GO);
	ASSERT_EQ(3u, r.size());
	EXPECT_EQ(NBDP_REP_INFO, r[0].first);
	ASSERT_EQ(12u, r[0].second.size());
	EXPECT_EQ(NBDP_INFO_EXPORT, Get(&r[0].second[0], 2));
	EXPECT_EQ(e.size, Get(&r[0].second[2], 8));
	EXPECT_EQ(kFlags, Get(&r[0].second[10], 2));
	EXPECT_EQ(NBDP_REP_INFO, r[1].first);
	ASSERT_EQ(14u, r[1].second.size());
	EXPECT_EQ(NBDP_INFO_BLOCK_SIZE, Get(&r[1].second[0], 2));
	EXPECT_EQ(512u, Get(&r[1].second[2], 4));
	EXPECT_EQ(4096u, Get(&r[1].second[6], 4));
	EXPECT_EQ(1u << 16, Get(&r[1].second[10], 4));
	EXPECT_EQ(NBDP_REP_ACK, r[2].first);
	EXPECT_TRUE(r[2].second.empty());
}

TEST(NbdProto, InfoAndDefaultExport)
{
	struct nbd_export e = Export();
	Answer a = Option(&e, NBDP_OPT_INFO, GoPayload("", {}));
	EXPECT_EQ(NBD_NEG_CONTINUE, a.res) << "INFO does not transmit";
	auto r = Replies(a.out, NBDP_OPT_INFO);
	ASSERT_EQ(2u, r.size()) << "no block size unless asked";
	EXPECT_EQ(NBDP_REP_INFO, r[0].first);
	EXPECT_EQ(NBDP_REP_ACK, r[1].first);
}

TEST(NbdProto, UnknownExportAndMalformedPayloads)
{
	struct nbd_export e = Export();
	Answer a = Option(&e, NBDP_OPT_GO, GoPayload("other", {}));
	EXPECT_EQ(NBD_NEG_CONTINUE, a.res);
	auto r = Replies(a.out, NBDP_OPT_GO);
	ASSERT_EQ(1u, r.size());
	EXPECT_EQ(NBDP_REP_ERR_UNKNOWN, r[0].first);

	Bytes p = GoPayload("disk", {NBDP_INFO_BLOCK_SIZE});
	for (size_t cut : {size_t(0), size_t(3), size_t(5), p.size() - 1}) {
		Bytes q(p.begin(), p.begin() + cut);
		a = Option(&e, NBDP_OPT_GO, q);
		EXPECT_EQ(NBD_NEG_CONTINUE, a.res) << cut;
		r = Replies(a.out, NBDP_OPT_GO);
		ASSERT_EQ(1u, r.size());
		EXPECT_EQ(NBDP_REP_ERR_INVALID, r[0].first) << cut;
	}
	p = GoPayload("disk", {});
	p[3] = 0xFF; // name length beyond the payload
	a = Option(&e, NBDP_OPT_INFO, p);
	r = Replies(a.out, NBDP_OPT_INFO);
	ASSERT_EQ(1u, r.size());
	EXPECT_EQ(NBDP_REP_ERR_INVALID, r[0].first);
	p = GoPayload("disk", {1, 2});
	p.push_back(0); // trailing byte
	a = Option(&e, NBDP_OPT_INFO, p);
	r = Replies(a.out, NBDP_OPT_INFO);
	ASSERT_EQ(1u, r.size());
	EXPECT_EQ(NBDP_REP_ERR_INVALID, r[0].first);
}

TEST(NbdProto, ExportNameAbortUnsupported)
{
	struct nbd_export e = Export();
	Bytes name = {'d', 'i', 's', 'k'};
	Answer a = Option(&e, NBDP_OPT_EXPORT_NAME, name);
	EXPECT_EQ(NBD_NEG_TRANSMIT, a.res);
	ASSERT_EQ(10u, a.out.size()) << "NO_ZEROES: no padding";
	EXPECT_EQ(e.size, Get(&a.out[0], 8));
	EXPECT_EQ(kFlags, Get(&a.out[8], 2));
	a = Option(&e, NBDP_OPT_EXPORT_NAME, name, NBDP_FLAG_C_FIXED_NEWSTYLE);
	ASSERT_EQ(134u, a.out.size()) << "124 bytes of zeroes";
	EXPECT_EQ(Bytes(124, 0), Bytes(a.out.begin() + 10, a.out.end()));
	a = Option(&e, NBDP_OPT_EXPORT_NAME, Bytes{'x'});
	EXPECT_EQ(NBD_NEG_CLOSE, a.res) << "no error reply exists";
	EXPECT_TRUE(a.out.empty());

	a = Option(&e, NBDP_OPT_ABORT, {});
	EXPECT_EQ(NBD_NEG_CLOSE, a.res);
	auto r = Replies(a.out, NBDP_OPT_ABORT);
	ASSERT_EQ(1u, r.size());
	EXPECT_EQ(NBDP_REP_ACK, r[0].first);

	for (uint32_t opt : {3u, 5u, 8u, 9u, 10u, 0x12345u}) {
		a = Option(&e, opt, Bytes(7, 1));
		EXPECT_EQ(NBD_NEG_CONTINUE, a.res) << opt;
		r = Replies(a.out, opt);
		ASSERT_EQ(1u, r.size());
		EXPECT_EQ(NBDP_REP_ERR_UNSUP, r[0].first) << opt;
	}
}

Bytes Req(uint16_t flags, uint16_t type, uint64_t handle, uint64_t off,
	  uint32_t len, uint32_t magic = NBDP_REQUEST_MAGIC)
{
	Bytes b;
	Put(&b, magic, 4);
	Put(&b, flags, 2);
	Put(&b, type, 2);
	Put(&b, handle, 8);
	Put(&b, off, 8);
	Put(&b, len, 4);
	return b;
}

TEST(NbdProto, RequestParse)
{
	struct nbd_req r;
	Bytes b = Req(NBDP_CMD_FLAG_NO_HOLE, NBDP_CMD_WRITE_ZEROES,
		      0x1122334455667788ull, 0x100000000ull, 4096);
	ASSERT_EQ(0, nbd_req_parse(b.data(), &r));
	EXPECT_EQ(NBDP_CMD_FLAG_NO_HOLE, r.flags);
	EXPECT_EQ(NBDP_CMD_WRITE_ZEROES, r.type);
	EXPECT_EQ(0x1122334455667788ull, r.handle);
	EXPECT_EQ(0x100000000ull, r.offset);
	EXPECT_EQ(4096u, r.len);
	b = Req(0, 0, 1, 0, 512, NBDP_SIMPLE_REPLY);
	EXPECT_EQ(-EBADMSG, nbd_req_parse(b.data(), &r));
}

uint32_t Check(const struct nbd_export &e, uint16_t type, uint64_t off,
	       uint32_t len, bool *fatal)
{
	struct nbd_req r = {};
	r.type = type;
	r.offset = off;
	r.len = len;
	return nbd_req_check(&e, &r, fatal);
}

TEST(NbdProto, RequestChecks)
{
	struct nbd_export e = Export();
	bool fatal;

	EXPECT_EQ(0u, Check(e, NBDP_CMD_READ, 0, 4096, &fatal));
	EXPECT_EQ(0u, Check(e, NBDP_CMD_WRITE, e.size - 512, 512, &fatal));
	EXPECT_EQ(NBDP_EINVAL, Check(e, NBDP_CMD_READ, e.size, 512, &fatal))
		<< "read past the end";
	EXPECT_EQ(NBDP_ENOSPC,
		  Check(e, NBDP_CMD_WRITE, e.size - 512, 1024, &fatal));
	EXPECT_FALSE(fatal) << "its payload can still be read";
	EXPECT_EQ(NBDP_EINVAL,
		  Check(e, NBDP_CMD_READ, UINT64_MAX - 100, 512, &fatal))
		<< "no overflow";
	EXPECT_EQ(NBDP_EINVAL, Check(e, NBDP_CMD_READ, 100, 512, &fatal))
		<< "unaligned";
	EXPECT_EQ(NBDP_EINVAL, Check(e, NBDP_CMD_WRITE, 0, 100, &fatal));
	EXPECT_EQ(NBDP_EINVAL, Check(e, NBDP_CMD_READ, 0, 0, &fatal));
	EXPECT_EQ(NBDP_EOVERFLOW,
		  Check(e, NBDP_CMD_READ, 0, e.max_payload + 512, &fatal));
	EXPECT_FALSE(fatal);
	EXPECT_EQ(NBDP_EOVERFLOW,
		  Check(e, NBDP_CMD_WRITE, 0, 0x80000000u, &fatal));
	EXPECT_TRUE(fatal) << "an oversize payload cannot be skipped";

	EXPECT_EQ(0u, Check(e, NBDP_CMD_FLUSH, 0, 0, &fatal));
	EXPECT_EQ(0u, Check(e, NBDP_CMD_TRIM, 0, (uint32_t)e.size, &fatal))
		<< "a trim may exceed max_payload";
	EXPECT_EQ(NBDP_ENOSPC,
		  Check(e, NBDP_CMD_TRIM, 512, (uint32_t)e.size, &fatal));
	EXPECT_EQ(NBDP_ENOTSUP, Check(e, NBDP_CMD_WRITE_ZEROES, 0, 512, &fatal))
		<< "not offered";
	e.tflags |= NBDP_TFLAG_SEND_WRITE_ZEROES;
	EXPECT_EQ(0u, Check(e, NBDP_CMD_WRITE_ZEROES, 0, 512, &fatal));
	e.tflags &= (uint16_t)~NBDP_TFLAG_SEND_FLUSH;
	EXPECT_EQ(NBDP_ENOTSUP, Check(e, NBDP_CMD_FLUSH, 0, 0, &fatal));
	EXPECT_EQ(NBDP_EINVAL, Check(e, 5, 0, 512, &fatal)) << "CACHE";
	EXPECT_EQ(NBDP_EINVAL, Check(e, 0x77, 0, 512, &fatal));
	EXPECT_FALSE(fatal);
	e.tflags |= NBDP_TFLAG_READ_ONLY;
	EXPECT_EQ(NBDP_EPERM, Check(e, NBDP_CMD_WRITE, 0, 512, &fatal));
}

TEST(NbdProto, ReplyAndErrno)
{
	uint8_t b[NBDP_REPLY_LEN];
	nbd_reply(b, NBDP_EIO, 0xA1B2C3D4E5F60718ull);
	EXPECT_EQ(NBDP_SIMPLE_REPLY, Get(b, 4));
	EXPECT_EQ(NBDP_EIO, Get(b + 4, 4));
	EXPECT_EQ(0xA1B2C3D4E5F60718ull, Get(b + 8, 8));
	EXPECT_EQ(0u, nbd_errno(0));
	EXPECT_EQ(NBDP_EINVAL, nbd_errno(-EINVAL));
	EXPECT_EQ(NBDP_ENOSPC, nbd_errno(ENOSPC));
	EXPECT_EQ(NBDP_ENOTSUP, nbd_errno(-EOPNOTSUPP));
	EXPECT_EQ(NBDP_EIO, nbd_errno(-ETIMEDOUT));
	EXPECT_EQ(NBDP_EIO, nbd_errno(-ENOTCONN));
}

int Parse(std::vector<const char *> args, struct nbd_args *a,
	  std::string *err = nullptr)
{
	std::vector<char *> argv = {(char *)"wharf-nbd"};
	for (const char *s : args)
		argv.push_back((char *)s);
	char e[256] = "";
	int rc = nbd_parse((int)argv.size(), argv.data(), a, e, sizeof(e));
	if (err)
		*err = e;
	return rc;
}

TEST(NbdArgs, DefaultsAndModes)
{
	struct nbd_args a;
	std::string err;
	ASSERT_EQ(0, Parse({"--traddr", "10.0.0.1", "--subnqn", "nqn.x",
			    "--device", "/dev/nbd0"},
			   &a));
	EXPECT_STREQ("4420", a.host.trsvcid);
	EXPECT_EQ(1u, a.host.nsid);
	EXPECT_EQ(128u * 1024, a.max_io_size);
	EXPECT_EQ(0u, a.connections);
	EXPECT_STREQ("wharf", a.export_name);
	ASSERT_EQ(0, Parse({"--traddr", "::1", "--subnqn", "n", "--socket",
			    "/tmp/s", "--export-name", "e", "--queues", "3",
			    "--queue-size", "64", "--max-io-size", "64k",
			    "--nsid", "2", "--trsvcid", "4421", "--null-io"},
			   &a));
	EXPECT_STREQ("/tmp/s", a.socket);
	EXPECT_EQ(3u, a.host.queues);
	EXPECT_EQ(64u, a.queue_size);
	EXPECT_EQ(65536u, a.max_io_size);
	EXPECT_EQ(2u, a.host.nsid);
	EXPECT_TRUE(a.null_io);
	ASSERT_EQ(0, Parse({"--help"}, &a));
	EXPECT_TRUE(a.help);
}

TEST(NbdArgs, Refusals)
{
	struct nbd_args a;
	std::string err;
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n"}, &a, &err));
	EXPECT_NE(std::string::npos, err.find("--device"));
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n", "--device",
				  "/dev/nbd0", "--socket", "/s"},
				 &a));
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n", "--socket",
				  "/s", "--connections", "2"},
				 &a));
	EXPECT_EQ(-EINVAL,
		  Parse({"--subnqn", "n", "--device", "/dev/nbd0"}, &a));
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n", "--device",
				  "/dev/nbd0", "--queue-size", "1"},
				 &a));
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n", "--device",
				  "/dev/nbd0", "--max-io-size", "1k"},
				 &a));
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n", "--device",
				  "/dev/nbd0", "--bogus"},
				 &a, &err));
	EXPECT_NE(std::string::npos, err.find("--bogus"));
	EXPECT_EQ(-EINVAL, Parse({"--traddr"}, &a, &err));
	EXPECT_NE(std::string::npos, err.find("missing value"));
}

TEST(NbdArgs, GetoptSpellingsAndVersion)
{
	struct nbd_args a;
	ASSERT_EQ(0, Parse({"--traddr=a", "--subnqn=n", "--device=/dev/nbd1",
			    "--max-io-size=256k", "--queues=2"},
			   &a));
	EXPECT_STREQ("/dev/nbd1", a.device);
	EXPECT_EQ(256u * 1024, a.max_io_size);
	EXPECT_EQ(2u, a.host.queues);
	ASSERT_EQ(0, Parse({"--version"}, &a));
	EXPECT_TRUE(a.version);
	EXPECT_EQ(-EINVAL, Parse({"--traddr", "a", "--subnqn", "n", "--device",
				  "/dev/nbd0", "--trsvcid", "65536"},
				 &a));
}

} // namespace
