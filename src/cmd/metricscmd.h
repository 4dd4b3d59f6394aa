/*
 * metricscmd.h - `knockgw metrics [-c FILE] [-o FILE]`: the running
 * daemon's counters in the Prometheus text format (metrics.h), on stdout
 * or written atomically to a file for node_exporter's textfile collector.
 *
 * It asks the daemon over the control socket with METRICS (ctlproto.h:
 * STATUS's lines and the per-key ones; STATUS from a daemon that predates
 * it), so it needs root as `knockgw status` does; it never opens a network
 * socket.  With -o, the text goes to a temporary file in the same
 * directory (".NAME.XXXXXX", which the textfile collector ignores: it reads
 * *.prom), fsync'ed, mode 0644, then renamed over FILE: a reader sees the
 * old file or the new one, never part of one.  When no daemon runs, -o
 * still replaces FILE, with knockgw_up 0, so no stale counters stay behind.
 *
 * Exit codes: 0 written; 3 no daemon listens on the control socket (as
 * `knockgw status`); 1 any other error; 2 usage.
 */
#ifndef KNOCKGW_METRICSCMD_H
#define KNOCKGW_METRICSCMD_H

/* argv[0] is "metrics"; default_conf is used without -c. */
int metrics_main(int argc, char **argv, const char *default_conf);

#endif
