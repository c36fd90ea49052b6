// DH-HMAC-CHAP's pure pieces (proto/nvme/auth.h): DHHC-1 secrets, the
// hashes, the key transformation, the host and controller responses, the
// augmented challenge and the FFDHE exchange, against values computed
// independently of this code.
//
// Where the expected values come from:
//  - The secret "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:"
//    is the NVMe base specification's example (quoted in the kernel's
//    commit allowing any key / hash pairing).
//  - SHA-2 of "abc" is FIPS 180-2's example, the HMACs of "Jefe" RFC
//    4231's test case 2.
//  - Everything else was computed with python3 (3.11) at test-writing
//    time, from the kernel's definitions, with hmac, hashlib, zlib.crc32
//    and base64 and the inputs below:
//      key(n, seed) = bytes((i * 13 + seed) & 0xff for i in range(n))
//      text = "DHHC-1:%02d:" % hash + b64encode(key + crc32(key).to_bytes(
//             4, "little")) + ":"
//      transform(k, h, nqn) = hmac.new(k, nqn + b"NVMe-over-Fabrics", H)
//      resp = hmac.new(transform(key, h, nqn_a), C + seq.to_bytes(4,
//             "little") + tid.to_bytes(2, "little") + b"\0" + label +
//             nqn_a + b"\0" + nqn_b, Hc)       (label b"HostHost" with
//             nqn_a the host NQN, b"Controller" with the subsystem NQN)
//      aug(h, s, c) = hmac.new(H(s).digest(), c, H)
//    and, for FFDHE, p of ffdhe2048 from RFC 7919's formula
//    (2^2048 - 2^1984 + (floor(2^1918 * e) + 560316) * 2^64 - 1, which
//    also matched openssl genpkey's ffdhe2048), public values
//    pow(2, x, p) and secrets pow(y, x, p), big-endian, 256 bytes.
#include <errno.h>
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "proto/nvme/auth.h"

namespace
{

using Bytes = std::vector<uint8_t>;

const char kHost[] =
	"nqn.2014-08.org.nvmexpress:uuid:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
const char kSubsys[] = "nqn.2024-05.io.wharf:auth-test";
const uint16_t kTid = 0x0102;
const uint32_t kS1 = 0x12345678;
const uint32_t kS2 = 0x9abcdef0;

Bytes Hex(const char *s)
{
	Bytes b;

	for (size_t i = 0; s[i] && s[i + 1]; i += 2)
		b.push_back(
			(uint8_t)std::stoi(std::string(s + i, 2), nullptr, 16));
	return b;
}

Bytes Pattern(size_t n, int seed)
{
	Bytes b(n);

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)((i * 13 + seed) & 0xff);
	return b;
}

// The test challenges C1 and C2 of hash length @n.
Bytes C1(size_t n)
{
	Bytes b(n);

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(0xa0 + i);
	return b;
}

Bytes C2(size_t n)
{
	Bytes b(n);

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(0x50 + 3 * i);
	return b;
}

nvme_auth_key Key(size_t n, int seed, uint8_t hash)
{
	nvme_auth_key k = {};
	Bytes b = Pattern(n, seed);

	k.hash = hash;
	k.len = (uint8_t)n;
	memcpy(k.key, b.data(), n);
	return k;
}

Bytes KeyBytes(const nvme_auth_key &k)
{
	return Bytes(k.key, k.key + k.len);
}

nvme_auth_xchg Xchg(uint8_t hash_id, const Bytes *skey = nullptr)
{
	nvme_auth_xchg x = {};

	x.hash_id = hash_id;
	x.t_id = kTid;
	x.hostnqn = kHost;
	x.subsysnqn = kSubsys;
	if (skey) {
		x.skey = skey->data();
		x.skey_len = skey->size();
	}
	return x;
}

// ---- wire constants (as include/linux/nvme.h has them) ---------------

TEST(NvmeAuthWire, Constants)
{
	EXPECT_EQ(0x05, NVME_FCTYPE_AUTH_SEND);
	EXPECT_EQ(0x06, NVME_FCTYPE_AUTH_RECV);
	EXPECT_EQ(0xE9, NVME_AUTH_SECP);
	EXPECT_EQ(0x20000u, NVME_CONNECT_AUTHREQ_ATR);
	EXPECT_EQ(0x40000u, NVME_CONNECT_AUTHREQ_ASCR);
	EXPECT_EQ(0xF0, NVME_AUTH_MSG_FAILURE2);
	EXPECT_EQ(0xF1, NVME_AUTH_MSG_FAILURE1);
	EXPECT_EQ(0x91, NVME_SC_AUTH_REQUIRED);

	union {
		nvme_auth_cmd cmd;
		uint8_t b[64];
	} u = {};
	u.cmd.secp = NVME_AUTH_SECP;
	u.cmd.spsp0 = NVME_AUTH_SPSP0;
	u.cmd.spsp1 = NVME_AUTH_SPSP1;
	u.cmd.tl_al = 0x11223344;
	// CDW10 = SECP 31:24 | SPSP1 23:16 | SPSP0 15:8, CDW11 = TL / AL.
	uint32_t cdw10, cdw11;
	memcpy(&cdw10, u.b + 40, 4);
	memcpy(&cdw11, u.b + 44, 4);
	EXPECT_EQ(0xE9010100u, cdw10);
	EXPECT_EQ(0x11223344u, cdw11);
}

// ---- DHHC-1 secrets -------------------------------------------------

TEST(NvmeAuthSecret, SpecExample)
{
	nvme_auth_key k;

	ASSERT_EQ(0, nvme_auth_key_parse("DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY"
					 "0wqipUWj4jWjUh4HWUz6aQ2n:",
					 &k));
	EXPECT_EQ(0, k.hash);
	EXPECT_EQ(32, k.len);
	EXPECT_EQ(Hex("89aeb31a874eaf84841b46736b0dfdf2"
		      "ba58d30aa2a545a3e235a3521e07594c"),
		  KeyBytes(k));
}

struct GoodSecret {
	const char *text;
	size_t len;
	int seed;
	uint8_t hash;
};

// Each length and each transformation hash, and the pairings across.
const GoodSecret kGood[] = {
	{"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:", 32, 1,
	 0},
	{"DHHC-1:01:Ag8cKTZDUF1qd4SRnqu4xdLf7PkGEyAtOkdUYW57iJW1NQic:", 32, 2,
	 1},
	{"DHHC-1:02:AxAdKjdEUV5reIWSn6y5xtPg7foHFCEuO0hVYm98iZajsL3K1+Tx/gsYJT"
	 "I/TFlmqYuTyw==:",
	 48, 3, 2},
	{"DHHC-1:03:BBEeKzhFUl9seYaToK26x9Th7vsIFSIvPElWY3B9ipeksb7L2OXy/wwZJj"
	 "NATVpndIGOm6i1ws/c6fYDEB0qNx4+rNw=:",
	 64, 4, 3},
	{"DHHC-1:03:BRIfLDlGU2BteoeUoa67yNXi7/wJFiMwPUpXZHF+i5jsXbiv:", 32, 5,
	 3},
	{"DHHC-1:00:BhMgLTpHVGFue4iVoq+8ydbj8P0KFyQxPktYZXJ/jJmms8DN2uf0AQ4bKD"
	 "VCT1xpdoOQnaq3xNHe6/gFEh8sObOf+nI=:",
	 64, 6, 0},
	{"DHHC-1:00:BxQhLjtIVWJvfImWo7C9ytfk8f4LGCUyP0xZZnOAjZqntMHO2+j1Ag8cKT"
	 "ZDUF1qn76XGQ==:",
	 48, 7, 0},
};

TEST(NvmeAuthSecret, ParseEachLengthAndHash)
{
	for (const GoodSecret &g : kGood) {
		nvme_auth_key k;

		SCOPED_TRACE(g.text);
		ASSERT_EQ(0, nvme_auth_key_parse(g.text, &k));
		EXPECT_EQ(g.hash, k.hash);
		EXPECT_EQ(g.len, k.len);
		EXPECT_EQ(Pattern(g.len, g.seed), KeyBytes(k));
	}
}

TEST(NvmeAuthSecret, FormatRoundTrips)
{
	for (const GoodSecret &g : kGood) {
		nvme_auth_key k = Key(g.len, g.seed, g.hash);
		char buf[NVME_AUTH_KEY_TEXT_MAX];

		SCOPED_TRACE(g.text);
		ASSERT_EQ((int)strlen(g.text),
			  nvme_auth_key_format(&k, buf, sizeof(buf)));
		EXPECT_STREQ(g.text, buf);
		// Exactly big enough, and one byte short.
		EXPECT_EQ((int)strlen(g.text),
			  nvme_auth_key_format(&k, buf, strlen(g.text) + 1));
		EXPECT_EQ(-ENOSPC,
			  nvme_auth_key_format(&k, buf, strlen(g.text)));
	}
}

TEST(NvmeAuthSecret, FormatRefusesInvalidKeys)
{
	char buf[NVME_AUTH_KEY_TEXT_MAX];
	nvme_auth_key k = Key(32, 1, 0);

	k.len = 31;
	EXPECT_EQ(-EINVAL, nvme_auth_key_format(&k, buf, sizeof(buf)));
	k = Key(32, 1, 4);
	EXPECT_EQ(-EINVAL, nvme_auth_key_format(&k, buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, nvme_auth_key_format(nullptr, buf, sizeof(buf)));
	k = Key(32, 1, 0);
	EXPECT_EQ(-EINVAL, nvme_auth_key_format(&k, nullptr, 0));
}

TEST(NvmeAuthSecret, UnpaddedBase64IsAccepted)
{
	// As the kernel's decoder: '=' padding may be left out.
	nvme_auth_key k;

	ASSERT_EQ(0, nvme_auth_key_parse("DHHC-1:02:AxAdKjdEUV5reIWSn6y5xtPg7f"
					 "oHFCEuO0hVYm98iZajsL3K1+Tx/gsYJTI/"
					 "TFlmqYuTyw:",
					 &k));
	EXPECT_EQ(Pattern(48, 3), KeyBytes(k));
	ASSERT_EQ(0, nvme_auth_key_parse("DHHC-1:03:BBEeKzhFUl9seYaToK26x9Th7v"
					 "sIFSIvPElWY3B9ipeksb7L2OXy/wwZJjNATV"
					 "pndIGOm6i1ws/c6fYDEB0qNx4+rNw:",
					 &k));
	EXPECT_EQ(Pattern(64, 4), KeyBytes(k));
}

TEST(NvmeAuthSecret, Errors)
{
	const char *const bad[] = {
		// CRC off by one bit (the key bytes intact)
		"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SRWMao:",
		// a key byte changed (the CRC intact)
		"DHHC-1:00:BQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		// bad base64: a character outside the alphabet, '=' inside,
		// padding incomplete, non-zero unused bits, URL-safe alphabet
		"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6*gFEh8sOUZTYG16h5SQWMao:",
		"DHHC-1:00:AQ4bKDVCT1xpdoOQ=aq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		"DHHC-1:02:AxAdKjdEUV5reIWSn6y5xtPg7foHFCEuO0hVYm98iZajsL3K1+"
		"Tx/"
		"gsYJTI/TFlmqYuTyw=:",
		"DHHC-1:02:AxAdKjdEUV5reIWSn6y5xtPg7foHFCEuO0hVYm98iZajsL3K1+"
		"Tx/"
		"gsYJTI/TFlmqYuTyx==:",
		"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6_gFEh8sOUZTYG16h5SQWMao:",
		// wrong length, the CRC right: 16, 31, 33 and 65 byte keys
		"DHHC-1:01:AQ4bKDVCT1xpdoOQnaq3xCOSWDM=:",
		"DHHC-1:01:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16hx+17a4=:",
		"DHHC-1:01:AQ4bKDVCT1xpdoOQnaq3xNHe6/"
		"gFEh8sOUZTYG16h5Sh7yl0gw==:",
		"DHHC-1:01:AQ4bKDVCT1xpdoOQnaq3xNHe6/"
		"gFEh8sOUZTYG16h5ShrrvI1eLv/"
		"AkWIzA9SldkcX6LmKWyv8zZ5vMADRonNEFkC8XR:",
		// empty key
		"DHHC-1:00::",
		// missing trailing colon, something after it
		"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao",
		"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:\n",
		"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao: ",
		"DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao::",
		// unknown or malformed hash id
		"DHHC-1:04:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		"DHHC-1:10:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		"DHHC-1:0x:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		"DHHC-1:1:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		// bad prefix
		"DHHC-2:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		"dhhc-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		" DHHC-1:00:AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao:",
		"AQ4bKDVCT1xpdoOQnaq3xNHe6/gFEh8sOUZTYG16h5SQWMao",
		"DHHC-1:00:",
		"",
	};
	nvme_auth_key k = Key(32, 9, 2);
	const nvme_auth_key before = k;

	for (const char *t : bad) {
		SCOPED_TRACE(t);
		EXPECT_EQ(-EINVAL, nvme_auth_key_parse(t, &k));
		EXPECT_EQ(0, memcmp(&before, &k, sizeof(k)))
			<< "the key is untouched on failure";
	}
	EXPECT_EQ(-EINVAL, nvme_auth_key_parse(nullptr, &k));
	EXPECT_EQ(-EINVAL, nvme_auth_key_parse(kGood[0].text, nullptr));
}

TEST(NvmeAuthSecret, Clear)
{
	nvme_auth_key k = Key(64, 1, 3);
	const nvme_auth_key zero = {};

	nvme_auth_key_clear(&k);
	EXPECT_EQ(0, memcmp(&zero, &k, sizeof(k)));
	nvme_auth_key_clear(nullptr);
}

// ---- hashes ------------------------------------------------------------

TEST(NvmeAuthHash, LengthsAndNames)
{
	EXPECT_EQ(32u, nvme_auth_hash_len(NVME_AUTH_HASH_SHA256));
	EXPECT_EQ(48u, nvme_auth_hash_len(NVME_AUTH_HASH_SHA384));
	EXPECT_EQ(64u, nvme_auth_hash_len(NVME_AUTH_HASH_SHA512));
	EXPECT_EQ(0u, nvme_auth_hash_len(0));
	EXPECT_EQ(0u, nvme_auth_hash_len(4));
	EXPECT_STREQ("sha384", nvme_auth_hash_name(NVME_AUTH_HASH_SHA384));
	EXPECT_EQ(nullptr, nvme_auth_hash_name(0xFF));
}

TEST(NvmeAuthHash, KnownDigests)
{
	const char *const abc[] = {
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015"
		"ad",
		"cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5b"
		"ed8086072ba1e7cc2358baeca134c825a7",
		"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d3"
		"9a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54c"
		"a49f",
	};
	const char *const jefe[] = {
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec38"
		"43",
		"af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec373632244"
		"5"
		"e8e2240ca5e69e2c78b3239ecfab21649",
		"164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505"
		"5"
		"49758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce"
		"7"
		"37",
	};
	const char msg[] = "what do ya want for nothing?";

	for (uint8_t h = 1; h <= 3; h++) {
		Bytes out(nvme_auth_hash_len(h));

		SCOPED_TRACE(h);
		ASSERT_EQ(0, nvme_auth_hash(h, "abc", 3, out.data()));
		EXPECT_EQ(Hex(abc[h - 1]), out);
		ASSERT_EQ(0, nvme_auth_hmac(h, "Jefe", 4, msg, strlen(msg),
					    out.data()));
		EXPECT_EQ(Hex(jefe[h - 1]), out);
	}
	uint8_t out[64];
	EXPECT_EQ(-EINVAL, nvme_auth_hash(0, "abc", 3, out));
	EXPECT_EQ(-EINVAL, nvme_auth_hmac(4, "Jefe", 4, "x", 1, out));
	EXPECT_EQ(-EINVAL, nvme_auth_hmac(1, "Jefe", 0, "x", 1, out));
	EXPECT_EQ(-EINVAL, nvme_auth_hmac(1, nullptr, 4, "x", 1, out));
	EXPECT_EQ(-EINVAL, nvme_auth_hash(1, nullptr, 3, out));
}

// ---- key transformation ----------------------------------------------

TEST(NvmeAuthTransform, EachHash)
{
	struct {
		size_t len;
		int seed;
		uint8_t hash;
		const char *want;
	} const cases[] = {
		{32, 2, 1,
		 "b1c5691ecbb4b8334c232f7d328c31ae9d59761725ea50b3a0553adcb567"
		 "7543"},
		{48, 3, 2,
		 "692f642620c7268b6a8cbfcf3140e36cd484fe3845b3ded150d1148fdb02"
		 "ebcd1af8a0db552f58edf5061f2629c2de85"},
		{64, 4, 3,
		 "875f3bea362bdbe5aa199eb2ff498038513d4d3f9b0ea5e3bf2a000de576"
		 "15c5d91fdfad14d22971ad295bd4942d318ac657c6b4b58218621de7ae9e"
		 "98ff3aa6"},
		// a 32-byte key transformed with SHA-512: 64 bytes out
		{32, 5, 3,
		 "c9144d09c5f8735ad0c42c05c27ad93380175dd5d0d57dd2d85d07b105cc"
		 "107bf0b82cb39b94ddd3a13f06c25b74f8ddbad8b2b403f99d3ad8202d21"
		 "d9508e8a"},
	};

	for (const auto &c : cases) {
		nvme_auth_key k = Key(c.len, c.seed, c.hash);
		uint8_t out[NVME_AUTH_MAX_HASH_LEN];
		size_t out_len = 0;

		SCOPED_TRACE(c.want);
		ASSERT_EQ(0, nvme_auth_transform_key(&k, kHost, out, &out_len));
		EXPECT_EQ(Hex(c.want), Bytes(out, out + out_len));
	}
}

TEST(NvmeAuthTransform, NoHashIsTheKeyItself)
{
	for (size_t len : {32, 48, 64}) {
		nvme_auth_key k = Key(len, 6, 0);
		uint8_t out[NVME_AUTH_MAX_HASH_LEN];
		size_t out_len = 0;

		ASSERT_EQ(0, nvme_auth_transform_key(&k, kHost, out, &out_len));
		EXPECT_EQ(KeyBytes(k), Bytes(out, out + out_len));
	}
}

TEST(NvmeAuthTransform, Refuses)
{
	nvme_auth_key k = Key(32, 1, 1);
	uint8_t out[NVME_AUTH_MAX_HASH_LEN];
	size_t out_len;

	EXPECT_EQ(-EINVAL, nvme_auth_transform_key(&k, nullptr, out, &out_len));
	k.hash = 4;
	EXPECT_EQ(-EINVAL, nvme_auth_transform_key(&k, kHost, out, &out_len));
	k = Key(32, 1, 1);
	k.len = 40;
	EXPECT_EQ(-EINVAL, nvme_auth_transform_key(&k, kHost, out, &out_len));
}

// ---- responses ----------------------------------------------------------

// Per hash: the host key Key(hl, 0x10 + h, h), the controller key
// Key(hl, 0x20 + h, h), C1 / C2 as above, S1, S2, T_ID as above.
const char *const kHostResp[] = {
	"bace3465a7a2cfd60937537632972898f745d1c499f660ce69cea3148e80911d",
	"e214b81e8205f9abddc49166082cbfa5e8cb2d9ce2fe70647a0bda1f5f0c50a0e78"
	"20a44b7bf58102520f2baeb486ad3",
	"b4512554a79f05fe736c3a5d189cf865ed40720a1d66688e0f9e53b58fb2bb5f2d2"
	"b0b248e53f5f0226bfc7ebe071c650cf1aede64f7c4732e7b4fcb875860ed",
};
const char *const kCtrlResp[] = {
	"6c74d35968b70ff5ca3e51c41490031553ea1f8a84096bc07f6fa9d68081ee47",
	"108377b16e1956e2bf4271b62d5363f1a094e1951b5e145296d3071a98c9f837e27"
	"e16d61fa82541853804b9ebc210e1",
	"85aa234808d08ab7e5d25b7326939fc578cdeca81ce50e4eaf0df9ac56584a48ce9"
	"beac79d1c69131421a9b7fad03c1a3aa3d51d4675c92278a74b15ec9112f1",
};

TEST(NvmeAuthResponse, EachHashWithoutDh)
{
	for (uint8_t h = 1; h <= 3; h++) {
		size_t hl = nvme_auth_hash_len(h);
		nvme_auth_key hk = Key(hl, 0x10 + h, h);
		nvme_auth_key ck = Key(hl, 0x20 + h, h);
		nvme_auth_xchg x = Xchg(h);
		Bytes c1 = C1(hl), c2 = C2(hl), r(hl);

		SCOPED_TRACE(h);
		ASSERT_EQ(0, nvme_auth_host_response(&hk, &x, c1.data(), kS1,
						     r.data()));
		EXPECT_EQ(Hex(kHostResp[h - 1]), r);
		ASSERT_EQ(0, nvme_auth_ctrl_response(&ck, &x, c2.data(), kS2,
						     r.data()));
		EXPECT_EQ(Hex(kCtrlResp[h - 1]), r);
	}
}

TEST(NvmeAuthResponse, KeyHashAndResponseHashDiffer)
{
	// Host key: 32 bytes, SHA-512 transformation (a 64-byte HMAC key);
	// controller key: 48 bytes, untransformed; responses in SHA-256.
	nvme_auth_key hk = Key(32, 5, 3), ck = Key(48, 7, 0);
	nvme_auth_xchg x = Xchg(NVME_AUTH_HASH_SHA256);
	Bytes c1 = C1(32), c2 = C2(32), r(32);

	ASSERT_EQ(0,
		  nvme_auth_host_response(&hk, &x, c1.data(), kS1, r.data()));
	EXPECT_EQ(Hex("f694984e71d8c246d1b3fc2d980139be"
		      "16c1aa53ab174775340c97b373249211"),
		  r);
	ASSERT_EQ(0,
		  nvme_auth_ctrl_response(&ck, &x, c2.data(), kS2, r.data()));
	EXPECT_EQ(Hex("d1a8d2ff6890b3f6a270f39297b6deaf"
		      "e487ab2960271c2a5fbf82d2fa270a0e"),
		  r);
	// Sequence number and transaction ID 0 (as older kernel hosts send
	// S2 when not asking for bidirectional authentication).
	x.t_id = 0;
	ASSERT_EQ(0, nvme_auth_ctrl_response(&ck, &x, c2.data(), 0, r.data()));
	EXPECT_EQ(Hex("ff2bcc3dc4b8a66a4ce3ba0793239b6e"
		      "a32f6b21f9baf98cad7ab17e49449ada"),
		  r);
}

TEST(NvmeAuthResponse, EveryInputMatters)
{
	nvme_auth_key hk = Key(32, 0x11, 1);
	nvme_auth_xchg x = Xchg(NVME_AUTH_HASH_SHA256);
	Bytes c1 = C1(32), base(32), r(32);

	ASSERT_EQ(0, nvme_auth_host_response(&hk, &x, c1.data(), kS1,
					     base.data()));
	ASSERT_EQ(Hex(kHostResp[0]), base);
	ASSERT_EQ(0, nvme_auth_host_response(&hk, &x, c1.data(), kS1 + 1,
					     r.data()));
	EXPECT_NE(base, r);
	x.t_id++;
	ASSERT_EQ(0,
		  nvme_auth_host_response(&hk, &x, c1.data(), kS1, r.data()));
	EXPECT_NE(base, r);
	x = Xchg(NVME_AUTH_HASH_SHA256);
	x.subsysnqn = "nqn.2024-05.io.wharf:auth-tesT";
	ASSERT_EQ(0,
		  nvme_auth_host_response(&hk, &x, c1.data(), kS1, r.data()));
	EXPECT_NE(base, r);
	// The host response is not the controller response of the same inputs.
	x = Xchg(NVME_AUTH_HASH_SHA256);
	ASSERT_EQ(0,
		  nvme_auth_ctrl_response(&hk, &x, c1.data(), kS1, r.data()));
	EXPECT_NE(base, r);
	EXPECT_TRUE(nvme_auth_equal(base.data(), base.data(), 32));
	EXPECT_FALSE(nvme_auth_equal(base.data(), r.data(), 32));
}

TEST(NvmeAuthResponse, Refuses)
{
	nvme_auth_key k = Key(32, 1, 1);
	Bytes c(64), r(64), s(256);
	nvme_auth_xchg x = Xchg(0);

	EXPECT_EQ(-EINVAL,
		  nvme_auth_host_response(&k, &x, c.data(), 1, r.data()));
	x = Xchg(4);
	EXPECT_EQ(-EINVAL,
		  nvme_auth_ctrl_response(&k, &x, c.data(), 1, r.data()));
	x = Xchg(1);
	x.hostnqn = nullptr;
	EXPECT_EQ(-EINVAL,
		  nvme_auth_host_response(&k, &x, c.data(), 1, r.data()));
	x = Xchg(1);
	x.skey = s.data(); // and skey_len 0
	EXPECT_EQ(-EINVAL,
		  nvme_auth_host_response(&k, &x, c.data(), 1, r.data()));
	x = Xchg(1);
	x.skey_len = 256; // and no skey
	EXPECT_EQ(-EINVAL,
		  nvme_auth_host_response(&k, &x, c.data(), 1, r.data()));
	x = Xchg(1);
	k.len = 0;
	EXPECT_EQ(-EINVAL,
		  nvme_auth_host_response(&k, &x, c.data(), 1, r.data()));
	EXPECT_EQ(-EINVAL,
		  nvme_auth_host_response(nullptr, &x, c.data(), 1, r.data()));
}

// ---- FFDHE, and the responses with a DH group ----------------------------

// ffdhe2048's p (RFC 7919).
const char kP2048[] =
	"ffffffffffffffffadf85458a2bb4a9aafdc5620273d3cf1d8b9c583ce2d3695"
	"a9e13641146433fbcc939dce249b3ef97d2fe363630c75d8f681b202aec4617a"
	"d3df1ed5d5fd65612433f51f5f066ed0856365553ded1af3b557135e7f57c935"
	"984f0c70e0e68b77e2a689daf3efe8721df158a136ade73530acca4f483a797a"
	"bc0ab182b324fb61d108a94bb2c8e3fbb96adab760d7f4681d4f42a3de394df4"
	"ae56ede76372bb190b07a7c8ee0a6d709e02fce1cdf7e2ecc03404cd28342f61"
	"9172fe9ce98583ff8e4f1232eef28183c3fe3b1b4c6fad733bb5fcbc2ec22005"
	"c58ef1837d1683b2c6f34a26c1b2effa886b423861285c97ffffffffffffffff";

// Known answer: private keys sha256("wharf host private") and
// sha256("wharf ctrl private") as big-endian integers.
const char kPrivA[] =
	"38247583c8366a00475840937155c3ece135b6e25dedcf3848f7fdbbe84f225f";
const char kPrivB[] =
	"7744b93569df1d27a6f75ae28903cf0c645fac49ae3c22e4b8a467ebda2e4121";
const char kPubA[] =
	"af1adacf2c6463f8f6118138b5c83591315eec45912ccc8f63781cd73faa5996"
	"a6538ad7b251d73b0d03edc9a2bc02e5e64407236f859043eefb264b67d8bb42"
	"97adae1bf13fb42d421223642c6e1469b8d894c48a860013fd173976173f0b1d"
	"8cc769d828904f4065630462cb1eeda875928bb908585469baa048a1931d92a5"
	"f32894c5fa9ec687e73b4518d213371a55c6357aa884eba9554dea16c9ae40e5"
	"3f5bef57c8735ee4d09f342e5e5d7f98c28471306f4c5985902bee20340fd287"
	"9fc370e3ed93878b4185f54e3ba89b31e6bb7c2721e7b267b25b8dfd9457d312"
	"f0362a03b2e907fdc672c3ba744097d5fbc7724bda7e305daffea8978688d3a0";
const char kPubB[] =
	"d4bc1b3f927436998bdb3dbd2981c353c80367bda01cdeb84b6cf4b8afe3f09c"
	"a4c4af648a3f4cd7ec09bfc3a9878fa2883ffa8ae5def59840dc09c5168ee420"
	"e9249d1618f9eded0d72363d138a873d14b744d9e83fbfaffde530cc7efaab22"
	"a8167b5bc2c2c032f7ce34eaf9f0d07992cf9452fc4604af686d833138f96636"
	"99e0573cf2b72e49bda8d681f7609ef8f177c2a293c8fb623f76993761f3b94d"
	"aca4b6c89609645ab0cefbdeab34825bed3fc3e7ab2024ad630e81413e01ddac"
	"78aeeeeb02c4d9f9e22997fb33a2aed53f95ed744293afadb3cc0ab55d9cfc2b"
	"e4d16d4a24638d8a278595b04fd7a15be9ffed30272280b615b7f7c7a40b4d3a";
const char kShared[] =
	"b17fda5591db8072aba92b0ab6ff6a2d16f614304c599d59131f4c923843cb40"
	"a9299b7fb761e75c891a1d0306ddb7c40a9ca322b891e81596bdd5a0bba186d7"
	"0bf80f4e845734d689cad0f91f6ce1d13c1b0bcd177003589dcce8317ef9e711"
	"298ee23979f033c980d29a90a2b3e8e40a621abb3142f479653f9c2e0cddb1ef"
	"57416ad426724f91af0a4def79dc227d2d9a0e7330d8e3e6eb8e07d33eda0b94"
	"a9ff9b50bb8f72006cbb9d5a032d9af0ecba2aac18eaa85bbab27d9662a6dff3"
	"efb0358969df2693f1141a1397950feaaa02978d1e60439b99175f73dc312191"
	"9db2409b1b4fb2b8aa7c63f205f813869135ece7b2954a60d4a30c9d2d05b3a3";

// With kShared as the session key: aug(h, kShared, C1), and the responses
// of EachHashWithoutDh's keys over the augmented C1 / C2.
const char *const kAugC1[] = {
	"7787e605387e865c500f3cba6ca9a5561f7405952987192ae1c7e0be802a63cd",
	"51e53c000cac056ed96342b6871a13e2ab550247c626a649617fe54ad2316476"
	"6a2665f349c1a4cf059be5d14dc6e6b6",
	"5af1393502300cd3abd5472a3fc39ca707282bcac40deada506edd8e9b126f84"
	"9aaaac9d5e6a43f7867097ce2dff5ce2262cdaa9f2919f1e86764d5a7e3dbdb2",
};
const char *const kDhHostResp[] = {
	"e053c6056a9d479c084e2f02755ad242b7c65fbecf8aa2bd9eff0fa0d893f959",
	"8cd0ecddc1b987e8129a2b6a4332a19ae3fa68f38dfc8284d9a0208b266ef22c"
	"c7d8a6ea2a7ab6fd2d3420cb89de9dad",
	"5e1a5b7e8dbfc073b617a9a30fc82e2b1c552570c018dd410d1b1aed78501c4f"
	"0fb79c1987050055649404aafdafc5654e78fa424213d4a0bc3bc961a09ea0e6",
};
const char *const kDhCtrlResp[] = {
	"35576cce6d0b79d2e9dbeb526bd5ca8030fd4a0347da0b7b97125fe2811df980",
	"28110a60e7bc5de53ca49431ad077ed9f77fec717f62693e2f7b30592600af70"
	"5b4613733d7f05579d10514e0f8681c4",
	"c3ff2dbba2110403cfc9c8dd110227c6d52ffe70f209f1fc5015fa9866387da8"
	"5efcefe0aef60a9ffa27c9dec5d3fcdf047df27410faefd19fbe6f93ae31184f",
};

struct DhDeleter {
	void operator()(nvme_auth_dh *dh) const
	{
		nvme_auth_dh_free(dh);
	}
};
using DhPtr = std::unique_ptr<nvme_auth_dh, DhDeleter>;

DhPtr Import(uint8_t gid, const Bytes &priv)
{
	nvme_auth_dh *dh = nullptr;

	EXPECT_EQ(0, nvme_auth_dh_import(gid, priv.data(), priv.size(), &dh));
	return DhPtr(dh);
}

TEST(NvmeAuthDh, Groups)
{
	const size_t lens[] = {0, 256, 384, 512, 768, 1024};

	for (uint8_t g = 0; g <= 5; g++)
		EXPECT_EQ(lens[g], nvme_auth_dhgroup_len(g));
	EXPECT_EQ(0u, nvme_auth_dhgroup_len(6));
	EXPECT_STREQ("null", nvme_auth_dhgroup_name(NVME_AUTH_DHGROUP_NULL));
	EXPECT_STREQ("ffdhe8192", nvme_auth_dhgroup_name(5));
	EXPECT_EQ(nullptr, nvme_auth_dhgroup_name(6));

	nvme_auth_dh *dh = nullptr;
	EXPECT_EQ(-EINVAL, nvme_auth_dh_generate(NVME_AUTH_DHGROUP_NULL, &dh));
	EXPECT_EQ(-EINVAL, nvme_auth_dh_generate(6, &dh));
	EXPECT_EQ(-EINVAL, nvme_auth_dh_generate(1, nullptr));
	EXPECT_EQ(nullptr, dh);
	nvme_auth_dh_free(nullptr);
}

TEST(NvmeAuthDh, TwoPairsAgreeInEachGroup)
{
	for (uint8_t g = NVME_AUTH_DHGROUP_2048; g <= NVME_AUTH_DHGROUP_8192;
	     g++) {
		size_t len = nvme_auth_dhgroup_len(g);
		nvme_auth_dh *a = nullptr, *b = nullptr;
		Bytes pa(len), pb(len), sa(len), sb(len);

		SCOPED_TRACE(nvme_auth_dhgroup_name(g));
		ASSERT_EQ(0, nvme_auth_dh_generate(g, &a));
		DhPtr ga(a);
		ASSERT_EQ(0, nvme_auth_dh_generate(g, &b));
		DhPtr gb(b);
		ASSERT_EQ(0, nvme_auth_dh_public(a, pa.data(), len));
		ASSERT_EQ(0, nvme_auth_dh_public(b, pb.data(), len));
		EXPECT_NE(pa, pb);
		ASSERT_EQ(0, nvme_auth_dh_shared(a, pb.data(), len, sa.data(),
						 len));
		ASSERT_EQ(0, nvme_auth_dh_shared(b, pa.data(), len, sb.data(),
						 len));
		EXPECT_EQ(sa, sb);
		EXPECT_NE(Bytes(len, 0), sa);
		// Lengths other than the group's are refused.
		EXPECT_EQ(-EINVAL, nvme_auth_dh_public(a, pa.data(), len - 1));
		EXPECT_EQ(-EINVAL, nvme_auth_dh_shared(a, pb.data(), len,
						       sa.data(), len + 1));
	}
}

TEST(NvmeAuthDh, KnownAnswer2048)
{
	DhPtr a = Import(NVME_AUTH_DHGROUP_2048, Hex(kPrivA));
	DhPtr b = Import(NVME_AUTH_DHGROUP_2048, Hex(kPrivB));
	Bytes pub(256), s(256);

	ASSERT_TRUE(a && b);
	ASSERT_EQ(0, nvme_auth_dh_public(a.get(), pub.data(), 256));
	EXPECT_EQ(Hex(kPubA), pub);
	ASSERT_EQ(0, nvme_auth_dh_public(b.get(), pub.data(), 256));
	EXPECT_EQ(Hex(kPubB), pub);
	Bytes pa = Hex(kPubA), pb = Hex(kPubB);
	ASSERT_EQ(0,
		  nvme_auth_dh_shared(a.get(), pb.data(), 256, s.data(), 256));
	EXPECT_EQ(Hex(kShared), s);
	ASSERT_EQ(0,
		  nvme_auth_dh_shared(b.get(), pa.data(), 256, s.data(), 256));
	EXPECT_EQ(Hex(kShared), s);
}

TEST(NvmeAuthDh, ValuesArePaddedToTheGroupSize)
{
	// x = 5: the public value 2^5 = 32; with the peer's 2^7 = 128 the
	// shared secret is 2^35, both in the last bytes of 256.
	DhPtr a = Import(NVME_AUTH_DHGROUP_2048, Bytes{5});
	Bytes pub(256), want(256, 0), peer(256, 0), s(256, 0xEE);

	ASSERT_TRUE(a);
	ASSERT_EQ(0, nvme_auth_dh_public(a.get(), pub.data(), 256));
	want[255] = 0x20;
	EXPECT_EQ(want, pub);
	peer[255] = 0x80;
	ASSERT_EQ(0, nvme_auth_dh_shared(a.get(), peer.data(), 256, s.data(),
					 256));
	want[255] = 0;
	want[251] = 0x08;
	EXPECT_EQ(want, s);
}

TEST(NvmeAuthDh, InvalidPeerValuesAreRefused)
{
	DhPtr a = Import(NVME_AUTH_DHGROUP_2048, Hex(kPrivA));
	const Bytes p = Hex(kP2048);
	Bytes zero(256, 0), one(256, 0), pm1 = p, pm2 = p, ff(256, 0xFF);
	Bytes s(256, 0xEE);

	ASSERT_TRUE(a);
	ASSERT_EQ(256u, p.size());
	one[255] = 1;
	pm1[255] -= 1;
	pm2[255] -= 2; // -2 mod p: not in the prime-order subgroup
	for (const Bytes *y : std::initializer_list<const Bytes *>{
		     &zero, &one, &pm1, &p, &ff, &pm2}) {
		EXPECT_EQ(-EINVAL, nvme_auth_dh_shared(a.get(), y->data(), 256,
						       s.data(), 256));
		EXPECT_EQ(Bytes(256, 0), s) << "cleansed on failure";
		s.assign(256, 0xEE);
	}
	// The right value with the wrong length: one byte short or long.
	Bytes pb = Hex(kPubB), longer(257, 0);
	memcpy(longer.data() + 1, pb.data(), 256);
	EXPECT_EQ(-EINVAL, nvme_auth_dh_shared(a.get(), pb.data() + 1, 255,
					       s.data(), 256));
	EXPECT_EQ(-EINVAL, nvme_auth_dh_shared(a.get(), longer.data(), 257,
					       s.data(), 256));
	EXPECT_EQ(-EINVAL,
		  nvme_auth_dh_shared(a.get(), nullptr, 256, s.data(), 256));
	// And a private key out of range.
	nvme_auth_dh *dh = nullptr;
	EXPECT_EQ(-EINVAL, nvme_auth_dh_import(1, one.data(), 256, &dh));
	EXPECT_EQ(-EINVAL, nvme_auth_dh_import(1, pm1.data(), 256, &dh));
	EXPECT_EQ(-EINVAL, nvme_auth_dh_import(0, pm2.data(), 256, &dh));
	EXPECT_EQ(nullptr, dh);
}

TEST(NvmeAuthDh, AugmentedChallengeAndResponses)
{
	const Bytes sk = Hex(kShared);

	for (uint8_t h = 1; h <= 3; h++) {
		size_t hl = nvme_auth_hash_len(h);
		nvme_auth_key hk = Key(hl, 0x10 + h, h);
		nvme_auth_key ck = Key(hl, 0x20 + h, h);
		nvme_auth_xchg x = Xchg(h, &sk);
		Bytes c1 = C1(hl), c2 = C2(hl), r(hl);

		SCOPED_TRACE(h);
		ASSERT_EQ(0,
			  nvme_auth_augmented_challenge(h, sk.data(), sk.size(),
							c1.data(), r.data()));
		EXPECT_EQ(Hex(kAugC1[h - 1]), r);
		ASSERT_EQ(0, nvme_auth_host_response(&hk, &x, c1.data(), kS1,
						     r.data()));
		EXPECT_EQ(Hex(kDhHostResp[h - 1]), r);
		ASSERT_EQ(0, nvme_auth_ctrl_response(&ck, &x, c2.data(), kS2,
						     r.data()));
		EXPECT_EQ(Hex(kDhCtrlResp[h - 1]), r);
	}
	uint8_t out[64];
	EXPECT_EQ(-EINVAL,
		  nvme_auth_augmented_challenge(1, sk.data(), 0, out, out));
	EXPECT_EQ(-EINVAL,
		  nvme_auth_augmented_challenge(0, sk.data(), 256, out, out));
}

// End to end with generated keys: both sides compute the same responses.
TEST(NvmeAuthDh, HostAndControllerAgree)
{
	nvme_auth_dh *h = nullptr, *c = nullptr;
	const size_t len = 384; // ffdhe3072

	ASSERT_EQ(0, nvme_auth_dh_generate(NVME_AUTH_DHGROUP_3072, &h));
	DhPtr hp(h);
	ASSERT_EQ(0, nvme_auth_dh_generate(NVME_AUTH_DHGROUP_3072, &c));
	DhPtr cp(c);
	Bytes hpub(len), cpub(len), hs(len), cs(len);
	ASSERT_EQ(0, nvme_auth_dh_public(h, hpub.data(), len));
	ASSERT_EQ(0, nvme_auth_dh_public(c, cpub.data(), len));
	ASSERT_EQ(0, nvme_auth_dh_shared(h, cpub.data(), len, hs.data(), len));
	ASSERT_EQ(0, nvme_auth_dh_shared(c, hpub.data(), len, cs.data(), len));

	nvme_auth_key hk, ck;
	ASSERT_EQ(0, nvme_auth_key_parse(kGood[3].text, &hk));
	ASSERT_EQ(0, nvme_auth_key_parse(kGood[2].text, &ck));
	nvme_auth_xchg hx = Xchg(NVME_AUTH_HASH_SHA384, &hs);
	nvme_auth_xchg cx = Xchg(NVME_AUTH_HASH_SHA384, &cs);
	Bytes c1 = C1(48), c2 = C2(48), r_host(48), r_ctrl(48);
	ASSERT_EQ(0, nvme_auth_host_response(&hk, &hx, c1.data(), kS1,
					     r_host.data()));
	ASSERT_EQ(0, nvme_auth_host_response(&hk, &cx, c1.data(), kS1,
					     r_ctrl.data()));
	EXPECT_TRUE(nvme_auth_equal(r_host.data(), r_ctrl.data(), 48));
	ASSERT_EQ(0, nvme_auth_ctrl_response(&ck, &cx, c2.data(), kS2,
					     r_ctrl.data()));
	ASSERT_EQ(0, nvme_auth_ctrl_response(&ck, &hx, c2.data(), kS2,
					     r_host.data()));
	EXPECT_TRUE(nvme_auth_equal(r_host.data(), r_ctrl.data(), 48));
	nvme_auth_key_clear(&hk);
	nvme_auth_key_clear(&ck);
}

} // namespace

namespace
{

TEST(NvmeAuthKey, ValidTellsWithoutKeepingTheKey)
{
	nvme_auth_key k = {};
	char text[NVME_AUTH_KEY_TEXT_MAX];

	k.len = 32;
	ASSERT_GT(nvme_auth_key_format(&k, text, sizeof(text)), 0);
	EXPECT_TRUE(nvme_auth_key_valid(text));
	EXPECT_FALSE(nvme_auth_key_valid("DHHC-1:00:c2VjcmV0:"));
	EXPECT_FALSE(nvme_auth_key_valid("secret"));
}

} // namespace
