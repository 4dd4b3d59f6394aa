/*
 * test_nftplan.c - entries that share their rules (nftplan.c, plan_groups).
 *
 * Entries that differ only in their port share one group of rules, the
 * ports in a set, in the place of the group's first member.  That must
 * change no verdict: for every port, the rules that can match it are,
 * chain by chain and in order, of the same kinds as when its entries are
 * the only ones of their configuration (beside
 * one that keeps the closed ports' chains planned, as the others do: an
 * entry with an address, which shares nothing).  And what
 * a probe passes must not grow with the entries: chain prerouting and the
 * nat chain hold as many rules for 2 plain entries as for 200.  Each plan
 * is made three ways (running, hiding, keeper), as the daemon makes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "kernel/nft/nftplan.h"
#include "unit.h"

#define KEYS "keys = ( { name = \"k\"; secret = \"Magic secret string\"; } );\n"
#define ENTRY(body) "  { " body " mode = \"knock\"; keys = [ \"k\" ]; }"

/* Every kind of entry; 2200 is shared by a forward entry and a plain one. */
static const char *const entries[] = {
	ENTRY("port = 22;"),
	ENTRY("port = 2200; forward = true; addresses = [ \"203.0.113.0/24\" ];"),
	ENTRY("port = 443;"),
	ENTRY("port = 2200;"),
	ENTRY("port = 8023; on_fail = \"drop\";"),
	ENTRY("port = 4242; integrity_len = 16;"),
	ENTRY("port = 8024; on_fail = \"drop\";"),
	ENTRY("port = 8022;"),
	ENTRY("port = 9000; addresses = [ \"192.0.2.9\", \"2001:db8::9\" ];"),
	ENTRY("port = 8025;"),
};
enum { NENTRIES = sizeof(entries) / sizeof(entries[0]) };
/* What the configuration of one entry holds beside it. */
#define CONTEXT ENTRY("port = 9999; addresses = [ \"192.0.2.99\" ];")
static const unsigned ports[NENTRIES] = { 22, 2200, 443, 2200, 8023, 4242, 8024, 8022, 9000,
					   8025 };

enum plan_way { RUNNING, HIDING, KEEPER, NWAYS };
static const char *const way_names[NWAYS] = { "running", "hiding", "keeper" };

static bool covers(const struct nftplan_rule *r, unsigned port)
{
	if (r->nports > 1) {
		for (uint16_t i = 0; i < r->nports; i++)
			if (r->ports[i] == port)
				return true;
		return false;
	}
	return r->port == port;
}

/* The kinds of p's rules in chain ch that can match port, in order, as text. */
static void kinds_for(const struct nftplan *p, enum nftplan_chain ch, unsigned port, char *out,
		      size_t len)
{
	size_t n = 0;

	out[0] = 0;
	for (size_t i = 0; i < p->n && n + 8 < len; i++)
		if (p->r[i].chain == ch && covers(&p->r[i], port))
			n += (size_t)snprintf(out + n, len - n, "%d ", (int)p->r[i].kind);
}

static int plan(struct conf *c, enum plan_way w, struct nftplan *p)
{
	return w == RUNNING ? nftplan_make(c, p)
	       : w == HIDING ? nftplan_make_hiding(c, p)
			     : nftplan_make_keeper(c, p);
}

static int load(struct conf *c, struct conf_errors *errs, const char *protect_body)
{
	char *text = NULL;
	size_t len = strlen(protect_body) + 256;
	int r;

	text = malloc(len);
	if (!text)
		return -1;
	snprintf(text, len, "%sprotect = (\n%s\n);\n", KEYS, protect_body);
	r = conf_load_text("plan.conf", text, c, errs);
	if (r < 0)
		CHECK(0, "configuration loads (%s)", errs->n ? errs->msg[0] : "?");
	free(text);
	return r;
}

static void check_alone(struct conf *all, struct conf *one, struct conf_errors *errs)
{
	char body[4096] = "";
	size_t n = 0;

	for (size_t i = 0; i < NENTRIES; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "%s%s", i ? ",\n" : "",
				      entries[i]);
	if (load(all, errs, body) < 0)
		return;
	for (int w = 0; w < NWAYS; w++) {
		struct nftplan pa;
		bool grouped = false;

		if (plan(all, (enum plan_way)w, &pa) < 0) {
			CHECK(0, "%s plan of every entry", way_names[w]);
			continue;
		}
		for (size_t i = 0; i < pa.n; i++)
			grouped = grouped || pa.r[i].nports > 1;
		CHECK(grouped == (w != KEEPER), "%s plan: entries share rules (%d)", way_names[w],
		      (int)grouped);
		for (size_t e = 0; e < NENTRIES; e++) {
			struct nftplan p1;
			char alone[1024] = "";
			size_t len = 0;
			bool first = true;

			/* The entries of this port, in their order (once per port). */
			for (size_t j = 0; j < NENTRIES; j++) {
				if (ports[j] != ports[e])
					continue;
				if (first && j < e)
					break;
				len += (size_t)snprintf(alone + len, sizeof(alone) - len, "%s,\n",
							entries[j]);
				first = false;
			}
			if (!len)
				continue;
			snprintf(alone + len, sizeof(alone) - len, "%s", CONTEXT);
			if (load(one, errs, alone) < 0)
				continue;
			if (plan(one, (enum plan_way)w, &p1) < 0) {
				CHECK(0, "%s plan of entry %zu alone", way_names[w], e);
				conf_free(one);
				continue;
			}
			for (int ch = 0; ch < CH_MAX; ch++) {
				char ka[256], k1[256];

				kinds_for(&pa, (enum nftplan_chain)ch, ports[e], ka, sizeof(ka));
				kinds_for(&p1, (enum nftplan_chain)ch, ports[e], k1, sizeof(k1));
				CHECK(strcmp(ka, k1) == 0,
				      "%s plan, port %u, chain %s: the kinds of its rules [%s] are as "
				      "with the entry alone [%s]",
				      way_names[w], ports[e], nftplan_chain_def((enum nftplan_chain)ch)->name,
				      ka, k1);
			}
			nftplan_free(&p1);
			conf_free(one);
		}
		nftplan_free(&pa);
	}
	conf_free(all);
}

/* Rules in chain prerouting and the nat chain with n plain entries. */
static size_t server_rules(struct conf *c, struct conf_errors *errs, unsigned n)
{
	char *body = calloc(n, 80);
	size_t len = 0, rules = 0;
	struct nftplan p;

	if (!body)
		return 0;
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(body + len, (size_t)n * 80 - len,
					"%s  { port = %u; mode = \"knock\"; keys = [ \"k\" ]; }",
					i ? ",\n" : "", 10000 + i);
	if (load(c, errs, body) == 0 && nftplan_make(c, &p) == 0) {
		for (size_t i = 0; i < p.n; i++)
			rules += p.r[i].chain == CH_PREROUTING || p.r[i].chain == CH_PREROUTING_NAT;
		nftplan_free(&p);
		conf_free(c);
	}
	free(body);
	return rules;
}

int main(void)
{
	struct conf *all = calloc(1, sizeof(*all)), *one = calloc(1, sizeof(*one));
	struct conf_errors *errs = calloc(1, sizeof(*errs));

	if (!all || !one || !errs) {
		CHECK(0, "out of memory");
		return unit_done("nftplan");
	}
	check_alone(all, one, errs);
	size_t r2 = server_rules(all, errs, 2), r200 = server_rules(all, errs, 200);

	CHECK(r2 > 0 && r2 == r200,
	      "prerouting and nat: as many rules with 200 plain entries as with 2 (%zu, %zu)", r200,
	      r2);
	free(all);
	free(one);
	free(errs);
	return unit_done("nftplan");
}
