/*
 * initiators/common/host_args.c - the controller options shared by the
 * host module's programs (host_args.h).
 */
#include "initiators/common/host_args.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "proto/nvme/auth.h"
#include "proto/nvme/hostid.h"

#define MAX_SECONDS (30u * 86400u)

void host_args_init(struct host_args *h)
{
	memset(h, 0, sizeof(*h));
	h->trsvcid = "4420";
	h->nsid = 1;
}

/* Seconds with up to three decimals, in [@min_ms, MAX_SECONDS], as ms;
 * "-1" gives -1 when @neg allows it. */
static int secs_ms(const char *v, bool neg, uint32_t min_ms, int64_t *out)
{
	const char *dot = strchr(v, '.');
	char whole[16];
	uint64_t s = 0, frac = 0;
	size_t n = dot ? (size_t)(dot - v) : strlen(v);

	if (neg && !strcmp(v, "-1")) {
		*out = -1;
		return 0;
	}
	if (!n || n >= sizeof(whole))
		return -EINVAL;
	memcpy(whole, v, n);
	whole[n] = '\0';
	if (cli_u64(whole, 0, MAX_SECONDS, &s))
		return -EINVAL;
	if (dot) {
		size_t d = strlen(dot + 1);

		if (!d || d > 3 || cli_u64(dot + 1, 0, 999, &frac))
			return -EINVAL;
		for (; d < 3; d++)
			frac *= 10;
	}
	s = s * 1000 + frac;
	if (s < min_ms || s > MAX_SECONDS * 1000ull)
		return -EINVAL;
	*out = (int64_t)s;
	return 0;
}

static int count(const char *val, uint64_t min, uint64_t max, unsigned *out)
{
	uint64_t n;

	if (cli_u64(val, min, max, &n))
		return -EINVAL;
	*out = (unsigned)n;
	return 1;
}

int host_args_opt(struct host_args *h, int opt, const char *val)
{
	uint64_t n;
	int64_t ms;

	switch (opt) {
	case 'a':
		h->traddr = val;
		return 1;
	case 's':
		if (cli_u64(val, 0, 65535, &n))
			return -EINVAL;
		h->trsvcid = val;
		return 1;
	case 'n':
		h->subnqn = val;
		return 1;
	case 'q':
		h->hostnqn = val;
		return 1;
	case 'I':
		if (nvme_uuid_parse(val, h->hostid))
			return -EINVAL;
		h->has_hostid = true;
		return 1;
	case HOST_OPT_NSID:
		if (cli_u64(val, 1, 0xFFFFFFFEu, &n))
			return -EINVAL;
		h->nsid = (uint32_t)n;
		return 1;
	case 'i':
		return count(val, 1, 1024, &h->queues);
	case HOST_OPT_SHARDS:
		return count(val, 1, 1024, &h->shards);
	/* 0 is the default, as nvme-cli leaves a 0 out of what it asks
	 * the kernel for; so is 0 here, the library's own default. */
	case 'k':
		if (secs_ms(val, false, 0, &ms))
			return -EINVAL;
		h->kato_ms = (uint32_t)ms;
		return 1;
	case 'c':
		if (secs_ms(val, false, 0, &ms))
			return -EINVAL;
		h->reconnect_delay_ms = (uint32_t)ms;
		return 1;
	case 'l':
		if (secs_ms(val, true, 0, &ms))
			return -EINVAL;
		h->ctrl_loss_tmo_ms =
			ms < 0 ? WHARF_NVMF_HOST_TMO_INFINITE : (uint32_t)ms;
		return 1;
	case 'F':
		if (secs_ms(val, true, 0, &ms))
			return -EINVAL;
		h->fast_io_fail_tmo_ms = ms < 0 ? 0 : (uint32_t)ms;
		return 1;
	case 'S':
	case 'C':
		if (!nvme_auth_key_valid(val))
			return -EINVAL;
		*(opt == 'S' ? &h->dhchap_secret : &h->dhchap_ctrl_secret) =
			val;
		return 1;
	default:
		return 0;
	}
}

struct host_parse {
	struct host_args *h;
	cli_opt_fn own;
	void *arg;
};

static int host_parse_opt(void *arg, int opt, const char *val)
{
	const struct host_parse *p = arg;
	int rc = host_args_opt(p->h, opt, val);

	return rc ? (rc < 0 ? rc : 0) : p->own(p->arg, opt, val);
}

int host_args_parse(int argc, char **argv, const char *shortopts,
		    const struct option *longopts, struct host_args *h,
		    cli_opt_fn own, void *arg, char *err, size_t errlen)
{
	struct host_parse p = {h, own, arg};
	char spec[48];
	int rc;

	if (snprintf(spec, sizeof(spec), "%s%s", HOST_ARGS_SHORTOPTS,
		     shortopts) >= (int)sizeof(spec))
		return -EINVAL;
	rc = cli_parse(argc, argv, spec, longopts, host_parse_opt, &p, err,
		       errlen);
	if (!rc && h->dhchap_ctrl_secret && !h->dhchap_secret) {
		snprintf(err, errlen,
			 "--dhchap-ctrl-secret needs --dhchap-secret");
		rc = -EINVAL;
	}
	return rc;
}

void host_args_apply(const struct host_args *h, struct wharf_nvmf_host_opts *o)
{
	o->subnqn = h->subnqn;
	o->hostnqn = h->hostnqn;
	o->hostid = h->has_hostid ? h->hostid : NULL;
	o->nr_io_queues = h->queues;
	o->kato_ms = h->kato_ms;
	o->reconnect_delay_ms = h->reconnect_delay_ms;
	o->ctrl_loss_tmo_ms = h->ctrl_loss_tmo_ms;
	o->fast_io_fail_tmo_ms = h->fast_io_fail_tmo_ms;
	o->dhchap_secret = h->dhchap_secret;
	o->dhchap_ctrl_secret = h->dhchap_ctrl_secret;
}
