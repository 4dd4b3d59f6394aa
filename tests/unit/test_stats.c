/*
 * test_stats.c - the counter table and its views (stats.[ch]).
 *
 * A snapshot is summed from two fake queue threads and a few control
 * counters, then rendered every way: the log dump, the STATUS= summary,
 * the `knockgw status` text (read back line by line: the text of what was
 * read equals the text it came from) and JSON.  Then numbered rows of
 * status lines the reader must refuse or skip.  No clock, no I/O but
 * memory streams.
 */
#include <errno.h>
#include <stdlib.h>

#include "daemon/stats.h"
#include "unit.h"

static struct stats *fixture(void)
{
	static struct nfqueue_stats q[2];
	static struct server_counters srv[2];
	static uint64_t cli[2][CC_MAX];
	struct stats *s = calloc(1, sizeof(*s));

	for (int i = 0; i < 2; i++) {
		q[i] = (struct nfqueue_stats){ 10 + i, 20 + i, 1, 2, 3, 4, 5 };
		srv[i].c[SC_syn_accepted] = 3;
		srv[i].c[SC_syn_refused] = 7 + (uint64_t)i;
		srv[i].c[SC_replay_refused] = 1;
		srv[i].c[SC_integ_fail] = 2;
		srv[i].c[SC_integ_conflict] = 1;
		srv[i].pkt_drop[PKT_SHORT] = 4;
		srv[i].port_accepted[0] = 3;
		srv[i].port_refused[1] = 5;
		srv[i].key_accepted[1] = 3;
		srv[i].key_accepted[2] = 100;	/* past nkeys: not added */
		cli[i][CC_knocked] = 6;
	}
	snprintf(s->conf_path, sizeof(s->conf_path), "/etc/knock gw: x/knockgw.conf");
	snprintf(s->table, sizeof(s->table), "knockgw");
	snprintf(s->queue_kind, sizeof(s->queue_kind), "xtables compat");
	s->nkeys = 2;
	s->nprotect = 2;
	s->nknock = 1;
	s->queue_first = 4;
	s->queue_last = 5;
	s->translate_user = true;
	s->port[0] = (struct stats_port){ 22, "native", true, 0, 0 };
	s->port[1] = (struct stats_port){ 2222, "knock", false, 0, 0 };
	snprintf(s->key[0].name, sizeof(s->key[0].name), "alice");
	snprintf(s->key[1].name, sizeof(s->key[1].name), "bob.2026-rot");
	for (int i = 0; i < 2; i++) {
		struct stats_queue_src src = { &q[i], &srv[i], cli[i] };

		stats_add_queue(s, &src);
	}
	stats_add_ctl("ctl_status", 2, s);
	stats_add_ctl("ctl_err_not_root", 1, s);
	s->uptime_s = 42;
	s->reloads = 1;
	s->reloads_refused = 2;
	s->table_restores = 3;
	s->generation = 4;
	s->replay_entries = 9;
	s->intents = 1;
	return s;
}

struct lines {
	char buf[16384];
	size_t len, n;
};

static void collect(const char *line, void *arg)
{
	struct lines *l = arg;

	l->len += (size_t)snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%s\n", line);
	l->n++;
}

static char *render(const struct stats *s, void (*fn)(const struct stats *, FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	fn(s, f);
	fclose(f);
	return text;
}

/* Each row: a substring the view must contain. */
static const char *const log_rows[] = {
	/* 1 */ "counters: queued=21 verdicts=41 enobufs=2 nl_errors=4 bad_msgs=6 "
		"send_errors=8 large_verdicts=10\n",
	/* 2 */ "\ncounter syn_accepted=6\n",
	/* 3 */ "\ncounter syn_refused=15\n",
	/* 4 */ "\ncounter drop_short=8\n",
	/* 5 */ "\ncounter client_knocked=12\n",
	/* 6 */ "\ncounter control_ctl_status=2\n",
	/* 7 */ "\ncounter control_ctl_err_not_root=1\n",
	/* 8 */ "\ncounter integ_reload=0\n",
};

static const char *const status_rows[] = {
	/* 1 */ "knockgw running for 42 s, 1 reload(s), 2 refused, 3 table restore(s); knocks "
		"accepted 6, refused 15, replays 2, integrity failures 6, translated flows 12\n",
	/* 2 */ "config /etc/knock gw: x/knockgw.conf: 2 key(s), 2 protected port(s), 1 knock "
		"destination(s), table inet knockgw (xtables compat queue), queues 4..5, "
		"translate user\n",
	/* 3 */ "\ngeneration 4\n",
	/* 4 */ "\nport 22 mode native integrity: accepted 6 refused 0\n",
	/* 5 */ "\nport 2222 mode knock: accepted 0 refused 10\n",
	/* 6 */ "\nreplay table 9 entries; intents 1\n",
	/* 7 */ "\nqueue received 21 verdicts 41 enobufs 2 errors 18\n",
	/* 8 */ "\nserver syn_refused 15\n",
	/* 9 */ "\ndrop short 8\n",
	/* 10 */ "\nclient knocked 12\n",
	/* 11 */ "\ncontrol ctl_err_not_root 1\n",
	/* 12 */ "\nport 2222 mode knock: accepted 0 refused 10\nreplay table",
	/* 13 */ "\nnfqueue received 21\nnfqueue verdicts 41\nnfqueue enobufs 2\nnfqueue nl_errors 4\n"
		"nfqueue bad_msgs 6\nnfqueue send_errors 8\nnfqueue large_verdicts 10\n",
};

static const char *const json_rows[] = {
	/* 1 */ "{\"uptime_s\":42,\"reloads\":1,\"reloads_refused\":2,\"table_restores\":3,"
		"\"generation\":4,",
	/* 2 */ "\"config\":{\"path\":\"/etc/knock gw: x/knockgw.conf\",\"keys\":2,"
		"\"protected_ports\":2,\"knock_destinations\":1,\"table\":\"knockgw\","
		"\"queue_kind\":\"xtables compat\",\"queue_first\":4,\"queue_last\":5,"
		"\"translate\":\"user\"},",
	/* 3 */ "\"ports\":[{\"port\":22,\"mode\":\"native\",\"integrity\":true,\"accepted\":6,"
		"\"refused\":0},{\"port\":2222,\"mode\":\"knock\",\"integrity\":false,"
		"\"accepted\":0,\"refused\":10}],",
	/* 4 */ "\"replay_entries\":9,\"intents\":1,",
	/* 5 */ "\"queue\":{\"received\":21,\"verdicts\":41,\"enobufs\":2,\"nl_errors\":4,"
		"\"bad_msgs\":6,\"send_errors\":8,\"large_verdicts\":10,\"errors\":18},",
	/* 6 */ "\"server\":{\"syn_accepted\":6,\"syn_refused\":15,",
	/* 7 */ "\"drop\":{\"short\":8,",
	/* 8 */ "\"client\":{\"knocked\":12,",
	/* 9 */ "\"control\":{\"ctl_status\":2,\"ctl_err_not_root\":1}}\n",
};

struct parse_row {
	const char *line;
	int want;
};

static const struct parse_row parse_rows[] = {
	/* 1 */ { "server syn_accepted 5\n", 0 },
	/* 2 */ { "server no_such_counter 5\n", -ENOENT },
	/* 3 */ { "server syn_accepted five\n", -EINVAL },
	/* 4 */ { "server syn_accepted\n", -EINVAL },
	/* 5 */ { "something new 1\n", -ENOENT },
	/* 6 */ { "knockgw running for x s\n", -EINVAL },
	/* 7 */ { "config /x: many key(s)\n", -EINVAL },
	/* 8 */ { "port 70000 mode native: accepted 1 refused 2\n", -EINVAL },
	/* 9 */ { "port 22 mode native sideways: accepted 1 refused 2\n", -EINVAL },
	/* 10 */ { "queue received 1 verdicts 2\n", -EINVAL },
	/* 11 */ { "drop ok 1\n", -ENOENT },	/* index 0 is not a drop */
	/* 12 */ { "control ctl_anything 3\n", 0 },
	/* 13 */ { "server syn_accepted 18446744073709551616\n", -EINVAL },
	/* 14 */ { "nfqueue large_verdicts 7\n", 0 },
	/* 15 */ { "nfqueue queued 7\n", -ENOENT },	/* the log's name, not status's */
	/* 16 */ { "key alice accepted 3\n", 0 },
	/* 17 */ { "key alice accepted x\n", -EINVAL },
	/* 18 */ { "key alice refused 3\n", -EINVAL },
	/* 19 */ { "key  accepted 3\n", -EINVAL },
	/* 20 */ { "key a-very-long-key-name-of-33-chars3 accepted 1\n", -EINVAL },
};

static bool has(const char *text, const char *want)
{
	return text && strstr(text, want) != NULL;
}

int main(void)
{
	struct stats *s = fixture();
	struct lines log = { .len = 0 };
	char summary[400];

	stats_log(s, collect, &log);
	for (size_t i = 0; i < sizeof(log_rows) / sizeof(log_rows[0]); i++)
		CHECK(has(log.buf, log_rows[i]), "log row %zu", i + 1);
	CHECK_EQ_U(log.n, 1 + SC_MAX + (PKT_DROP_MAX - 1) + CC_MAX + 2, "log: one line a counter");

	stats_summary(s, summary, sizeof(summary));
	CHECK(strcmp(summary, "knocks accepted 6, refused 15, replays 2, integrity failures 6, "
			      "translated flows 12") == 0, "summary: %s", summary);

	char *text = render(s, stats_status);
	for (size_t i = 0; i < sizeof(status_rows) / sizeof(status_rows[0]); i++)
		CHECK(has(text, status_rows[i]), "status row %zu", i + 1);

	/* Read back: the same text again, and the same JSON. */
	struct stats *back = calloc(1, sizeof(*back));
	char *save = NULL, *copy = strdup(text);
	unsigned bad = 0;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (stats_parse_line(back, line) != 0) {
			printf("# cannot read back: %s\n", line);
			bad++;
		}
	CHECK_EQ_U(bad, 0, "every status line reads back");
	char *text2 = render(back, stats_status);
	CHECK(text2 && strcmp(text, text2) == 0, "status text round trip:\n%s---\n%s", text,
	      text2 ? text2 : "");

	/* The per-key lines: METRICS only, never in `knockgw status`; read back. */
	CHECK(!has(text, "\nkey "), "status has no key lines");
	char *keys = render(s, stats_keys);
	CHECK(keys && strcmp(keys, "key alice accepted 0\nkey bob.2026-rot accepted 6\n") == 0,
	      "key lines: %s", keys);
	for (char *line = strtok_r(keys, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		CHECK_EQ_U(stats_parse_line(back, line), 0, "key line reads back: %s", line);
	CHECK(strcmp(back->key[1].name, "bob.2026-rot") == 0 && back->key[1].accepted == 6,
	      "key 2 read back: %s %" PRIu64, back->key[1].name, back->key[1].accepted);
	free(keys);

	char *json = render(back, stats_json);
	for (size_t i = 0; i < sizeof(json_rows) / sizeof(json_rows[0]); i++)
		CHECK(has(json, json_rows[i]), "json row %zu: %s", i + 1, json);

	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		struct stats *p = calloc(1, sizeof(*p));

		CHECK_EQ_U((unsigned)stats_parse_line(p, parse_rows[i].line),
			   (unsigned)parse_rows[i].want, "parse row %zu: %s", i + 1,
			   parse_rows[i].line);
		free(p);
	}

	/* A control socket name with a quote stays valid JSON. */
	struct stats *q = calloc(1, sizeof(*q));
	stats_add_ctl("a\"b\\c\x01", 1, q);
	char *qj = render(q, stats_json);
	CHECK(has(qj, "\"control\":{\"a\\\"b\\\\c\\u0001\":1}"), "json escapes: %s", qj);

	free(qj);
	free(q);
	free(json);
	free(text2);
	free(copy);
	free(back);
	free(text);
	free(s);
	return unit_done("stats");
}
