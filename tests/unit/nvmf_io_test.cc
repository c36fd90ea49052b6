// I/O commands through the core: Read / Write with keyed and in-capsule
// data (round trips, FUA), Flush (one namespace and all), Write Zeroes
// (with deallocate), Dataset Management deallocate, the status for every
// refusal (LBA out of range, invalid / removed namespace, namespace not
// ready, MDTS, disabled controller, unknown opcodes), file-backed and null
// namespaces, and the SMART counters the I/O feeds.
#include <fcntl.h>
#include <unistd.h>

#include "tests/unit/nvmf_test_util.h"

namespace
{

using namespace nvmf_test;

class NvmfIo : public NvmfTest
{
      protected:
	nvmf_queue *admin_ = nullptr, *io_ = nullptr;
	uint16_t cntlid_ = 0;
	uint16_t cid_ = 1000;

	void SetUp() override
	{
		NvmfTest::SetUp();
		admin_ = Admin(kSub, &cntlid_);
		io_ = Io(1, cntlid_, 32);
	}

	Capsule Rw(uint8_t opc, uint32_t nsid, uint64_t slba, uint32_t nlb)
	{
		Capsule c = Cmd(opc, cid_++, nsid);
		c.sqe.cdw10 = (uint32_t)slba;
		c.sqe.cdw11 = (uint32_t)(slba >> 32);
		c.sqe.cdw12 = nlb - 1;
		return c;
	}

	nvmf_req Write(uint32_t nsid, uint64_t slba, std::vector<uint8_t> &d,
		       uint32_t bs = 512, bool in_capsule = false)
	{
		Capsule c = Rw(NVME_IO_WRITE, nsid, slba,
			       (uint32_t)(d.size() / bs));
		if (in_capsule) {
			c.icd = d;
			SetInCapsule(&c.sqe, 0, (uint32_t)d.size());
		} else {
			SetKeyed(&c.sqe, d.data(), (uint32_t)d.size());
		}
		return Exec(io_, c);
	}

	nvmf_req Read(uint32_t nsid, uint64_t slba, std::vector<uint8_t> *d,
		      uint32_t bytes, uint32_t bs = 512)
	{
		d->assign(bytes, 0xEE);
		Capsule c = Rw(NVME_IO_READ, nsid, slba, bytes / bs);
		SetKeyed(&c.sqe, d->data(), bytes);
		Slot s;
		nvmf_act act = Run(io_, &s, c);
		if (Status(s.req) == 0)
			EXPECT_EQ(NVMF_ACT_WRITE_RESPOND, act);
		else
			EXPECT_EQ(NVMF_ACT_RESPOND, act);
		return s.req;
	}

	static std::vector<uint8_t> Pattern(size_t n, uint8_t seed)
	{
		std::vector<uint8_t> v(n);
		for (size_t i = 0; i < n; i++)
			v[i] = (uint8_t)(seed ^ (i * 13));
		return v;
	}

	void ExpectZero(uint32_t nsid, uint64_t slba, uint32_t bytes,
			uint32_t bs = 512)
	{
		std::vector<uint8_t> d;
		ASSERT_EQ(0, Status(Read(nsid, slba, &d, bytes, bs)));
		for (uint8_t b : d)
			ASSERT_EQ(0, b);
	}
};

TEST_F(NvmfIo, WriteThenReadBack)
{
	std::vector<uint8_t> in = Pattern(8192, 1), out;
	ASSERT_EQ(0, Status(Write(1, 100, in)));
	ASSERT_EQ(0, Status(Read(1, 100, &out, 8192)));
	EXPECT_EQ(in, out);
	// Different LBA size on namespace 2.
	std::vector<uint8_t> in2 = Pattern(3 * 4096, 2);
	ASSERT_EQ(0, Status(Write(2, 7, in2, 4096)));
	ASSERT_EQ(0, Status(Read(2, 7, &out, 3 * 4096, 4096)));
	EXPECT_EQ(in2, out);
	// Namespaces are separate.
	ExpectZero(2, 0, 4096, 4096);
}

TEST_F(NvmfIo, InCapsuleWriteAndFua)
{
	std::vector<uint8_t> in = Pattern(4096, 3), out;
	ASSERT_EQ(0, Status(Write(1, 0, in, 512, true)));
	ASSERT_EQ(0, Status(Read(1, 0, &out, 4096)));
	EXPECT_EQ(in, out);
	Capsule c = Rw(NVME_IO_WRITE, 1, 8, 1);
	c.sqe.cdw12 |= NVME_RW_FUA | NVME_RW_LR;
	c.icd = Pattern(512, 4);
	SetInCapsule(&c.sqe, 0, 512);
	EXPECT_EQ(0, Status(Exec(io_, c)));
}

TEST_F(NvmfIo, LbaRange)
{
	std::vector<uint8_t> d(1024);
	// Namespace 1: 2048 blocks of 512 bytes.
	EXPECT_EQ(0, Status(Write(1, 2046, d)));
	nvmf_req r = Write(1, 2047, d);
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(r));
	EXPECT_TRUE(Dnr(r));
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(Read(1, 2048, &d, 512)));
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(Read(1, UINT64_MAX, &d, 512)));
	// SLBA + NLB overflowing 64 bits.
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(Read(1, UINT64_MAX - 1, &d, 2 * 512)));
	Capsule wz = Rw(NVME_IO_WRITE_ZEROES, 1, 2040, 9);
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(Exec(io_, wz)));
}

TEST_F(NvmfIo, TransferAboveMdtsIsInvalidField)
{
	std::vector<uint8_t> d(128 * 1024 + 512);
	nvmf_req r = Write(1, 0, d);
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(r));
	d.resize(128 * 1024);
	EXPECT_EQ(0, Status(Write(1, 0, d)));
	// 65536 blocks of 4 KiB: far above, and NLB is 16 bits.
	Capsule c = Rw(NVME_IO_READ, 2, 0, 65536);
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(Exec(io_, c)));
	c = Rw(NVME_IO_READ, 2, 0, 64);
	EXPECT_EQ(NVME_SC_INVALID_FIELD, Sc(Exec(io_, c)));
}

TEST_F(NvmfIo, NamespaceStatuses)
{
	std::vector<uint8_t> d(512);
	for (uint32_t nsid : {0u, 3u, 1025u, NVME_NSID_ALL}) {
		nvmf_req r = Read(nsid, 0, &d, 512);
		EXPECT_EQ(NVME_SC_INVALID_NS, Sc(r)) << nsid;
		EXPECT_TRUE(Dnr(r));
	}
	ASSERT_EQ(0, nvmf_tgt_ns_set_ready(tgt_, kSub, 1, false));
	nvmf_req r = Read(1, 0, &d, 512);
	EXPECT_EQ(NVME_SC_NS_NOT_READY, Sc(r));
	EXPECT_FALSE(Dnr(r)); // retryable
	EXPECT_EQ(NVME_SC_NS_NOT_READY,
		  Sc(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, 1))));
	ASSERT_EQ(0, nvmf_tgt_ns_set_ready(tgt_, kSub, 1, true));
	EXPECT_EQ(0, Status(Read(1, 0, &d, 512)));
	EXPECT_EQ(-ENOENT, nvmf_tgt_ns_set_ready(tgt_, kSub, 3, true));
	EXPECT_EQ(-ENOENT,
		  nvmf_tgt_ns_set_ready(tgt_, "nqn.2024-01.x:y", 1, true));
	// Removed while its data is being fetched: Invalid Namespace.
	Capsule c = Rw(NVME_IO_WRITE, 1, 0, 1);
	SetKeyed(&c.sqe, d.data(), 512);
	Slot s;
	std::vector<uint8_t> b = c.Bytes();
	ASSERT_EQ(NVMF_ACT_READ,
		  nvmf_req_recv(io_, &s.req, b.data(), b.size()));
	ASSERT_EQ(0, nvmf_tgt_ns_remove(tgt_, kSub, 1));
	s.req.data = d.data();
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_exec(io_, &s.req));
	EXPECT_EQ(NVME_SC_INVALID_NS, Sc(s.req));
	EXPECT_EQ(NVME_SC_INVALID_NS, Sc(Read(1, 0, &d, 512)));
	EXPECT_EQ(-ENOENT, nvmf_tgt_ns_set_ready(tgt_, kSub, 1, true));
}

TEST_F(NvmfIo, FlushOneAndAll)
{
	EXPECT_EQ(0, Status(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, 2))));
	EXPECT_EQ(0,
		  Status(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, NVME_NSID_ALL))));
	EXPECT_EQ(NVME_SC_INVALID_NS,
		  Sc(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, 4))));
}

TEST_F(NvmfIo, WriteZeroesAndDeallocate)
{
	std::vector<uint8_t> in = Pattern(16 * 512, 5), out;
	ASSERT_EQ(0, Status(Write(1, 0, in)));
	Capsule wz = Rw(NVME_IO_WRITE_ZEROES, 1, 2, 3);
	ASSERT_EQ(0, Status(Exec(io_, wz)));
	wz = Rw(NVME_IO_WRITE_ZEROES, 1, 8, 8);
	wz.sqe.cdw12 |= NVME_RW_DEAC;
	ASSERT_EQ(0, Status(Exec(io_, wz)));
	ASSERT_EQ(0, Status(Read(1, 0, &out, 16 * 512)));
	for (size_t i = 0; i < out.size(); i++) {
		size_t lba = i / 512;
		bool zero = (lba >= 2 && lba < 5) || lba >= 8;
		ASSERT_EQ(zero ? 0 : in[i], out[i]) << i;
	}
}

TEST_F(NvmfIo, DatasetManagementDeallocate)
{
	std::vector<uint8_t> in = Pattern(64 * 512, 6), out;
	ASSERT_EQ(0, Status(Write(1, 0, in)));
	nvme_dsm_range r[3];
	memset(r, 0, sizeof(r));
	r[0].slba = 4;
	r[0].nlb = 4;
	r[1].slba = 40;
	r[1].nlb = 0; // skipped
	r[2].slba = 60;
	r[2].nlb = 4;
	Capsule c = Cmd(NVME_IO_DSM, cid_++, 1);
	c.sqe.cdw10 = 2; // 3 ranges
	c.sqe.cdw11 = NVME_DSM_AD;
	c.icd.resize(sizeof(r));
	memcpy(c.icd.data(), r, sizeof(r));
	SetInCapsule(&c.sqe, 0, sizeof(r));
	ASSERT_EQ(0, Status(Exec(io_, c)));
	ASSERT_EQ(0, Status(Read(1, 0, &out, 64 * 512)));
	for (size_t i = 0; i < out.size(); i++) {
		size_t lba = i / 512;
		bool zero = (lba >= 4 && lba < 8) || lba >= 60;
		ASSERT_EQ(zero ? 0 : in[i], out[i]) << i;
	}
	// Without AD it is a hint: nothing changes.
	c.sqe.cdw11 = 0x3;
	c.sqe.cid = cid_++;
	r[0].slba = 0;
	memcpy(c.icd.data(), r, sizeof(r));
	ASSERT_EQ(0, Status(Exec(io_, c)));
	ASSERT_EQ(0, Status(Read(1, 0, &out, 512)));
	EXPECT_EQ(0, memcmp(out.data(), in.data(), 512));
	// One bad range fails the command before anything is deallocated.
	r[1].slba = 2047;
	r[1].nlb = 2;
	c.sqe.cdw11 = NVME_DSM_AD;
	c.sqe.cid = cid_++;
	memcpy(c.icd.data(), r, sizeof(r));
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(Exec(io_, c)));
	ASSERT_EQ(0, Status(Read(1, 0, &out, 512)));
	EXPECT_EQ(0, memcmp(out.data(), in.data(), 512));
	// Keyed ranges work too (256 ranges, the maximum).
	std::vector<nvme_dsm_range> many(256);
	memset(many.data(), 0, many.size() * sizeof(many[0]));
	many[255].slba = 0;
	many[255].nlb = 1;
	c = Cmd(NVME_IO_DSM, cid_++, 1);
	c.sqe.cdw10 = 255;
	c.sqe.cdw11 = NVME_DSM_AD;
	SetKeyed(&c.sqe, many.data(), 4096);
	ASSERT_EQ(0, Status(Exec(io_, c)));
	ExpectZero(1, 0, 512);
}

TEST_F(NvmfIo, UnsupportedOpcodesAreInvalidOpcode)
{
	const uint8_t opcodes[] = {NVME_IO_WRITE_UNCOR,
				   NVME_IO_COMPARE,
				   0x0C,
				   0x0D,
				   0x11,
				   0x7D,
				   0x80,
				   0xFF};
	for (uint8_t opc : opcodes) {
		nvmf_req r = Exec(io_, Cmd(opc, cid_++, 1));
		EXPECT_EQ(NVME_SC_INVALID_OPCODE, Sc(r)) << (int)opc;
		EXPECT_TRUE(Dnr(r));
	}
	// Admin opcodes mean nothing on an I/O queue.
	EXPECT_EQ(NVME_SC_INVALID_OPCODE,
		  Sc(Exec(io_, Cmd(NVME_ADM_IDENTIFY, cid_++, 1))));
}

TEST_F(NvmfIo, ResetControllerKillsIoQueues)
{
	// CC.EN 1 -> 0 deletes the I/O queues: the binding is told to
	// disconnect them and capsules arriving meanwhile are dropped.
	EXPECT_EQ(0, Status(PropSet(admin_, NVME_PROP_CC, 0)));
	ASSERT_TRUE(fake_.WasKilled(io_));
	Slot s;
	EXPECT_EQ(NVMF_ACT_DROP, Run(io_, &s, Rw(NVME_IO_READ, 1, 0, 1)));
}

TEST_F(NvmfIo, InFlightWriteCompletesAfterReset)
{
	std::vector<uint8_t> d(512, 0x5A), out;
	Capsule c = Rw(NVME_IO_WRITE, 1, 0, 1);
	SetKeyed(&c.sqe, d.data(), 512);
	Slot s;
	std::vector<uint8_t> b = c.Bytes();
	ASSERT_EQ(NVMF_ACT_READ,
		  nvmf_req_recv(io_, &s.req, b.data(), b.size()));
	EXPECT_EQ(0, Status(PropSet(admin_, NVME_PROP_CC, 0)));
	// Checked when it was received: the data in flight still lands.
	s.req.data = d.data();
	EXPECT_EQ(NVMF_ACT_RESPOND, nvmf_req_exec(io_, &s.req));
	EXPECT_EQ(0, Status(s.req));
	EXPECT_EQ(0u, nvmf_queue_inflight(io_));
}

TEST_F(NvmfIo, SmartCountsIo)
{
	std::vector<uint8_t> d(4096), buf(512);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, Status(Write(1, 0, d)));
	ASSERT_EQ(0, Status(Read(1, 0, &d, 4096)));
	nvmf_queue *io2 = Io(2, cntlid_);
	Capsule c = Rw(NVME_IO_READ, 1, 0, 1);
	SetKeyed(&c.sqe, buf.data(), 512);
	ASSERT_EQ(0, Status(Exec(io2, c)));
	DestroyQueue(io2); // its counts are kept

	Capsule g = Cmd(NVME_ADM_GET_LOG_PAGE, 300);
	g.sqe.cdw10 = NVME_LID_SMART | (127u << 16);
	SetKeyed(&g.sqe, buf.data(), 512);
	ASSERT_EQ(0, Status(Exec(admin_, g)));
	nvme_smart_log s;
	memcpy(&s, buf.data(), sizeof(s));
	uint64_t v;
	memcpy(&v, s.host_reads, 8);
	EXPECT_EQ(2u, v);
	memcpy(&v, s.host_writes, 8);
	EXPECT_EQ(3u, v);
	memcpy(&v, s.data_units_read, 8);
	EXPECT_EQ(1u, v); // 9 units of 512 bytes, rounded up to 1000s
	memcpy(&v, s.data_units_written, 8);
	EXPECT_EQ(1u, v);
}

class NvmfIoFile : public NvmfIo
{
      protected:
	char path_[64] = "/tmp/nvmf_io_testXXXXXX";

	void SetUp() override
	{
		int fd = mkstemp(path_);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(0, ftruncate(fd, 1 << 20));
		close(fd);
		Create(std::string("listen 10.0.0.1\nsubsystem ") + kSub +
		       "\n namespace 1 file:" + path_ +
		       " block=4096\n allow-any-host\n");
		admin_ = Admin(kSub, &cntlid_);
		io_ = Io(1, cntlid_, 32);
	}

	void TearDown() override
	{
		NvmfIo::TearDown();
		unlink(path_);
	}
};

TEST_F(NvmfIoFile, FileBackedNamespace)
{
	std::vector<uint8_t> in = Pattern(8192, 9), out;
	ASSERT_EQ(0, Status(Write(1, 3, in, 4096)));
	ASSERT_EQ(0, Status(Read(1, 3, &out, 8192, 4096)));
	EXPECT_EQ(in, out);
	// The bytes are in the file, at LBA 3 x 4096.
	int fd = open(path_, O_RDONLY);
	ASSERT_GE(fd, 0);
	std::vector<uint8_t> raw(8192);
	ASSERT_EQ(8192, pread(fd, raw.data(), raw.size(), 3 * 4096));
	close(fd);
	EXPECT_EQ(in, raw);

	Capsule c = Rw(NVME_IO_WRITE, 1, 10, 1);
	c.sqe.cdw12 |= NVME_RW_FUA;
	SetKeyed(&c.sqe, in.data(), 4096);
	EXPECT_EQ(0, Status(Exec(io_, c)));
	EXPECT_EQ(0, Status(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, 1))));
	Capsule wz = Rw(NVME_IO_WRITE_ZEROES, 1, 3, 1);
	wz.sqe.cdw12 |= NVME_RW_DEAC;
	ASSERT_EQ(0, Status(Exec(io_, wz)));
	ExpectZero(1, 3, 4096, 4096);
	ASSERT_EQ(0, Status(Read(1, 4, &out, 4096, 4096)));
	EXPECT_EQ(0, memcmp(out.data(), in.data() + 4096, 4096));

	// Identify reports a volatile write cache (flush means fdatasync).
	std::vector<uint8_t> id(4096);
	Capsule ic = Cmd(NVME_ADM_IDENTIFY, 5);
	ic.sqe.cdw10 = NVME_CNS_CTRL;
	SetKeyed(&ic.sqe, id.data(), 4096);
	ASSERT_EQ(0, Status(Exec(admin_, ic)));
	EXPECT_EQ(NVME_VWC_PRESENT, id[525]);
}

class NvmfIoNull : public NvmfIo
{
      protected:
	void SetUp() override
	{
		Create(std::string("listen 10.0.0.1\nsubsystem ") + kSub +
		       "\n namespace 1 null:1T block=4096\n allow-any-host\n");
		admin_ = Admin(kSub, &cntlid_);
		io_ = Io(1, cntlid_, 32);
	}
};

TEST_F(NvmfIoNull, WritesAreDiscardedReadsAreZero)
{
	// A 1 TiB namespace costs no memory; its last LBA is addressable.
	const uint64_t last = (1ull << 40) / 4096 - 1;
	std::vector<uint8_t> in = Pattern(8192, 4);
	ASSERT_EQ(0, Status(Write(1, last - 1, in, 4096)));
	std::vector<uint8_t> icd = Pattern(4096, 6);
	ASSERT_EQ(0, Status(Write(1, 5, icd, 4096, true)));
	ExpectZero(1, last - 1, 8192, 4096);
	ExpectZero(1, 5, 4096, 4096);
	EXPECT_EQ(NVME_SC_LBA_RANGE, Sc(Write(1, last, in, 4096)));
	EXPECT_EQ(0, Status(Exec(io_, Cmd(NVME_IO_FLUSH, cid_++, 1))));
	Capsule wz = Rw(NVME_IO_WRITE_ZEROES, 1, 0, 8);
	wz.sqe.cdw12 |= NVME_RW_DEAC;
	EXPECT_EQ(0, Status(Exec(io_, wz)));
}

} // namespace
