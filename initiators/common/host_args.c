/*
 * initiators/common/host_args.c - the controller options shared by the
 * host module's programs (host_args.h).
 */
#include "initiators/common/host_args.h"

#include <errno.h>

#include "cli/cli.h"

int host_args_opt(const struct host_args *c, int opt, const char *val)
{
	uint64_t n;

	switch (opt) {
	case HOST_OPT_TRADDR:
		*c->traddr = val;
		return 1;
	case HOST_OPT_TRSVCID:
		if (cli_u64(val, 0, 65535, &n))
			return -EINVAL;
		*c->trsvcid = val;
		return 1;
	case HOST_OPT_SUBNQN:
		*c->subnqn = val;
		return 1;
	case HOST_OPT_HOSTNQN:
		*c->hostnqn = val;
		return 1;
	case HOST_OPT_NSID:
		if (cli_u64(val, 1, 0xFFFFFFFEu, &n))
			return -EINVAL;
		*c->nsid = (uint32_t)n;
		return 1;
	case HOST_OPT_QUEUES:
		if (cli_u64(val, 1, 1024, &n))
			return -EINVAL;
		*c->queues = (unsigned)n;
		return 1;
	case HOST_OPT_SHARDS:
		if (cli_u64(val, 1, 1024, &n))
			return -EINVAL;
		*c->shards = (unsigned)n;
		return 1;
	default:
		return 0;
	}
}

struct host_parse {
	const struct host_args *c;
	cli_opt_fn own;
	void *arg;
};

static int host_parse_opt(void *arg, int opt, const char *val)
{
	const struct host_parse *p = arg;
	int rc = host_args_opt(p->c, opt, val);

	return rc ? (rc < 0 ? rc : 0) : p->own(p->arg, opt, val);
}

int host_args_parse(int argc, char **argv, const struct option *longopts,
		    const struct host_args *c, cli_opt_fn own, void *arg,
		    char *err, size_t errlen)
{
	struct host_parse p = {c, own, arg};

	return cli_parse(argc, argv, "h", longopts, host_parse_opt, &p, err,
			 errlen);
}
