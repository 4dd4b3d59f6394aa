/*
 * stats.c - the counter table and its views (see stats.h for the contract).
 *
 * The formats are fixed: tests and administrators' scripts read the log's
 * "counters:" and "counter NAME=VALUE" lines and the lines of `knockgw
 * status`, so the views below reproduce them exactly; the JSON field names
 * are documented in knockgw(8).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/stats.h"

/* The log's names of the queue figures; "received" is "queued" there. */
static const char *const queue_log_names[STATS_Q_MAX] = {
	"queued", "verdicts", "enobufs", "nl_errors", "bad_msgs", "send_errors", "large_verdicts",
};
static const char *const queue_names[STATS_Q_MAX] = {
	"received", "verdicts", "enobufs", "nl_errors", "bad_msgs", "send_errors", "large_verdicts",
};

static const char *queue_name(unsigned i)
{
	return i < STATS_Q_MAX ? queue_names[i] : "unknown";
}

static const char *server_name(unsigned i)
{
	return server_counter_name((enum server_counter)i);
}

static const char *drop_name(unsigned i)
{
	return pkt_drop_name((enum pkt_drop)i);
}

static const char *client_name(unsigned i)
{
	return client_counter_name((enum client_counter)i);
}

const struct stats_group stats_groups[STATS_SOURCES] = {
	/* source        how summed         status word  log prefix  indices */
	{ STATS_QUEUE, STATS_SUM_QUEUES, "nfqueue", "", 0, STATS_Q_MAX, queue_name },
	{ STATS_SERVER, STATS_SUM_QUEUES, "server", "", 0, SC_MAX, server_name },
	/* drop 0 is PKT_OK, not a drop */
	{ STATS_DROP, STATS_SUM_QUEUES, "drop", "drop_", 1, PKT_DROP_MAX, drop_name },
	{ STATS_CLIENT, STATS_SUM_QUEUES, "client", "client_", 0, CC_MAX, client_name },
	{ STATS_CONTROL, STATS_SUM_NONE, "control", "control_", 0, STATS_CTL_MAX, NULL },
};

static uint64_t *slot(struct stats *s, enum stats_source src, unsigned i)
{
	switch (src) {
	case STATS_QUEUE:
		return i < STATS_Q_MAX ? &s->queue[i] : NULL;
	case STATS_SERVER:
		return i < SC_MAX ? &s->server[i] : NULL;
	case STATS_DROP:
		return i < PKT_DROP_MAX ? &s->drop[i] : NULL;
	case STATS_CLIENT:
		return i < CC_MAX ? &s->client[i] : NULL;
	case STATS_CONTROL:
		return i < s->nctl ? &s->ctl[i].value : NULL;
	default:
		return NULL;
	}
}

uint64_t stats_value(const struct stats *s, enum stats_source src, unsigned i)
{
	switch (src) {
	case STATS_QUEUE:
		return i < STATS_Q_MAX ? s->queue[i] : 0;
	case STATS_SERVER:
		return i < SC_MAX ? s->server[i] : 0;
	case STATS_DROP:
		return i < PKT_DROP_MAX ? s->drop[i] : 0;
	case STATS_CLIENT:
		return i < CC_MAX ? s->client[i] : 0;
	case STATS_CONTROL:
		return i < s->nctl ? s->ctl[i].value : 0;
	default:
		return 0;
	}
}

static uint64_t queue_src_value(const struct stats_queue_src *q, enum stats_source src,
				unsigned i)
{
	const uint64_t qv[STATS_Q_MAX] = {
		q->q->received, q->q->verdicts, q->q->enobufs, q->q->nl_errors,
		q->q->bad_msgs, q->q->send_errors, q->q->large_verdicts,
	};

	switch (src) {
	case STATS_QUEUE:
		return qv[i];
	case STATS_SERVER:
		return q->srv->c[i];
	case STATS_DROP:
		return q->srv->pkt_drop[i];
	case STATS_CLIENT:
		return q->cli[i];
	default:
		return 0;
	}
}

void stats_add_queue(struct stats *s, const struct stats_queue_src *src)
{
	for (size_t g = 0; g < STATS_SOURCES; g++) {
		const struct stats_group *gr = &stats_groups[g];

		if (gr->sum != STATS_SUM_QUEUES)
			continue;
		for (unsigned i = gr->first; i < gr->count; i++)
			*slot(s, gr->src, i) += queue_src_value(src, gr->src, i);
	}
	for (size_t i = 0; i < s->nprotect && i < CONF_MAX_PROTECT; i++) {
		s->port[i].accepted += src->srv->port_accepted[i];
		s->port[i].refused += src->srv->port_refused[i];
	}
	for (size_t i = 0; i < s->nkeys && i < CONF_MAX_KEYS; i++)
		s->key[i].accepted += src->srv->key_accepted[i];
}

void stats_add_ctl(const char *name, uint64_t value, void *arg)
{
	struct stats *s = arg;

	if (s->nctl >= STATS_CTL_MAX)
		return;
	snprintf(s->ctl[s->nctl].name, sizeof(s->ctl[s->nctl].name), "%s", name);
	s->ctl[s->nctl].value = value;
	s->nctl++;
}

void stats_set_conf(struct stats *s, const struct conf *c)
{
	snprintf(s->conf_path, sizeof(s->conf_path), "%s", c->path);
	snprintf(s->table, sizeof(s->table), "%s", c->table);
	s->nkeys = c->nkeys;
	s->nprotect = c->nprotect;
	s->nknock = c->nknock;
	s->translate_user = c->translate == TRANSLATE_USER;
	for (size_t i = 0; i < c->nprotect && i < CONF_MAX_PROTECT; i++) {
		s->port[i].port = c->protect[i].port;
		snprintf(s->port[i].mode, sizeof(s->port[i].mode), "%s",
			 kg_mode_name(c->protect[i].mode));
		s->port[i].integrity = c->protect[i].integrity_len > 0;
	}
	for (size_t i = 0; i < c->nkeys && i < CONF_MAX_KEYS; i++)
		snprintf(s->key[i].name, sizeof(s->key[i].name), "%s", c->keys[i].name);
}

static const char *group_name(const struct stats *s, const struct stats_group *g, unsigned i)
{
	return g->name ? g->name(i) : s->ctl[i].name;
}

static unsigned group_end(const struct stats *s, const struct stats_group *g)
{
	return g->src == STATS_CONTROL ? (unsigned)s->nctl : g->count;
}

/* ---------------------------------------------------------------- views */

void stats_log(const struct stats *s, void (*emit)(const char *line, void *arg), void *arg)
{
	char line[512];
	size_t off;

	off = (size_t)snprintf(line, sizeof(line), "counters:");
	for (unsigned i = 0; i < STATS_Q_MAX && off < sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %s=%" PRIu64,
					queue_log_names[i], s->queue[i]);
	emit(line, arg);
	for (size_t g = 0; g < STATS_SOURCES; g++) {
		const struct stats_group *gr = &stats_groups[g];

		if (gr->src == STATS_QUEUE)
			continue;	/* on the "counters:" line */
		for (unsigned i = gr->first; i < group_end(s, gr); i++) {
			snprintf(line, sizeof(line), "counter %s%s=%" PRIu64, gr->log_prefix,
				 group_name(s, gr, i), stats_value(s, gr->src, i));
			emit(line, arg);
		}
	}
}

void stats_summary(const struct stats *s, char *buf, size_t len)
{
	snprintf(buf, len,
		 "knocks accepted %" PRIu64 ", refused %" PRIu64 ", replays %" PRIu64
		 ", integrity failures %" PRIu64 ", translated flows %" PRIu64,
		 s->server[SC_syn_accepted], s->server[SC_syn_refused],
		 s->server[SC_replay_refused],
		 s->server[SC_integ_fail] + s->server[SC_integ_conflict],
		 s->client[CC_knocked]);
}

/* What `knockgw status` shows of the queue: errors of every kind, summed. */
static uint64_t queue_errors(const struct stats *s)
{
	return s->queue[STATS_Q_nl_errors] + s->queue[STATS_Q_bad_msgs] +
	       s->queue[STATS_Q_send_errors];
}

void stats_status(const struct stats *s, FILE *out)
{
	char line[400];

	stats_summary(s, line, sizeof(line));
	fprintf(out, "knockgw running for %" PRIu64 " s, %u reload(s), %u refused, "
		     "%u table restore(s); %s\n",
		s->uptime_s, s->reloads, s->reloads_refused, s->table_restores, line);
	fprintf(out, "config %s: %zu key(s), %zu protected port(s), %zu knock destination(s), "
		     "table inet %s (%s queue), queues %u..%u, translate %s\n",
		s->conf_path, s->nkeys, s->nprotect, s->nknock, s->table, s->queue_kind,
		s->queue_first, s->queue_last, s->translate_user ? "user" : "kernel");
	fprintf(out, "generation %u\n", s->generation);
	for (size_t i = 0; i < s->nprotect && i < CONF_MAX_PROTECT; i++) {
		const struct stats_port *p = &s->port[i];

		fprintf(out, "port %u mode %s%s: accepted %" PRIu64 " refused %" PRIu64 "\n",
			p->port, p->mode, p->integrity ? " integrity" : "", p->accepted,
			p->refused);
	}
	fprintf(out, "replay table %zu entries; intents %zu\n", s->replay_entries, s->intents);
	fprintf(out, "queue received %" PRIu64 " verdicts %" PRIu64 " enobufs %" PRIu64
		     " errors %" PRIu64 "\n",
		s->queue[STATS_Q_received], s->queue[STATS_Q_verdicts], s->queue[STATS_Q_enobufs],
		queue_errors(s));
	for (size_t g = 0; g < STATS_SOURCES; g++) {
		const struct stats_group *gr = &stats_groups[g];

		/* The queue too: its "queue" line above sums the errors. */
		for (unsigned i = gr->first; i < group_end(s, gr); i++)
			fprintf(out, "%s %s %" PRIu64 "\n", gr->word, group_name(s, gr, i),
				stats_value(s, gr->src, i));
	}
}

void stats_keys(const struct stats *s, FILE *out)
{
	for (size_t i = 0; i < s->nkeys && i < CONF_MAX_KEYS; i++)
		fprintf(out, "key %s accepted %" PRIu64 "\n", s->key[i].name, s->key[i].accepted);
}

/* ------------------------------------------------------- reading it back */

static int parse_u64(const char *p, uint64_t *ret)
{
	char *end;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (errno || (*end != '\0' && *end != '\n'))
		return -EINVAL;
	*ret = v;
	return 0;
}

/* "WORD NAME VALUE" for a counter group. */
static int parse_counter(struct stats *s, const struct stats_group *g, const char *rest)
{
	const char *sp = strchr(rest, ' ');
	char name[STATS_CTL_NAME];
	uint64_t v;

	if (!sp || (size_t)(sp - rest) >= sizeof(name) || parse_u64(sp + 1, &v) < 0)
		return -EINVAL;
	memcpy(name, rest, (size_t)(sp - rest));
	name[sp - rest] = '\0';
	if (g->src == STATS_CONTROL) {
		if (s->nctl >= STATS_CTL_MAX)
			return -ENOSPC;
		stats_add_ctl(name, v, s);
		return 0;
	}
	for (unsigned i = g->first; i < g->count; i++) {
		if (strcmp(g->name(i), name) == 0) {
			*slot(s, g->src, i) = v;
			return 0;
		}
	}
	return -ENOENT;
}

/* "config PATH: N key(s), ..." (PATH may hold anything but a newline). */
static int parse_config(struct stats *s, const char *rest)
{
	const char *k = strstr(rest, " key(s), ");
	const char *colon = NULL;
	char kind[STATS_KIND_NAME], translate[8];
	size_t nkeys;
	int used = 0;

	if (!k)
		return -EINVAL;
	for (const char *p = rest; p + 1 < k; p++)
		if (p[0] == ':' && p[1] == ' ')
			colon = p;
	if (!colon || (size_t)(colon - rest) >= sizeof(s->conf_path))
		return -EINVAL;
	memcpy(s->conf_path, rest, (size_t)(colon - rest));
	s->conf_path[colon - rest] = '\0';
	if (sscanf(colon + 2, "%zu key(s), %zu protected port(s), %zu knock destination(s), "
			      "table inet %32s (%n",
		   &nkeys, &s->nprotect, &s->nknock, s->table, &used) != 4 || used == 0)
		return -EINVAL;
	s->nkeys = nkeys;
	const char *q = colon + 2 + used, *qe = strstr(q, " queue), queues ");
	if (!qe || (size_t)(qe - q) >= sizeof(kind))
		return -EINVAL;
	memcpy(kind, q, (size_t)(qe - q));
	kind[qe - q] = '\0';
	snprintf(s->queue_kind, sizeof(s->queue_kind), "%s", kind);
	if (sscanf(qe, " queue), queues %u..%u, translate %7s", &s->queue_first, &s->queue_last,
		   translate) != 3)
		return -EINVAL;
	s->translate_user = strcmp(translate, "user") == 0;
	if (s->nprotect > CONF_MAX_PROTECT)
		return -EINVAL;
	return 0;
}

/* "port N mode MODE[ integrity]: accepted N refused N", in config order. */
static int parse_port(struct stats *s, const char *rest)
{
	struct stats_port p = { 0 };
	char mode[STATS_MODE_NAME + 16];
	unsigned port;
	size_t n = 0;
	int used = 0;

	while (n < CONF_MAX_PROTECT && s->port[n].port != 0)
		n++;
	if (n >= CONF_MAX_PROTECT)
		return -ENOSPC;
	if (sscanf(rest, "%u mode %31[^:]: accepted %" SCNu64 " refused %" SCNu64 "%n", &port,
		   mode, &p.accepted, &p.refused, &used) != 4 || used == 0 || port > 65535)
		return -EINVAL;
	char *sp = strchr(mode, ' ');
	if (sp) {
		if (strcmp(sp, " integrity") != 0)
			return -EINVAL;
		*sp = '\0';
		p.integrity = true;
	}
	size_t len = strlen(mode);

	if (len >= sizeof(p.mode))
		return -EINVAL;
	memcpy(p.mode, mode, len + 1);
	p.port = (uint16_t)port;
	s->port[n] = p;
	return 0;
}

/* "key NAME accepted N", in config order (names have no blanks: conf.h). */
static int parse_key(struct stats *s, const char *rest)
{
	const char *sp = strchr(rest, ' ');
	size_t n = 0;

	while (n < CONF_MAX_KEYS && s->key[n].name[0] != '\0')
		n++;
	if (n >= CONF_MAX_KEYS)
		return -ENOSPC;
	if (!sp || sp == rest || (size_t)(sp - rest) >= sizeof(s->key[n].name) ||
	    strncmp(sp, " accepted ", 10) != 0 || parse_u64(sp + 10, &s->key[n].accepted) < 0)
		return -EINVAL;
	memcpy(s->key[n].name, rest, (size_t)(sp - rest));
	s->key[n].name[sp - rest] = '\0';
	return 0;
}

int stats_parse_line(struct stats *s, const char *line)
{
	static const char running[] = "knockgw running for ";
	uint64_t errors;

	if (strncmp(line, running, sizeof(running) - 1) == 0)
		return sscanf(line + sizeof(running) - 1,
			      "%" SCNu64 " s, %u reload(s), %u refused, %u table restore(s);",
			      &s->uptime_s, &s->reloads, &s->reloads_refused,
			      &s->table_restores) == 4 ? 0 : -EINVAL;
	if (strncmp(line, "config ", 7) == 0)
		return parse_config(s, line + 7);
	if (strncmp(line, "generation ", 11) == 0)
		return sscanf(line + 11, "%u", &s->generation) == 1 ? 0 : -EINVAL;
	if (strncmp(line, "port ", 5) == 0)
		return parse_port(s, line + 5);
	if (strncmp(line, "key ", 4) == 0)
		return parse_key(s, line + 4);
	if (strncmp(line, "replay table ", 13) == 0)
		return sscanf(line + 13, "%zu entries; intents %zu", &s->replay_entries,
			      &s->intents) == 2 ? 0 : -EINVAL;
	if (strncmp(line, "queue ", 6) == 0) {
		if (sscanf(line + 6, "received %" SCNu64 " verdicts %" SCNu64 " enobufs %" SCNu64
				     " errors %" SCNu64,
			   &s->queue[STATS_Q_received], &s->queue[STATS_Q_verdicts],
			   &s->queue[STATS_Q_enobufs], &errors) != 4)
			return -EINVAL;
		/* The sum stands for all three kinds until the "nfqueue" lines say each. */
		s->queue[STATS_Q_nl_errors] = errors;
		return 0;
	}
	for (size_t g = 0; g < STATS_SOURCES; g++) {
		const struct stats_group *gr = &stats_groups[g];
		size_t wl = strlen(gr->word);

		if (strncmp(line, gr->word, wl) == 0 && line[wl] == ' ')
			return parse_counter(s, gr, line + wl + 1);
	}
	return -ENOENT;
}

/* --------------------------------------------------------------- JSON */

static void json_string(FILE *out, const char *str)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void stats_json(const struct stats *s, FILE *out)
{
	fprintf(out, "{\"uptime_s\":%" PRIu64 ",\"reloads\":%u,\"reloads_refused\":%u,"
		     "\"table_restores\":%u,\"generation\":%u,",
		s->uptime_s, s->reloads, s->reloads_refused, s->table_restores, s->generation);
	fputs("\"config\":{\"path\":", out);
	json_string(out, s->conf_path);
	fprintf(out, ",\"keys\":%zu,\"protected_ports\":%zu,\"knock_destinations\":%zu,"
		     "\"table\":",
		s->nkeys, s->nprotect, s->nknock);
	json_string(out, s->table);
	fputs(",\"queue_kind\":", out);
	json_string(out, s->queue_kind);
	fprintf(out, ",\"queue_first\":%u,\"queue_last\":%u,\"translate\":\"%s\"},",
		s->queue_first, s->queue_last, s->translate_user ? "user" : "kernel");
	fputs("\"ports\":[", out);
	for (size_t i = 0; i < s->nprotect && i < CONF_MAX_PROTECT; i++) {
		const struct stats_port *p = &s->port[i];

		fprintf(out, "%s{\"port\":%u,\"mode\":", i ? "," : "", p->port);
		json_string(out, p->mode);
		fprintf(out, ",\"integrity\":%s,\"accepted\":%" PRIu64 ",\"refused\":%" PRIu64 "}",
			p->integrity ? "true" : "false", p->accepted, p->refused);
	}
	fprintf(out, "],\"replay_entries\":%zu,\"intents\":%zu,", s->replay_entries, s->intents);
	fputs("\"queue\":{", out);
	for (unsigned i = 0; i < STATS_Q_MAX; i++)
		fprintf(out, "\"%s\":%" PRIu64 ",", queue_name(i), s->queue[i]);
	fprintf(out, "\"errors\":%" PRIu64 "}", queue_errors(s));
	for (size_t g = 0; g < STATS_SOURCES; g++) {
		const struct stats_group *gr = &stats_groups[g];

		if (gr->src == STATS_QUEUE)
			continue;
		fprintf(out, ",\"%s\":{", gr->word);
		for (unsigned i = gr->first; i < group_end(s, gr); i++) {
			fputs(i > gr->first ? "," : "", out);
			json_string(out, group_name(s, gr, i));
			fprintf(out, ":%" PRIu64, stats_value(s, gr->src, i));
		}
		fputc('}', out);
	}
	fputs("}\n", out);
}
