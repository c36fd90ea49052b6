/*
 * bench/storm/cm_mads.c - the kernel IB CM's MAD counters of a node
 * (sysfs: <root>/<dev>/ports/<port>/cm_{tx_msgs,tx_retries,rx_msgs,
 * rx_duplicates}/<type>), summed over every device and port, so that a
 * storm can say how many CM messages its server's node sent, resent,
 * received and received again.  Resends and duplicates are what an
 * overrun peer costs: each is a message someone's CM queue handles twice.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench/storm/storm.h"

static const char *const dirs[STORM_MAD_DIRS] = {
	"cm_tx_msgs", "cm_tx_retries", "cm_rx_msgs", "cm_rx_duplicates"};

static const char *const types[STORM_MAD_TYPES] = {"req", "rep",  "rtu",
						   "rej", "dreq", "drep"};

const char *storm_mad_type_name(unsigned t)
{
	return t < STORM_MAD_TYPES ? types[t] : "?";
}

/* Adds one port's counters; false when it has none (no ib_cm). */
static bool read_port(const char *port_dir, struct storm_cm_mads *m)
{
	bool any = false;

	for (unsigned d = 0; d < STORM_MAD_DIRS; d++)
		for (unsigned t = 0; t < STORM_MAD_TYPES; t++) {
			char path[1400];
			unsigned long long v;
			FILE *f;
			int ok;

			snprintf(path, sizeof(path), "%s/%s/%s", port_dir,
				 dirs[d], types[t]);
			f = fopen(path, "r");
			if (!f)
				continue;
			ok = fscanf(f, "%llu", &v) == 1;
			fclose(f);
			if (ok) {
				m->n[d][t] += v;
				any = true;
			}
		}
	return any;
}

int storm_cm_mads_read(const char *root, struct storm_cm_mads *m)
{
	DIR *devs;
	struct dirent *de;

	memset(m, 0, sizeof(*m));
	devs = opendir(root);
	if (!devs)
		return -errno;
	while ((de = readdir(devs))) {
		char ports_dir[600];
		DIR *ports;
		struct dirent *pe;

		if (de->d_name[0] == '.')
			continue;
		snprintf(ports_dir, sizeof(ports_dir), "%s/%s/ports", root,
			 de->d_name);
		ports = opendir(ports_dir);
		if (!ports)
			continue;
		while ((pe = readdir(ports))) {
			char port_dir[1000];

			if (pe->d_name[0] == '.')
				continue;
			snprintf(port_dir, sizeof(port_dir), "%s/%s", ports_dir,
				 pe->d_name);
			if (read_port(port_dir, m))
				m->ok = true;
		}
		closedir(ports);
	}
	closedir(devs);
	return m->ok ? 0 : -ENOENT;
}

void storm_cm_mads_delta(struct storm_cm_mads *out,
			 const struct storm_cm_mads *before,
			 const struct storm_cm_mads *after)
{
	memset(out, 0, sizeof(*out));
	out->ok = before->ok && after->ok;
	for (unsigned d = 0; d < STORM_MAD_DIRS; d++)
		for (unsigned t = 0; t < STORM_MAD_TYPES; t++)
			out->n[d][t] =
				after->n[d][t] >= before->n[d][t]
					? after->n[d][t] - before->n[d][t]
					: 0;
}
