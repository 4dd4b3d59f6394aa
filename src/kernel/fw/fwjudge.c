/*
 * fwjudge.c - a refused SYN against a SYN to an unused port, through the
 * host's other tables (see fwjudge.h).
 *
 * Each packet is followed by a small interpreter of nf_tables rules:
 * registers hold, byte by byte, a known value or an unknown one named by
 * a symbol.  A shared symbol (the source address, the interface) stands
 * for the same bytes in both packets; an own symbol (the mark under
 * knockgw's bits) for bytes that may differ.  A test on shared bytes is a
 * variable: the driver runs both packets in a "world" that assigns the
 * variables met so far, and on meeting an unassigned one starts a world
 * for each value (depth first, at most FW_MAX_WORLDS).  A test on own
 * bytes, or an expression the judge does not know, makes that packet's
 * answer unknown.  Rules with no verdict (a counter, a log) are skipped
 * whole: nothing in them decides where the packet goes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

#include "kernel/fw/fwexec.h"
#include "kernel/fw/fwjudge.h"

/* ------------------------------------------------------------ chains */

/* Where a base chain sits on the way in: netdev ingress, prerouting, input. */
static int hook_rank(const struct fw_chain *c)
{
	if (c->family == NFPROTO_NETDEV)
		return c->hook == NF_NETDEV_INGRESS ? 0 : -1;
	if (c->family != NFPROTO_IPV4 && c->family != NFPROTO_IPV6 && c->family != NFPROTO_INET)
		return -1;
	if (strcmp(c->type, "filter") != 0)
		return -1;	/* nat chains: knockgw's nat rule binds first; route: output only */
	if (c->hook == NF_INET_PRE_ROUTING)
		return 1;
	if (c->hook == NF_INET_LOCAL_IN)
		return 2;
	return -1;
}

/* The packet as the chain sees it. */
static void view_at(const struct fw_probe *p, const struct fw_chain *c, struct fw_view *v)
{
	int rank = hook_rank(c);

	memset(v, 0, sizeof(*v));
	v->family = p->family;
	v->orig_dport = p->dport;
	v->reply_sport = p->dport_nat;
	v->dport = p->dport;
	if (rank == 0 || (rank == 1 && c->prio < PRI_CONNTRACK))
		return;		/* before conntrack, before the redirect */
	v->tracked = true;
	if (rank == 1 && c->prio < PRI_NAT_DST)
		return;		/* after conntrack, before the redirect */
	v->dport = p->dport_nat;
	v->dnat = p->dnat;
	v->nat_done = true;
	v->src_nat_done = rank == 2 && c->prio > PRI_NAT_SRC;
}

/* The base chains a packet of family meets on its way in, in order. */
static size_t path_of(const struct fw_ruleset *rs, const char *skip, uint8_t family, size_t *out,
		      size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < rs->nchains && n < max; i++) {
		const struct fw_chain *c = &rs->chains[i];

		if (!c->base || hook_rank(c) < 0)
			continue;
		if (c->family != family && c->family != NFPROTO_INET && c->family != NFPROTO_NETDEV)
			continue;
		if (c->family == NFPROTO_INET && skip && strcmp(c->table, skip) == 0)
			continue;
		out[n++] = i;
	}
	/* Insertion sort by hook, then priority: a few dozen chains at most. */
	for (size_t i = 1; i < n; i++) {
		size_t x = out[i], j = i;
		const struct fw_chain *c = &rs->chains[x];

		while (j > 0) {
			const struct fw_chain *d = &rs->chains[out[j - 1]];

			if (hook_rank(d) < hook_rank(c) ||
			    (hook_rank(d) == hook_rank(c) && d->prio <= c->prio))
				break;
			out[j] = out[j - 1];
			j--;
		}
		out[j] = x;
	}
	return n;
}

static void answer_at(struct fw_answer *a, enum fw_answer_kind k, long chain, long rule)
{
	a->kind = k;
	a->chain = (int32_t)chain;
	a->rule = (int32_t)rule;
}

/*
 * One base chain: S_ACCEPT (on to the next one), or the packet's answer
 * (S_ANSWER in *a), or S_PENDING.
 */
static enum step run_base(struct run *r, size_t base, struct fw_answer *a)
{
	struct frame {
		size_t chain, rule;
	} stack[MAX_DEPTH], cur = { base, 0 };
	size_t depth = 0;

	view_at(r->p, &r->rs->chains[base], &r->view);
	for (;;) {
		const struct fw_chain *c = &r->rs->chains[cur.chain];
		size_t target = SIZE_MAX, ri;
		enum step st;

		if (++r->steps > MAX_STEPS) {
			answer_at(a, FA_UNKNOWN, (long)cur.chain, -1);
			snprintf(a->why, sizeof(a->why), "the chains loop or are too long to follow");
			return S_ANSWER;
		}
		if (cur.rule >= c->n) {
			if (depth > 0) {
				cur = stack[--depth];
				continue;
			}
			/* The end of the base chain, or of a chain it went to: the policy. */
			c = &r->rs->chains[base];
			if (c->policy == NF_DROP) {
				answer_at(a, FA_SILENT, (long)base, -1);
				return S_ANSWER;
			}
			return S_ACCEPT;
		}
		ri = c->first + cur.rule++;
		memset(a, 0, sizeof(*a));
		st = fw_exec_rule(r, c, ri, &target, a);
		switch (st) {
		case S_HOLDS:
		case S_NEXT:
			continue;
		case S_ACCEPT:
			r->acc_chain = (long)cur.chain;
			r->acc_rule = (long)ri;
			return S_ACCEPT;
		case S_DROP:
			answer_at(a, FA_SILENT, (long)cur.chain, (long)ri);
			return S_ANSWER;
		case S_ANSWER:
			answer_at(a, a->kind, (long)cur.chain, (long)ri);
			return S_ANSWER;
		case S_JUMP:
			if (depth >= MAX_DEPTH) {
				answer_at(a, FA_UNKNOWN, (long)cur.chain, (long)ri);
				snprintf(a->why, sizeof(a->why), "jumps nested too deep");
				return S_ANSWER;
			}
			stack[depth++] = cur;
			cur = (struct frame){ target, 0 };
			continue;
		case S_GOTO:
			cur = (struct frame){ target, 0 };
			continue;
		case S_RETURN:
			cur.rule = SIZE_MAX / 2;	/* past the end: pop, or the policy */
			continue;
		case S_PENDING:
			return S_PENDING;
		case S_UNKNOWN:
		case S_QUEUED:
			answer_at(a, st == S_QUEUED ? FA_QUEUED : FA_UNKNOWN, (long)cur.chain, (long)ri);
			snprintf(a->why, sizeof(a->why), "%s", r->why);
			return S_ANSWER;
		}
	}
}

/* The packet's answer in this world; false when a variable is pending. */
static bool run_packet(struct run *r, const size_t *path, size_t n, struct fw_answer *a)
{
	r->steps = 0;
	r->pending = false;
	r->acc_chain = r->acc_rule = -1;
	if (r->p->fixed) {
		answer_at(a, r->p->fixed_kind, -1, -1);	/* knockgw answers it itself */
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		enum step st = run_base(r, path[i], a);

		if (st == S_PENDING)
			return false;
		if (st == S_ANSWER)
			return true;
	}
	answer_at(a, FA_KERNEL, r->acc_chain, r->acc_rule);
	return true;
}

/* ------------------------------------------------------------ driver */

bool fw_answer_same(const struct fw_answer *a, const struct fw_answer *b)
{
	if (a->kind != b->kind || a->kind == FA_UNKNOWN || a->kind == FA_QUEUED)
		return false;
	return a->kind != FA_ICMP || (a->icmp_type == b->icmp_type && a->icmp_code == b->icmp_code);
}

int fw_judge(const struct fw_ruleset *rs, const char *skip_table, const struct fw_probe *refused,
	     const struct fw_probe *unused, struct fw_judgement *j)
{
	size_t path[FW_MAX_CHAINS], n = path_of(rs, skip_table, refused->family, path, FW_MAX_CHAINS);
	struct world *todo = malloc(FW_MAX_WORLDS * sizeof(*todo));
	struct run *r = calloc(1, sizeof(*r));
	size_t ntodo = 0;
	bool differ = false, unsure = false, first = true;
	struct fw_answer first_a = { 0 };

	memset(j, 0, sizeof(*j));
	if (!todo || !r) {
		free(todo);
		free(r);
		return -ENOMEM;
	}
	r->rs = rs;
	todo[ntodo++] = (struct world){ 0 };
	while (ntodo > 0) {
		struct world w = todo[--ntodo];
		struct fw_answer a, b;
		bool done;

		r->w = &w;
		r->p = refused;
		done = run_packet(r, path, n, &a);
		if (done) {
			r->p = unused;
			done = run_packet(r, path, n, &b);
		}
		if (!done) {
			/* One world for each value of the variable met. */
			if (w.n >= MAX_VARS || ntodo + (size_t)r->npvals > FW_MAX_WORLDS ||
			    j->worlds + ntodo + (size_t)r->npvals > FW_MAX_WORLDS) {
				j->capped = true;
				unsure = true;
				continue;
			}
			for (int v = r->npvals - 1; v >= 0; v--) {
				struct world nw = w;

				nw.key[nw.n] = r->pkey;
				nw.val[nw.n++] = r->pvals[v];
				todo[ntodo++] = nw;
			}
			continue;
		}
		j->worlds++;
		if (first) {
			first_a = a;
			first = false;
		} else if (!fw_answer_same(&a, &first_a) || a.kind != first_a.kind) {
			j->varied = true;
		}
		if (a.kind == FA_UNKNOWN || a.kind == FA_QUEUED || b.kind == FA_UNKNOWN ||
		    b.kind == FA_QUEUED) {
			if (!differ && !unsure) {
				j->refused = a;
				j->unused = b;
			}
			unsure = true;
		} else if (!fw_answer_same(&a, &b)) {
			if (!differ) {
				j->refused = a;
				j->unused = b;
			}
			differ = true;
		} else if (!differ && !unsure && j->worlds == 1) {
			j->refused = a;
			j->unused = b;
		}
	}
	j->result = differ ? FW_DIFFER : unsure ? FW_UNSURE : FW_ALIKE;
	free(todo);
	free(r);
	return 0;
}

/* ------------------------------------------------------------ words */

void fw_answer_text(const struct fw_answer *a, uint8_t family, char *buf, size_t len)
{
	switch (a->kind) {
	case FA_KERNEL:
		snprintf(buf, len, "the kernel's RST (accepted; nothing listens)");
		return;
	case FA_SILENT:
		snprintf(buf, len, "silence (dropped)");
		return;
	case FA_RST:
		snprintf(buf, len, "an RST from a reject rule");
		return;
	case FA_ICMP:
		snprintf(buf, len, "%s type %u code %u (rejected)",
			 family == NFPROTO_IPV6 ? "ICMPv6" : "ICMP", a->icmp_type, a->icmp_code);
		return;
	case FA_QUEUED:
		snprintf(buf, len, "not followed: %s", a->why);
		return;
	case FA_UNKNOWN:
		snprintf(buf, len, "not known: %s", a->why);
		return;
	}
	snprintf(buf, len, "?");
}

static const char *family_name(uint8_t f)
{
	switch (f) {
	case NFPROTO_IPV4:
		return "ip";
	case NFPROTO_IPV6:
		return "ip6";
	case NFPROTO_INET:
		return "inet";
	case NFPROTO_NETDEV:
		return "netdev";
	}
	return "?";
}

void fw_where_text(const struct fw_ruleset *rs, const struct fw_answer *a, char *buf, size_t len)
{
	const struct fw_chain *c;

	if (a->chain < 0 || (size_t)a->chain >= rs->nchains) {
		snprintf(buf, len, "no rule stops it");
		return;
	}
	c = &rs->chains[a->chain];
	if (a->kind == FA_KERNEL)
		snprintf(buf, len, "accepted by rule handle %llu of chain %s in table %s %s",
			 (unsigned long long)rs->rules[a->rule].handle, c->name,
			 family_name(c->family), c->table);
	else if (a->rule < 0)
		snprintf(buf, len, "policy %s of chain %s in table %s %s",
			 c->policy == NF_DROP ? "drop" : "accept", c->name, family_name(c->family),
			 c->table);
	else
		snprintf(buf, len, "rule handle %llu of chain %s in table %s %s",
			 (unsigned long long)rs->rules[a->rule].handle, c->name,
			 family_name(c->family), c->table);
}

bool fw_port_mentioned(const struct fw_ruleset *rs, uint16_t port)
{
	uint8_t be[2] = { (uint8_t)(port >> 8), (uint8_t)port };

	for (size_t i = 0; i < rs->nexprs; i++) {
		const struct fw_expr *e = &rs->exprs[i];

		if ((e->kind == FX_CMP || e->kind == FX_RANGE) && e->data.len == 2 &&
		    memcmp(fw_bytes_at(rs, e->data), be, 2) == 0)
			return true;
		if (e->kind == FX_RANGE && e->data.len == 2 && e->data2.len == 2 &&
		    memcmp(fw_bytes_at(rs, e->data), be, 2) <= 0 &&
		    memcmp(fw_bytes_at(rs, e->data2), be, 2) >= 0)
			return true;
	}
	for (size_t i = 0; i < rs->nelems; i++) {
		const struct fw_elem *el = &rs->elems[i];

		if (el->key.len >= 2 && memcmp(fw_bytes_at(rs, el->key), be, 2) == 0)
			return true;
	}
	return false;
}
