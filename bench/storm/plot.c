/*
 * bench/storm/plot.c - the gnuplot script behind storm.png: the data
 * inline (a CDF of time to established per wharf variant, connections/s
 * per variant), two plots side by side.
 */
#include <stdio.h>

#include "bench/storm/storm.h"

/* A variant's name as a gnuplot string: @q is ' in commands, " in data
 * blocks (where only double quotes group words); quotes dropped. */
static void gp_quoted(FILE *f, const char *name, char q)
{
	fputc(q, f);
	for (; *name; name++)
		if (*name != '\'' && *name != '"')
			fputc(*name, f);
	fputc(q, f);
}

static void gp_title(FILE *f, const char *name)
{
	gp_quoted(f, name, '\'');
}

void storm_gnuplot(FILE *f, const struct storm_result *rs, size_t n,
		   const char *png)
{
	bool any_cdf = false, first = true;

	fprintf(f, "# storm: time to established and connections/s\n"
		   "set terminal pngcairo size 1280,520 noenhanced\n");
	fprintf(f, "set output ");
	gp_title(f, png);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		if (!rs[i].ran || !rs[i].ncdf)
			continue;
		fprintf(f, "$cdf%zu << EOD\n", i);
		for (size_t k = 0; k < rs[i].ncdf; k++)
			fprintf(f, "%.3f %.4f\n", rs[i].cdf_us[k] / 1e3,
				rs[i].cdf_frac[k]);
		fprintf(f, "EOD\n");
		any_cdf = true;
	}
	fprintf(f, "$rate << EOD\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%zu ", i);
		gp_quoted(f, rs[i].name, '"');
		fprintf(f, " %.1f\n", rs[i].ran ? rs[i].conn_per_s : 0.0);
	}
	fprintf(f, "EOD\n"
		   "set multiplot layout 1,2\n"
		   "set grid\n"
		   "set key bottom right\n"
		   "set title 'time to established, CDF (cmtime prints no "
		   "per-connection times)'\n"
		   "set xlabel 'ms'\n"
		   "set ylabel 'fraction of established connections'\n"
		   "set yrange [0:1]\n");
	if (any_cdf) {
		fprintf(f, "plot ");
		for (size_t i = 0; i < n; i++) {
			if (!rs[i].ran || !rs[i].ncdf)
				continue;
			fprintf(f, "%s$cdf%zu using 1:2 with lines lw 2 title ",
				first ? "" : ", ", i);
			gp_title(f, rs[i].name);
			first = false;
		}
		fputc('\n', f);
	} else {
		fprintf(f, "set label 1 'no data' at graph 0.5,0.5 center\n"
			   "plot 2 notitle\nunset label 1\n");
	}
	fprintf(f,
		"set title 'connections/s, create to established'\n"
		"set xlabel ''\n"
		"set ylabel 'connections/s'\n"
		"set yrange [0:*]\n"
		"set style fill solid 0.6\n"
		"set xtics scale 0 font ',9'\n"
		"set xrange [-0.5:%zu.5]\n"
		"set boxwidth 0.6\n"
		"set key off\n"
		"plot $rate using 1:3:xtic(2) with boxes, "
		"$rate using 1:3:(sprintf('%%.0f', $3)) with labels "
		"offset 0,1\n"
		"unset multiplot\n",
		n ? n - 1 : 0);
}
