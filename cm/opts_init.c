/* The _init calls of <wharf/cm.h>'s option and parameter structs. */
#include <string.h>

#include "cm/cm.h"

void wharf_cm_opts_init(struct wharf_cm_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
}

void wharf_conn_param_init(struct wharf_conn_param *param)
{
	if (!param)
		return;
	memset(param, 0, sizeof(*param));
	param->size = sizeof(*param);
}
