/*
 * metrics_text.c - struct stats as Prometheus text (see metrics_text.h for the
 * contract and the families).
 *
 * The exposition format lets a sample line of a family follow only that
 * family's HELP and TYPE, so each family is written whole: header, then
 * every sample.  Values are unsigned 64-bit integers printed as such (the
 * format takes any float text; an integer stays exact for promtool and
 * for the parser alike).
 */
#include <inttypes.h>
#include <string.h>

#include "cmd/metrics_text.h"

#define PREFIX "knockgw_"

/* Descriptions, in the order of the counters' enums (server.h, client.h). */
static const char *const server_help[SC_MAX] = {
#define X(name, desc) desc,
	SERVER_COUNTERS(X)
#undef X
};

static const char *const client_help[CC_MAX] = {
#define X(name, desc) desc,
	CLIENT_COUNTERS(X)
#undef X
};

static const char *const queue_help[STATS_Q_MAX] = {
	"packets the kernel queued to the daemon",
	"verdicts sent back to the kernel",
	"times the queue socket overflowed (packets the kernel dropped)",
	"netlink errors on the queue socket",
	"queue messages that could not be read",
	"verdicts that could not be sent",
	"packet verdicts sent without a copy of the packet",
};

void metrics_label_value(const char *value, FILE *out)
{
	for (const char *p = value; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '"')
			fputs("\\\"", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fputc(*p, out);
	}
}

void metrics_help_text(const char *text, FILE *out)
{
	for (const char *p = text; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fputc(*p, out);
	}
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

bool metrics_name_ok(const char *name)
{
	if (!name[0])
		return false;
	for (const char *p = name; *p; p++)
		if (!name_char(*p, p == name))
			return false;
	return true;
}

/* "# HELP knockgw_<a><b> help\n# TYPE ... type\n" */
static void header(FILE *out, const char *a, const char *b, const char *help, const char *type)
{
	fprintf(out, "# HELP " PREFIX "%s%s ", a, b);
	metrics_help_text(help, out);
	fprintf(out, "\n# TYPE " PREFIX "%s%s %s\n", a, b, type);
}

/* One unlabelled sample with its header. */
static void single(FILE *out, const char *name, const char *help, const char *type, uint64_t v)
{
	header(out, name, "", help, type);
	fprintf(out, PREFIX "%s %" PRIu64 "\n", name, v);
}

/* knockgw_<word>_<name>_total for each counter of a group with fixed names. */
static void group_counters(const struct stats *s, enum stats_source src, const char *word,
			   const char *const *help, unsigned nhelp, FILE *out)
{
	const struct stats_group *g = &stats_groups[src];
	char base[96];

	for (unsigned i = g->first; i < g->count; i++) {
		const char *name = g->name(i);

		snprintf(base, sizeof(base), "%s_%s", word, name);
		if (!metrics_name_ok(name) || strlen(base) + 1 >= sizeof(base))
			continue;
		header(out, base, "_total", i < nhelp ? help[i] : name, "counter");
		fprintf(out, PREFIX "%s_total %" PRIu64 "\n", base, stats_value(s, src, i));
	}
}

static void ports(const struct stats *s, FILE *out)
{
	static const char *const result[2] = { "accepted", "refused" };

	header(out, "port_knocks_total", "",
	       "SYNs to a protected port, by whether they carried a valid knock", "counter");
	for (size_t i = 0; i < s->nprotect && i < CONF_MAX_PROTECT; i++) {
		const struct stats_port *p = &s->port[i];

		for (int r = 0; r < 2; r++) {
			fprintf(out, PREFIX "port_knocks_total{port=\"%u\",mode=\"", p->port);
			metrics_label_value(p->mode, out);
			fprintf(out, "\",integrity=\"%s\",result=\"%s\"} %" PRIu64 "\n",
				p->integrity ? "true" : "false", result[r],
				r ? p->refused : p->accepted);
		}
	}
}

static void keys(const struct stats *s, FILE *out)
{
	header(out, "key_knocks_total", "",
	       "valid knocks by the key they were made with (refused ones have no key)",
	       "counter");
	for (size_t i = 0; i < s->nkeys && i < CONF_MAX_KEYS; i++) {
		if (!s->key[i].name[0])
			continue;	/* a daemon that does not send them */
		fputs(PREFIX "key_knocks_total{key=\"", out);
		metrics_label_value(s->key[i].name, out);
		fprintf(out, "\",result=\"accepted\"} %" PRIu64 "\n", s->key[i].accepted);
	}
}

static void drops(const struct stats *s, FILE *out)
{
	const struct stats_group *g = &stats_groups[STATS_DROP];

	header(out, "packets_dropped_total", "",
	       "malformed queued packets dropped, by what was wrong with them", "counter");
	for (unsigned i = g->first; i < g->count; i++) {
		fputs(PREFIX "packets_dropped_total{reason=\"", out);
		metrics_label_value(g->name(i), out);
		fprintf(out, "\"} %" PRIu64 "\n", stats_value(s, STATS_DROP, i));
	}
}

static void control(const struct stats *s, FILE *out)
{
	header(out, "control_events_total", "",
	       "control socket connections, requests, replies and refusals, by counter",
	       "counter");
	for (size_t i = 0; i < s->nctl && i < STATS_CTL_MAX; i++) {
		fputs(PREFIX "control_events_total{counter=\"", out);
		metrics_label_value(s->ctl[i].name, out);
		fprintf(out, "\"} %" PRIu64 "\n", s->ctl[i].value);
	}
}

void metrics_write(const struct stats *s, FILE *out)
{
	single(out, "uptime_seconds", "seconds since the daemon started", "gauge", s->uptime_s);
	header(out, "reloads_total", "", "configuration reloads, taken or refused", "counter");
	fprintf(out, PREFIX "reloads_total{result=\"ok\"} %u\n", s->reloads);
	fprintf(out, PREFIX "reloads_total{result=\"refused\"} %u\n", s->reloads_refused);
	single(out, "table_restores_total", "times the daemon put its nftables table back",
	       "counter", s->table_restores);
	single(out, "config_generation", "configuration generation, one up per switch", "gauge",
	       s->generation);
	single(out, "keys", "keys in the active configuration", "gauge", s->nkeys);
	single(out, "protected_ports", "protect entries in the active configuration", "gauge",
	       s->nprotect);
	single(out, "knock_destinations", "knock entries in the active configuration", "gauge",
	       s->nknock);
	single(out, "replay_entries", "knocks remembered against replays", "gauge",
	       s->replay_entries);
	single(out, "intents", "knock-connect integrity intents waiting for their SYN", "gauge",
	       s->intents);
	ports(s, out);
	keys(s, out);
	group_counters(s, STATS_SERVER, "server", server_help, SC_MAX, out);
	drops(s, out);
	group_counters(s, STATS_CLIENT, "client", client_help, CC_MAX, out);
	group_counters(s, STATS_QUEUE, "nfqueue", queue_help, STATS_Q_MAX, out);
	control(s, out);
	single(out, "up", "1 when the daemon answered on its control socket", "gauge", 1);
}

void metrics_write_down(FILE *out)
{
	single(out, "up", "1 when the daemon answered on its control socket", "gauge", 0);
}
