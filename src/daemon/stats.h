/*
 * stats.h - the daemon's counters and status figures: one table, every view.
 *
 * stats_groups[] is the one list of counters: each group names where its
 * counters come from (a queue thread's nfqueue, server or client counters,
 * or the main thread's control socket), how they are summed (over the
 * queue threads, or taken as they are), and how each view spells them.
 * struct stats is a snapshot filled from that table; every view renders
 * from it:
 *   - stats_log():     "counters: queued=N ..." and one "counter NAME=N" line
 *                      per counter (the log dump at SIGUSR1 and at stop);
 *   - stats_summary(): the one line systemd shows (STATUS=);
 *   - stats_status():  the text of `knockgw status` (the daemon's STATUS reply);
 *   - stats_keys():    the per-key lines the METRICS reply adds to it
 *                      (`knockgw metrics`, rendered by metrics_text.h);
 *   - stats_json():    `knockgw status --json`: one JSON object (field names in
 *                      knockgw(8)), rendered by the client from the status text,
 *                      which stats_parse_line() reads back line by line.
 * A counter added to server.h, client.h, pkt.h or ctl appears in all of them.
 *
 * Pure: no clock, no logging; output goes to the FILE * or callback given.
 */
#ifndef KNOCKGW_STATS_H
#define KNOCKGW_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/pkt.h"
#include "config/conf.h"
#include "datapath/client/client.h"
#include "datapath/server/server.h"
#include "kernel/nfq.h"

/* The nfqueue figures, in the order of the log's "counters:" line. */
enum stats_queue {
	STATS_Q_received,
	STATS_Q_verdicts,
	STATS_Q_enobufs,
	STATS_Q_nl_errors,
	STATS_Q_bad_msgs,
	STATS_Q_send_errors,
	STATS_Q_large_verdicts,
	STATS_Q_MAX
};

enum stats_source {
	STATS_QUEUE,		/* struct nfqueue_stats of each queue */
	STATS_SERVER,		/* struct server_counters.c of each queue thread */
	STATS_DROP,		/* struct server_counters.pkt_drop (parse failures) */
	STATS_CLIENT,		/* struct client.cnt of each queue thread */
	STATS_CONTROL,		/* the control socket's, in the main thread */
	STATS_SOURCES
};

enum stats_sum {
	STATS_SUM_QUEUES,	/* added up over the queue threads */
	STATS_SUM_NONE,		/* one instance: taken as it is */
};

struct stats_group {
	enum stats_source src;
	enum stats_sum sum;
	const char *word;	/* `knockgw status` line "WORD NAME VALUE"; JSON object */
	const char *log_prefix;	/* log line "counter PREFIXNAME=VALUE" */
	unsigned first, count;	/* indices first..count-1 of the source */
	const char *(*name)(unsigned i);	/* NULL: names come with the values */
};

extern const struct stats_group stats_groups[STATS_SOURCES];

enum {
	STATS_CTL_MAX = 96,		/* control counters kept (ctl has ~40) */
	STATS_CTL_NAME = 48,
	STATS_MODE_NAME = 16,
	STATS_KIND_NAME = 24,
};

struct stats_port {
	uint16_t port;
	char mode[STATS_MODE_NAME];
	bool integrity;
	uint64_t accepted, refused;
};

/* Knocks accepted with one key of the configuration (by its name). */
struct stats_key {
	char name[CONF_NAME_MAX];
	uint64_t accepted;
};

struct stats_ctl {
	char name[STATS_CTL_NAME];
	uint64_t value;
};

struct stats {
	/* Counters, by source (stats_groups). */
	uint64_t queue[STATS_Q_MAX];
	uint64_t server[SC_MAX];
	uint64_t drop[PKT_DROP_MAX];
	uint64_t client[CC_MAX];
	size_t nctl;
	struct stats_ctl ctl[STATS_CTL_MAX];

	/* The daemon's figures. */
	uint64_t uptime_s;
	unsigned reloads, reloads_refused, table_restores;
	unsigned generation;		/* configuration generation, +1 per switch */
	size_t replay_entries, intents;

	/* The active configuration. */
	char conf_path[PATH_MAX];
	size_t nkeys, nprotect, nknock;
	char table[CONF_NAME_MAX];
	char queue_kind[STATS_KIND_NAME];	/* "native" or "xtables compat" */
	unsigned queue_first, queue_last;
	bool translate_user;
	struct stats_port port[CONF_MAX_PROTECT];	/* nprotect of them */
	struct stats_key key[CONF_MAX_KEYS];		/* nkeys of them, in config order */
};

/* Where one queue thread's counters are. */
struct stats_queue_src {
	const struct nfqueue_stats *q;
	const struct server_counters *srv;
	const uint64_t *cli;			/* CC_MAX */
};

/*
 * Adds one queue thread's counters (every STATS_SUM_QUEUES group, the
 * per-port figures of the first s->nprotect ports and the per-key ones of
 * the first s->nkeys keys) from src, a copy the caller owns (another
 * thread's counters come through counterpub.h).
 */
void stats_add_queue(struct stats *s, const struct stats_queue_src *src);

/* Appends a control counter (ctl_counters_foreach's callback shape). */
void stats_add_ctl(const char *name, uint64_t value, void *stats);

/* The configuration part, from c (queue_kind and the queue range apart). */
void stats_set_conf(struct stats *s, const struct conf *c);

/* Counter value of group src, index i (0 for an unknown one). */
uint64_t stats_value(const struct stats *s, enum stats_source src, unsigned i);

/* The log dump: calls emit once per line, without the newline. */
void stats_log(const struct stats *s, void (*emit)(const char *line, void *arg), void *arg);

/* systemd's STATUS= text (without "STATUS="). */
void stats_summary(const struct stats *s, char *buf, size_t len);

/* `knockgw status`: the text lines of the STATUS reply. */
void stats_status(const struct stats *s, FILE *out);

/*
 * "key NAME accepted N" per key, in config order: what the METRICS reply
 * (`knockgw metrics`) adds to stats_status()'s lines.
 */
void stats_keys(const struct stats *s, FILE *out);

/*
 * Reads one line of stats_status() output back into s (which starts out
 * zeroed); a trailing newline is allowed.  0, -ENOENT for a line it does
 * not know (a newer daemon's: skip it), -EINVAL for a known line it cannot
 * read, -ENOSPC when the control counters do not fit.
 */
int stats_parse_line(struct stats *s, const char *line);

/* `knockgw status --json`: one object and a newline. */
void stats_json(const struct stats *s, FILE *out);

#endif
