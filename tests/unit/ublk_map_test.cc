// wharf-ublk's pure pieces: the device's parameters from the namespace,
// each request's NVMe command and result, the command line.
#include <errno.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "initiators/ublk/ublk_args.h"
#include "initiators/ublk/ublk_map.h"
}

namespace
{

ublk_geom Geom()
{
	ublk_geom g = {};
	g.block = 4096;
	g.nblocks = 16384; // 64 MiB
	g.max_io = 131072;
	g.dsm = true;
	g.wzeroes = true;
	return g;
}

ublksrv_io_desc Iod(uint8_t op, uint64_t sector, uint32_t sectors,
		    uint32_t flags = 0)
{
	ublksrv_io_desc d = {};
	d.op_flags = op | flags;
	d.start_sector = sector;
	d.nr_sectors = sectors;
	return d;
}

TEST(UblkParams, FromNamespace)
{
	ublk_geom g = Geom();
	ublk_params p;
	ASSERT_EQ(0, ublk_params_from_geom(&g, &p));
	EXPECT_EQ(sizeof(p), p.len);
	EXPECT_EQ(unsigned(UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD),
		  p.types);
	EXPECT_EQ(12, p.basic.logical_bs_shift);
	EXPECT_EQ(12, p.basic.physical_bs_shift);
	EXPECT_EQ(256u, p.basic.max_sectors);
	EXPECT_EQ(131072u, p.basic.dev_sectors);
	EXPECT_TRUE(p.basic.attrs & UBLK_ATTR_VOLATILE_CACHE);
	EXPECT_FALSE(p.basic.attrs & UBLK_ATTR_FUA);
	EXPECT_FALSE(p.basic.attrs & UBLK_ATTR_READ_ONLY);
	EXPECT_EQ(4096u, p.discard.discard_granularity);
	EXPECT_EQ(1u, p.discard.max_discard_segments);
	// 65536 blocks of 4 KiB: Write Zeroes' 16-bit NLB.
	EXPECT_EQ(65536u * 8, p.discard.max_write_zeroes_sectors);
}

TEST(UblkParams, LimitsOfTheController)
{
	ublk_geom g = Geom();
	g.block = 512;
	g.nblocks = 131072;
	g.max_io = 32768 + 100; // not a whole number of blocks
	g.wzsl = 2;		// 16 KiB
	g.dmrsl = 1024;
	ublk_params p;
	ASSERT_EQ(0, ublk_params_from_geom(&g, &p));
	EXPECT_EQ(9, p.basic.logical_bs_shift);
	EXPECT_EQ(64u, p.basic.max_sectors);
	EXPECT_EQ(32u, p.discard.max_write_zeroes_sectors);
	EXPECT_EQ(1024u, p.discard.max_discard_sectors);

	// A limit that is not a whole page: the driver rounds its buffer
	// down to pages.
	g.max_io = 6000;
	ASSERT_EQ(0, ublk_params_from_geom(&g, &p));
	EXPECT_EQ(8u, p.basic.max_sectors);
	// DMSL (blocks of one command) below DMRSL (of one range).
	g.dmsl = 100;
	ASSERT_EQ(0, ublk_params_from_geom(&g, &p));
	EXPECT_EQ(100u, p.discard.max_discard_sectors);

	g.dsm = g.wzeroes = false;
	g.read_only = true;
	ASSERT_EQ(0, ublk_params_from_geom(&g, &p));
	EXPECT_EQ(unsigned(UBLK_PARAM_TYPE_BASIC), p.types);
	EXPECT_TRUE(p.basic.attrs & UBLK_ATTR_READ_ONLY);
}

TEST(UblkParams, RefusesWhatNoDeviceHas)
{
	ublk_geom g = Geom();
	ublk_params p;
	g.block = 3000;
	EXPECT_EQ(-EINVAL, ublk_params_from_geom(&g, &p));
	g.block = 256;
	EXPECT_EQ(-EINVAL, ublk_params_from_geom(&g, &p));
	g.block = 8192; // above the driver's page
	EXPECT_EQ(-EINVAL, ublk_params_from_geom(&g, &p));
	g = Geom();
	g.max_io = 4000; // below one page
	EXPECT_EQ(-EINVAL, ublk_params_from_geom(&g, &p));
	g = Geom();
	g.nblocks = 0;
	EXPECT_EQ(-EINVAL, ublk_params_from_geom(&g, &p));
}

TEST(UblkCmd, ReadWriteFlush)
{
	ublk_geom g = Geom();
	ublk_nvme_cmd c;
	ublksrv_io_desc d = Iod(UBLK_IO_OP_READ, 16, 64);
	ASSERT_EQ(0, ublk_cmd_of(&d, &g, &c));
	EXPECT_EQ(UBLK_NVME_READ, c.op);
	EXPECT_EQ(2u, c.slba);
	EXPECT_EQ(8u, c.nlb);
	EXPECT_EQ(32768u, c.bytes);
	EXPECT_EQ(32768, ublk_result_of(&c, 0));

	d = Iod(UBLK_IO_OP_WRITE, 0, 256);
	ASSERT_EQ(0, ublk_cmd_of(&d, &g, &c));
	EXPECT_EQ(UBLK_NVME_WRITE, c.op);
	EXPECT_EQ(32u, c.nlb);

	d = Iod(UBLK_IO_OP_FLUSH, 0, 0);
	ASSERT_EQ(0, ublk_cmd_of(&d, &g, &c));
	EXPECT_EQ(UBLK_NVME_FLUSH, c.op);
	EXPECT_EQ(0, ublk_result_of(&c, 0));
}

TEST(UblkCmd, DiscardAndWriteZeroes)
{
	ublk_geom g = Geom();
	ublk_nvme_cmd c;
	ublksrv_io_desc d = Iod(UBLK_IO_OP_DISCARD, 8, 2048);
	ASSERT_EQ(0, ublk_cmd_of(&d, &g, &c));
	EXPECT_EQ(UBLK_NVME_DEALLOCATE, c.op);
	EXPECT_EQ(1u, c.slba);
	EXPECT_EQ(256u, c.nlb);

	d = Iod(UBLK_IO_OP_WRITE_ZEROES, 0, 64);
	ASSERT_EQ(0, ublk_cmd_of(&d, &g, &c));
	EXPECT_EQ(UBLK_NVME_WRITE_ZEROES, c.op);
	EXPECT_TRUE(c.deallocate);
	d = Iod(UBLK_IO_OP_WRITE_ZEROES, 0, 64, UBLK_IO_F_NOUNMAP);
	ASSERT_EQ(0, ublk_cmd_of(&d, &g, &c));
	EXPECT_FALSE(c.deallocate) << "NOUNMAP: the blocks stay allocated";

	g.dsm = g.wzeroes = false;
	d = Iod(UBLK_IO_OP_DISCARD, 8, 8);
	EXPECT_EQ(-EOPNOTSUPP, ublk_cmd_of(&d, &g, &c));
	d = Iod(UBLK_IO_OP_WRITE_ZEROES, 8, 8);
	EXPECT_EQ(-EOPNOTSUPP, ublk_cmd_of(&d, &g, &c));
}

TEST(UblkCmd, LargeDiscards)
{
	ublk_geom g = Geom();
	g.nblocks = 1ull << 30; // 4 TiB
	ublk_params p;
	ASSERT_EQ(0, ublk_params_from_geom(&g, &p));
	EXPECT_EQ(UINT32_MAX, p.discard.max_discard_sectors)
		<< "no DMRSL: the most the field holds";
	// 3 GiB: its length does not fit the driver's signed result.
	ublk_nvme_cmd c;
	ublksrv_io_desc d = Iod(UBLK_IO_OP_DISCARD, 0, 6291456);
	ASSERT_EQ(0, ublk_cmd_of(&d, &g, &c));
	EXPECT_EQ(786432u, c.nlb);
	EXPECT_EQ(0, ublk_result_of(&c, 0)) << "success, not a negative size";
	g.dmsl = 1024;
	EXPECT_EQ(-EINVAL, ublk_cmd_of(&d, &g, &c)) << "above DMSL";
}

TEST(UblkCmd, RefusesBadRanges)
{
	ublk_geom g = Geom();
	ublk_nvme_cmd c;
	ublksrv_io_desc d = Iod(UBLK_IO_OP_READ, 1, 8); // not 4 KiB aligned
	EXPECT_EQ(-EINVAL, ublk_cmd_of(&d, &g, &c));
	d = Iod(UBLK_IO_OP_READ, 0, 4); // half a block
	EXPECT_EQ(-EINVAL, ublk_cmd_of(&d, &g, &c));
	d = Iod(UBLK_IO_OP_WRITE, 0, 264); // above max_io
	EXPECT_EQ(-EINVAL, ublk_cmd_of(&d, &g, &c));
	d = Iod(UBLK_IO_OP_READ, 131072 - 8, 16); // past the end
	EXPECT_EQ(-EINVAL, ublk_cmd_of(&d, &g, &c));
	d = Iod(UBLK_IO_OP_READ, 131072 - 8, 8); // the last block
	EXPECT_EQ(0, ublk_cmd_of(&d, &g, &c));
	d = Iod(UBLK_IO_OP_READ, 0, 0);
	EXPECT_EQ(-EINVAL, ublk_cmd_of(&d, &g, &c));
	d = Iod(UBLK_IO_OP_WRITE_SAME, 0, 8);
	EXPECT_EQ(-EOPNOTSUPP, ublk_cmd_of(&d, &g, &c));
}

TEST(UblkCmd, ResultsTheBlockLayerMaps)
{
	ublk_nvme_cmd c = {};
	c.bytes = 4096;
	EXPECT_EQ(-EIO, ublk_result_of(&c, -EIO));
	EXPECT_EQ(-EIO, ublk_result_of(&c, -ETIMEDOUT));
	EXPECT_EQ(-ENOLINK, ublk_result_of(&c, -ENOLINK));
	EXPECT_EQ(-ENODEV, ublk_result_of(&c, -ENODEV));
}

int Parse(std::vector<std::string> v, ublk_args *a, std::string *err)
{
	std::vector<char *> argv;
	v.insert(v.begin(), "wharf-ublk");
	for (auto &s : v)
		argv.push_back(&s[0]);
	argv.push_back(nullptr);
	char e[256] = "";
	optind = 0;
	int rc = ublk_parse((int)v.size(), argv.data(), a, e, sizeof(e));
	*err = e;
	return rc;
}

TEST(UblkArgs, Verbs)
{
	ublk_args a;
	std::string err;
	ASSERT_EQ(0, Parse({"add", "--traddr", "10.0.0.1", "--subnqn", "nqn.x",
			    "--ctrl-loss-tmo", "600", "--reconnect-delay", "2",
			    "--fast_io_fail_tmo", "0"},
			   &a, &err))
		<< err;
	EXPECT_EQ(UBLK_VERB_ADD, a.verb);
	EXPECT_EQ(600000u, a.host.ctrl_loss_tmo_ms) << "seconds, as nvme-cli";
	EXPECT_EQ(2000u, a.host.reconnect_delay_ms);
	EXPECT_EQ(0u, a.host.fast_io_fail_tmo_ms) << "0: the default, never";
	EXPECT_EQ(UBLK_ARGS_ANY_NUMBER, a.number);
	EXPECT_STREQ("4420", a.host.trsvcid);

	ASSERT_EQ(0, Parse({"add", "--traddr", "a", "--subnqn", "n",
			    "--ctrl-loss-tmo", "-1"},
			   &a, &err));
	EXPECT_EQ(WHARF_NVMF_HOST_TMO_INFINITE, a.host.ctrl_loss_tmo_ms);
	ASSERT_EQ(0, Parse({"recover", "--number", "3", "--traddr", "a",
			    "--subnqn", "n"},
			   &a, &err));
	EXPECT_EQ(UBLK_VERB_RECOVER, a.verb);
	EXPECT_EQ(3, a.number);
	ASSERT_EQ(0, Parse({"del", "--all"}, &a, &err));
	EXPECT_TRUE(a.all);
	ASSERT_EQ(0, Parse({"list", "--json"}, &a, &err));
	EXPECT_TRUE(a.json);
	ASSERT_EQ(0, Parse({"--help"}, &a, &err));
	EXPECT_TRUE(a.help);
}

TEST(UblkArgs, Refusals)
{
	ublk_args a;
	std::string err;
	EXPECT_EQ(-EINVAL, Parse({}, &a, &err));
	EXPECT_NE(std::string::npos, err.find("subcommand")) << err;
	EXPECT_EQ(-EINVAL, Parse({"attach"}, &a, &err));
	EXPECT_NE(std::string::npos, err.find("not add, recover, del or list"))
		<< err;
	EXPECT_EQ(-EINVAL, Parse({"add", "--traddr", "a"}, &a, &err));
	EXPECT_NE(std::string::npos, err.find("--subnqn")) << err;
	EXPECT_EQ(-EINVAL, Parse({"recover", "--traddr", "a", "--subnqn", "n"},
				 &a, &err));
	EXPECT_NE(std::string::npos, err.find("--number")) << err;
	EXPECT_EQ(-EINVAL, Parse({"del"}, &a, &err));
	EXPECT_EQ(-EINVAL, Parse({"del", "--number", "1", "--all"}, &a, &err));
	EXPECT_EQ(-EINVAL, Parse({"add", "--traddr", "a", "--subnqn", "n",
				  "--ctrl-loss-tmo", "-2"},
				 &a, &err));
	EXPECT_EQ(-EINVAL, Parse({"add", "--traddr", "a", "--subnqn", "n",
				  "--max-io-size", "2m"},
				 &a, &err));
}

} // namespace
