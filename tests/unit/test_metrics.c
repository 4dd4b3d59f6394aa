/*
 * test_metrics.c - the Prometheus text (cmd/metrics_text.[ch]).
 *
 * Rows of label values and HELP texts with what the format makes of them;
 * rows of names that are and are not metric names; then a snapshot read
 * back from `knockgw status` lines (as `knockgw metrics` gets it) rendered
 * whole: rows of samples it must contain, and the shape every line must
 * have (each sample after its family's HELP and TYPE, counters ending in
 * _total, every family once).  No I/O but memory streams.
 */
#include <stdlib.h>

#include "cmd/metrics_text.h"
#include "unit.h"

struct esc_row {
	const char *in, *label, *help;
};

static const struct esc_row esc_rows[] = {
	/* 1 */ { "alice", "alice", "alice" },
	/* 2 */ { "a\"b", "a\\\"b", "a\"b" },
	/* 3 */ { "a\\b", "a\\\\b", "a\\\\b" },
	/* 4 */ { "a\nb", "a\\nb", "a\\nb" },
	/* 5 */ { "\\\"\n", "\\\\\\\"\\n", "\\\\\"\\n" },
	/* 6 */ { "", "", "" },
	/* 7 */ { "tab\there", "tab\there", "tab\there" },	/* only three are escaped */
	/* 8 */ { "\\n", "\\\\n", "\\\\n" },			/* a backslash, then n */
};

struct name_row {
	const char *name;
	bool ok;
};

static const struct name_row name_rows[] = {
	/* 1 */ { "syn_accepted", true },
	/* 2 */ { "a:b_C9", true },
	/* 3 */ { "_x", true },
	/* 4 */ { "", false },
	/* 5 */ { "9lives", false },
	/* 6 */ { "has-dash", false },
	/* 7 */ { "has space", false },
	/* 8 */ { "dot.ted", false },
};

static char *capture(void (*fn)(const char *, FILE *), const char *in)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	fn(in, f);
	fclose(f);
	return text;
}

/* The daemon's reply, as a daemon with these counters sends it. */
static const char *const status_lines[] = {
	"knockgw running for 42 s, 1 reload(s), 2 refused, 3 table restore(s); knocks accepted 6, "
	"refused 15, replays 2, integrity failures 6, translated flows 12",
	"config /etc/knockgw/knockgw.conf: 3 key(s), 2 protected port(s), 1 knock destination(s), "
	"table inet knockgw (native queue), queues 0..1, translate kernel",
	"generation 4",
	"port 22 mode native integrity: accepted 6 refused 0",
	"port 2222 mode knock: accepted 0 refused 15",
	"key alice accepted 4",
	"key bob.old accepted 2",
	"key c_3 accepted 0",
	"replay table 9 entries; intents 1",
	"queue received 21 verdicts 41 enobufs 2 errors 18",
	"nfqueue received 21",
	"server syn_accepted 6",
	"server syn_refused 15",
	"server replay_refused 2",
	"drop short 8",
	"client knocked 12",
	"control ctl_status 2",
	"control ctl_err_not_root 1",
	"control weird\"name\\x 5",	/* a newer daemon's name: escaped, not trusted */
};

/* Each row: a line the text must contain, whole. */
static const char *const sample_rows[] = {
	/* 1 */ "knockgw_uptime_seconds 42",
	/* 2 */ "knockgw_reloads_total{result=\"ok\"} 1",
	/* 3 */ "knockgw_reloads_total{result=\"refused\"} 2",
	/* 4 */ "knockgw_table_restores_total 3",
	/* 5 */ "knockgw_config_generation 4",
	/* 6 */ "knockgw_port_knocks_total{port=\"22\",mode=\"native\",integrity=\"true\","
		"result=\"accepted\"} 6",
	/* 7 */ "knockgw_port_knocks_total{port=\"2222\",mode=\"knock\",integrity=\"false\","
		"result=\"refused\"} 15",
	/* 8 */ "knockgw_key_knocks_total{key=\"alice\",result=\"accepted\"} 4",
	/* 9 */ "knockgw_key_knocks_total{key=\"bob.old\",result=\"accepted\"} 2",
	/* 10 */ "knockgw_key_knocks_total{key=\"c_3\",result=\"accepted\"} 0",
	/* 11 */ "knockgw_server_syn_accepted_total 6",
	/* 12 */ "knockgw_server_syn_refused_total 15",
	/* 13 */ "knockgw_server_replay_refused_total 2",
	/* 14 */ "knockgw_server_integ_reload_total 0",
	/* 15 */ "knockgw_packets_dropped_total{reason=\"short\"} 8",
	/* 16 */ "knockgw_client_knocked_total 12",
	/* 17 */ "knockgw_nfqueue_received_total 21",
	/* 18 */ "knockgw_control_events_total{counter=\"ctl_status\"} 2",
	/* 19 */ "knockgw_control_events_total{counter=\"weird\\\"name\\\\x\"} 5",
	/* 20 */ "knockgw_up 1",
	/* 21 */ "# HELP knockgw_server_syn_accepted_total valid knocks let through",
	/* 22 */ "# TYPE knockgw_server_syn_accepted_total counter",
	/* 23 */ "# TYPE knockgw_uptime_seconds gauge",
	/* 24 */ "knockgw_keys 3",
	/* 25 */ "knockgw_replay_entries 9",
	/* 26 */ "# HELP knockgw_server_closed_total probes of closed ports answered "
		 "(closed_ports \"daemon\")",
};

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, line, n) == 0 && p[n] == '\n')
			return true;
	return false;
}

/*
 * Every line is a HELP, then its TYPE, then samples of that family only;
 * no family twice; counters end in _total; every sample has a value.
 * Returns the number of problems (printed).
 */
static unsigned shape(const char *text)
{
	char *copy = strdup(text), *save = NULL;
	char family[128] = "", type[16] = "", seen[8192] = " ";
	unsigned bad = 0, state = 0;	/* 0: HELP due, 1: TYPE due, 2: samples */

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char name[128], key[132];

		if (strncmp(l, "# HELP ", 7) == 0) {
			if (sscanf(l + 7, "%127s", family) != 1)
				bad++;
			snprintf(key, sizeof(key), " %s ", family);
			if (strstr(seen, key)) {
				printf("# family twice: %s\n", family);
				bad++;
			}
			strncat(seen, key + 1, sizeof(seen) - strlen(seen) - 1);
			state = 1;
		} else if (strncmp(l, "# TYPE ", 7) == 0) {
			if (state != 1 || sscanf(l + 7, "%127s %15s", name, type) != 2 ||
			    strcmp(name, family) != 0) {
				printf("# TYPE out of place: %s\n", l);
				bad++;
			}
			size_t fl = strlen(family);
			if (strcmp(type, "counter") == 0 &&
			    (fl < 6 || strcmp(family + fl - 6, "_total") != 0)) {
				printf("# counter without _total: %s\n", family);
				bad++;
			}
			state = 2;
		} else {
			size_t n = strcspn(l, "{ ");

			if (state != 2 || n != strlen(family) || strncmp(l, family, n) != 0 ||
			    !strrchr(l, ' ') || strrchr(l, ' ')[1] < '0' ||
			    strrchr(l, ' ')[1] > '9') {
				printf("# sample out of place: %s\n", l);
				bad++;
			}
		}
	}
	free(copy);
	return bad;
}

int main(void)
{
	for (size_t i = 0; i < sizeof(esc_rows) / sizeof(esc_rows[0]); i++) {
		char *label = capture(metrics_label_value, esc_rows[i].in);
		char *help = capture(metrics_help_text, esc_rows[i].in);

		CHECK(label && strcmp(label, esc_rows[i].label) == 0, "label row %zu: %s", i + 1,
		      label);
		CHECK(help && strcmp(help, esc_rows[i].help) == 0, "help row %zu: %s", i + 1, help);
		free(label);
		free(help);
	}
	for (size_t i = 0; i < sizeof(name_rows) / sizeof(name_rows[0]); i++)
		CHECK(metrics_name_ok(name_rows[i].name) == name_rows[i].ok, "name row %zu",
		      i + 1);

	struct stats *s = calloc(1, sizeof(*s));
	unsigned unread = 0;

	for (size_t i = 0; i < sizeof(status_lines) / sizeof(status_lines[0]); i++)
		if (stats_parse_line(s, status_lines[i]) != 0) {
			printf("# cannot read: %s\n", status_lines[i]);
			unread++;
		}
	CHECK_EQ_U(unread, 0, "the status lines read");

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	metrics_write(s, f);
	fclose(f);
	for (size_t i = 0; i < sizeof(sample_rows) / sizeof(sample_rows[0]); i++)
		CHECK(has_line(text, sample_rows[i]), "sample row %zu: %s", i + 1, sample_rows[i]);
	CHECK_EQ_U(shape(text), 0, "every line in its place");
	CHECK(!strstr(text, "knockgw_up 0"), "up, not down");

	/* Every server, client and queue counter has its family. */
	for (unsigned i = 0; i < SC_MAX; i++) {
		char want[96];

		snprintf(want, sizeof(want), "# TYPE knockgw_server_%s_total counter",
			 server_counter_name((enum server_counter)i));
		CHECK(has_line(text, want), "%s", want);
	}
	for (unsigned i = 0; i < CC_MAX; i++) {
		char want[96];

		snprintf(want, sizeof(want), "# TYPE knockgw_client_%s_total counter",
			 client_counter_name((enum client_counter)i));
		CHECK(has_line(text, want), "%s", want);
	}
	free(text);

	/* No daemon: the file says so and nothing else. */
	text = NULL;
	f = open_memstream(&text, &len);
	metrics_write_down(f);
	fclose(f);
	CHECK(text && strcmp(text, "# HELP knockgw_up 1 when the daemon answered on its control "
				   "socket\n# TYPE knockgw_up gauge\nknockgw_up 0\n") == 0,
	      "down: %s", text);
	CHECK_EQ_U(shape(text), 0, "down: every line in its place");
	free(text);
	free(s);
	return unit_done("metrics");
}
