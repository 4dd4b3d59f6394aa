/*
 * check_firewall.c - `knockgw check-firewall` and the `knockgw -n -v` line
 * (see check_firewall.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

#include "cmd/cli.h"
#include "cmd/check_firewall.h"
#include "cmd/commands.h"
#include "daemon/daemon.h"
#include "kernel/fw/fwjudge.h"
#include "kernel/fw/fwread.h"
#include "kernel/listen.h"

enum { MAX_UNUSED = 4, TEXT_LEN = 256 };

/*
 * Unused ports to compare with, spread over the range: those that no rule
 * names and nothing listens on (and neither protected nor refuse_port).
 */
static const uint16_t candidates[] = { 2, 7, 100, 1000, 4000, 20000, 33000, 50000, 60000, 65000 };

/* The verdict for one family. */
struct famcheck {
	uint8_t family;
	enum fw_result result;
	bool judged;		/* some protected port applies to this family */
	bool varied;
	uint16_t port, unused;	/* the pair shown */
	struct fw_judgement j;
};

struct check {
	struct famcheck fam[2];
	uint16_t unused[MAX_UNUSED];
	size_t nunused;
	bool legacy;		/* iptables-legacy tables the check cannot see */
	char legacy_names[128];
	bool forward;		/* forward entries, not checked */
	bool full;		/* the ruleset was too large to read whole */
};

static bool is_protected(const struct conf *c, uint16_t port)
{
	for (size_t i = 0; i < c->nprotect; i++)
		if (c->protect[i].port == port)
			return true;
	return false;
}

static void pick_unused(const struct conf *c, const struct fw_ruleset *rs, struct check *ck)
{
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		uint16_t p = candidates[i];

		if (ck->nunused == MAX_UNUSED)
			break;
		if (p == c->refuse_port || is_protected(c, p) || fw_port_mentioned(rs, p) ||
		    listen_port_used(p) > 0)
			continue;
		ck->unused[ck->nunused++] = p;
	}
}

/* Does entry e apply to packets of family (all addresses, or some of that family)? */
static bool entry_has_family(const struct conf_protect *e, uint8_t family)
{
	int af = family == NFPROTO_IPV6 ? 10 : 2;	/* AF_INET6, AF_INET */

	if (e->naddrs == 0)
		return true;
	for (size_t i = 0; i < e->naddrs; i++)
		if (e->addrs[i].family == af)
			return true;
	return false;
}

static int rank(enum fw_result r)
{
	return r == FW_DIFFER ? 2 : r == FW_UNSURE ? 1 : 0;
}

static int judge_family(const struct conf *c, const struct fw_ruleset *rs, struct check *ck,
			struct famcheck *fc)
{
	for (size_t i = 0; i < c->nprotect; i++) {
		const struct conf_protect *e = &c->protect[i];
		bool hides = e->on_fail == ON_FAIL_RESET && !c->fail_open;
		struct fw_probe refused = {
			.family = fc->family, .dport = e->port, .dport_nat = c->refuse_port,
			.dnat = hides, .mark_mask = c->mark_mask, .fixed = !hides,
			.fixed_kind = e->on_fail == ON_FAIL_DROP ? FA_SILENT : FA_KERNEL,
		};

		if (e->forward) {
			ck->forward = true;
			continue;
		}
		if (!entry_has_family(e, fc->family))
			continue;
		for (size_t u = 0; u < ck->nunused; u++) {
			struct fw_probe unused = { .family = fc->family, .dport = ck->unused[u],
						   .dport_nat = ck->unused[u],
						   .mark_mask = c->mark_mask };
			struct fw_judgement j;

			if (fw_judge(rs, c->table, &refused, &unused, &j) < 0)
				return -ENOMEM;
			fc->varied = fc->varied || j.varied;
			if (!fc->judged || rank(j.result) > rank(fc->result)) {
				fc->judged = true;
				fc->result = j.result;
				fc->j = j;
				fc->port = e->port;
				fc->unused = ck->unused[u];
			}
		}
	}
	if (ck->legacy && fc->result == FW_ALIKE)
		fc->result = FW_UNSURE;
	return 0;
}

/*
 * Reads the ruleset and judges each family into ck.  0, or -errno with
 * the reason in err.
 */
static int check_conf(const struct conf *c, struct check *ck, struct fw_ruleset *rs, char *err,
		      size_t errlen)
{
	int r;

	memset(ck, 0, sizeof(*ck));
	ck->fam[0].family = NFPROTO_IPV4;
	ck->fam[1].family = NFPROTO_IPV6;
	r = fwread_ruleset(rs, c->table, err, errlen);
	if (r < 0)
		return r;
	ck->full = rs->full;
	ck->legacy = fwread_legacy(ck->legacy_names, sizeof(ck->legacy_names));
	pick_unused(c, rs, ck);
	if (ck->nunused == 0) {
		snprintf(err, errlen, "no unused port to compare with (every candidate is named "
			 "by a rule or listened on)");
		return -ENOENT;
	}
	for (size_t f = 0; f < 2; f++) {
		r = judge_family(c, rs, ck, &ck->fam[f]);
		if (r < 0) {
			snprintf(err, errlen, "out of memory");
			return r;
		}
		if (ck->full && ck->fam[f].result == FW_ALIKE)
			ck->fam[f].result = FW_UNSURE;
	}
	return 0;
}

static const char *fam_name(uint8_t f)
{
	return f == NFPROTO_IPV6 ? "IPv6" : "IPv4";
}

static void print_family(const struct fw_ruleset *rs, const struct conf *c,
			 const struct check *ck, const struct famcheck *fc, FILE *out)
{
	char a[TEXT_LEN], aw[TEXT_LEN], b[TEXT_LEN], bw[TEXT_LEN];

	if (!fc->judged) {
		fprintf(out, "%s: no protected port of this family\n", fam_name(fc->family));
		return;
	}
	fw_answer_text(&fc->j.refused, fc->family, a, sizeof(a));
	fw_where_text(rs, &fc->j.refused, aw, sizeof(aw));
	fw_answer_text(&fc->j.unused, fc->family, b, sizeof(b));
	fw_where_text(rs, &fc->j.unused, bw, sizeof(bw));
	if (fc->j.refused.chain < 0 && fc->j.refused.kind != FA_KERNEL)
		snprintf(aw, sizeof(aw), "knockgw answers it itself (%s)",
			 c->fail_open ? "queue.fail_open" : "on_fail \"drop\"");
	switch (fc->result) {
	case FW_ALIKE:
		fprintf(out, "%s: alike: a refused SYN to port %u and SYNs to unused ports get %s "
			     "(%s)%s\n", fam_name(fc->family), fc->port, a, aw,
			fc->varied ? "; for some traffic (by source, interface or rate) another "
				     "answer, the same for both"
				   : "");
		break;
	case FW_DIFFER:
		fprintf(out, "%s: NOT alike: a refused SYN to port %u gets %s (%s), a SYN to "
			     "unused port %u gets %s (%s): the protected port stands out\n",
			fam_name(fc->family), fc->port, a, aw, fc->unused, b, bw);
		break;
	case FW_UNSURE:
		if (ck->legacy)
			fprintf(out, "%s: cannot tell: iptables-legacy tables (%s) are outside "
				     "nftables and not read\n", fam_name(fc->family),
				ck->legacy_names);
		else if (ck->full)
			fprintf(out, "%s: cannot tell: the ruleset is too large to read whole\n",
				fam_name(fc->family));
		else if (fc->j.capped)
			fprintf(out, "%s: cannot tell: too many combinations of conditions to "
				     "follow\n", fam_name(fc->family));
		else
			fprintf(out, "%s: cannot tell: a refused SYN to port %u gets %s (%s), a "
				     "SYN to unused port %u gets %s (%s)\n",
				fam_name(fc->family), fc->port, a, aw, fc->unused, b, bw);
		break;
	}
}

static int verdict_code(const struct check *ck)
{
	int worst = 0;

	for (size_t f = 0; f < 2; f++)
		if (ck->fam[f].judged && rank(ck->fam[f].result) > worst)
			worst = rank(ck->fam[f].result);
	return worst == 2 ? CHECK_FIREWALL_DIFFER : worst == 1 ? CHECK_FIREWALL_UNSURE : CHECK_FIREWALL_ALIKE;
}

static int run(const char *conf_path)
{
	struct fw_ruleset rs = { 0 };
	struct conf *c = conf_load_file(conf_path, false);
	char err[TEXT_LEN];
	struct check ck;
	int r;

	if (!c)
		return CHECK_FIREWALL_ERROR;
	if (c->nprotect == 0) {
		printf("no protect entry: nothing is refused, nothing to check\n");
		conf_destroy(c);
		return CHECK_FIREWALL_ALIKE;
	}
	r = check_conf(c, &ck, &rs, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "knockgw check-firewall: %s\n", err);
		fw_ruleset_free(&rs);
		conf_destroy(c);
		return CHECK_FIREWALL_ERROR;
	}
	printf("unused ports compared with: ");
	for (size_t i = 0; i < ck.nunused; i++)
		printf("%s%u", i ? ", " : "", ck.unused[i]);
	printf(" (refused SYNs go to rules.refuse_port %u)\n", c->refuse_port);
	for (size_t f = 0; f < 2; f++)
		print_family(&rs, c, &ck, &ck.fam[f], stdout);
	if (ck.forward)
		printf("forward entries: their refusals are answered by the routed hosts, not "
		       "checked here\n");
	r = verdict_code(&ck);
	if (r == CHECK_FIREWALL_DIFFER)
		printf("make rules.refuse_port get what your unused ports get: do not allow it "
		       "(nor accept DNAT'ed traffic to it) in your firewall (knockgw(8), "
		       "FIREWALL)\n");
	fw_ruleset_free(&rs);
	conf_destroy(c);
	return r;
}

void check_firewall_summary(const struct conf *c, FILE *out)
{
	struct fw_ruleset rs = { 0 };
	char err[TEXT_LEN];
	struct check ck;
	int r;

	if (c->nprotect == 0)
		return;
	r = check_conf(c, &ck, &rs, err, sizeof(err));
	fw_ruleset_free(&rs);
	if (r < 0) {
		fprintf(out, "firewall: not checked: %s\n", err);
		return;
	}
	switch (verdict_code(&ck)) {
	case CHECK_FIREWALL_ALIKE:
		fprintf(out, "firewall: refused SYNs look like this host's unused ports\n");
		break;
	case CHECK_FIREWALL_DIFFER:
		fprintf(out, "firewall: refused SYNs do NOT look like this host's unused ports "
			     "(`knockgw check-firewall` says why)\n");
		break;
	default:
		fprintf(out, "firewall: cannot tell whether refused SYNs look like this host's "
			     "unused ports (`knockgw check-firewall` says why)\n");
	}
}

int check_firewall_main(int argc, char **argv)
{
	const char *conf_path = CONF_DEFAULT_PATH;
	int r = cli_plain_options("check-firewall", CHECK_FIREWALL_SYNOPSIS, CHECK_FIREWALL_SUMMARY, argc, argv, &conf_path, NULL);

	return r >= 0 ? r : run(conf_path);
}
