/*
 * fwread.c - this namespace's ruleset as plain data (see fwread.h).
 *
 * Four dumps over one netlink socket: chains, sets, each set's elements,
 * rules.  Each expression is copied with what the judge needs of it; the
 * interpretation is the judge's (fwjudge.c).  A lookup names its set by
 * name in its table, resolved here to an index, so the sets are read
 * before the rules.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>

#include "kernel/fw/fwread.h"
#include "kernel/nl.h"

enum {
	DUMP_RCVBUF = 4 << 20,	/* a dump's answers queue while we read them */
	REQ_BYTES = 4096,
};

struct reader {
	struct fw_ruleset *rs;
	const char *skip;
	int err;		/* -errno met in a callback */
};

static bool family_read(uint32_t f)
{
	return f == NFPROTO_IPV4 || f == NFPROTO_IPV6 || f == NFPROTO_INET || f == NFPROTO_NETDEV;
}

static bool skipped(const struct reader *rd, uint32_t family, const char *table)
{
	return !family_read(family) ||
	       (family == NFPROTO_INET && rd->skip && strcmp(table, rd->skip) == 0);
}

static void copy_name(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* ------------------------------------------------------------ chains */

static int chain_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct reader *rd = arg;
	struct nftnl_chain *nc = nftnl_chain_alloc();
	struct fw_chain c = { .policy = NF_ACCEPT };
	uint32_t family;

	if (!nc)
		return MNL_CB_ERROR;
	if (nftnl_chain_nlmsg_parse(nlh, nc) < 0)
		goto out;
	family = nftnl_chain_get_u32(nc, NFTNL_CHAIN_FAMILY);
	if (skipped(rd, family, nftnl_chain_get_str(nc, NFTNL_CHAIN_TABLE)))
		goto out;
	c.family = (uint8_t)family;
	copy_name(c.table, sizeof(c.table), nftnl_chain_get_str(nc, NFTNL_CHAIN_TABLE));
	copy_name(c.name, sizeof(c.name), nftnl_chain_get_str(nc, NFTNL_CHAIN_NAME));
	if (nftnl_chain_is_set(nc, NFTNL_CHAIN_HOOKNUM)) {
		c.base = true;
		c.hook = nftnl_chain_get_u32(nc, NFTNL_CHAIN_HOOKNUM);
		c.prio = nftnl_chain_get_s32(nc, NFTNL_CHAIN_PRIO);
		copy_name(c.type, sizeof(c.type), nftnl_chain_get_str(nc, NFTNL_CHAIN_TYPE));
		if (nftnl_chain_is_set(nc, NFTNL_CHAIN_POLICY))
			c.policy = (int)nftnl_chain_get_u32(nc, NFTNL_CHAIN_POLICY);
	}
	fw_add_chain(rd->rs, &c);
out:
	nftnl_chain_free(nc);
	return MNL_CB_OK;
}

/* ------------------------------------------------------------ sets */

/* The sets, as the set dump lists them, before their elements are read. */
struct setlist {
	struct fw_set *s;
	size_t n, cap;
	int err;
	const struct reader *rd;
};

static int set_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct setlist *sl = arg;
	struct nftnl_set *ns = nftnl_set_alloc();
	struct fw_set s = { 0 };
	uint32_t family, len = 0;
	const void *fields;

	if (!ns)
		return MNL_CB_ERROR;
	if (nftnl_set_nlmsg_parse(nlh, ns) < 0)
		goto out;
	family = nftnl_set_get_u32(ns, NFTNL_SET_FAMILY);
	if (skipped(sl->rd, family, nftnl_set_get_str(ns, NFTNL_SET_TABLE)))
		goto out;
	s.family = (uint8_t)family;
	copy_name(s.table, sizeof(s.table), nftnl_set_get_str(ns, NFTNL_SET_TABLE));
	copy_name(s.name, sizeof(s.name), nftnl_set_get_str(ns, NFTNL_SET_NAME));
	s.flags = nftnl_set_get_u32(ns, NFTNL_SET_FLAGS);
	s.key_len = nftnl_set_get_u32(ns, NFTNL_SET_KEY_LEN);
	s.data_type = nftnl_set_get_u32(ns, NFTNL_SET_DATA_TYPE);
	s.data_len = nftnl_set_get_u32(ns, NFTNL_SET_DATA_LEN);
	fields = nftnl_set_is_set(ns, NFTNL_SET_DESC_CONCAT)
			 ? nftnl_set_get_data(ns, NFTNL_SET_DESC_CONCAT, &len)
			 : NULL;
	if (fields && len > 1 && len <= sizeof(s.field_len)) {
		s.nfields = (uint8_t)len;
		memcpy(s.field_len, fields, len);
	}
	if (sl->n == sl->cap) {
		size_t cap = sl->cap ? 2 * sl->cap : 32;
		struct fw_set *p = cap > FW_MAX_SETS ? NULL : reallocarray(sl->s, cap, sizeof(*p));

		if (!p) {
			sl->err = -ENOMEM;
			goto out;
		}
		sl->s = p;
		sl->cap = cap;
	}
	sl->s[sl->n++] = s;
out:
	nftnl_set_free(ns);
	return MNL_CB_OK;
}

static struct fw_bytes elem_bytes(struct fw_ruleset *rs, struct nftnl_set_elem *e, uint16_t attr)
{
	uint32_t len = 0;
	const void *p;

	if (!nftnl_set_elem_is_set(e, attr))
		return (struct fw_bytes){ 0, 0 };
	p = nftnl_set_elem_get(e, attr, &len);
	return p ? fw_bytes_add(rs, p, len) : (struct fw_bytes){ 0, 0 };
}

static int elem_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct reader *rd = arg;
	struct nftnl_set *ns = nftnl_set_alloc();
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;

	if (!ns)
		return MNL_CB_ERROR;
	if (nftnl_set_elems_nlmsg_parse(nlh, ns) < 0) {
		nftnl_set_free(ns);
		return MNL_CB_OK;
	}
	it = nftnl_set_elems_iter_create(ns);
	for (e = it ? nftnl_set_elems_iter_cur(it) : NULL; e; e = nftnl_set_elems_iter_next(it)) {
		struct fw_elem el = { 0 };

		el.key = elem_bytes(rd->rs, e, NFTNL_SET_ELEM_KEY);
		el.key_end = elem_bytes(rd->rs, e, NFTNL_SET_ELEM_KEY_END);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS))
			el.interval_end = nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS) &
					  NFT_SET_ELEM_INTERVAL_END;
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_VERDICT))
			el.verdict = (int)nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_VERDICT);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_CHAIN)) {
			const char *ch = nftnl_set_elem_get_str(e, NFTNL_SET_ELEM_CHAIN);

			el.chain = fw_bytes_add(rd->rs, ch, strlen(ch));
		}
		el.data = elem_bytes(rd->rs, e, NFTNL_SET_ELEM_DATA);
		if (!fw_add_elem(rd->rs, &el))
			break;
	}
	if (it)
		nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(ns);
	return MNL_CB_OK;
}

/* ------------------------------------------------------------ rules */

static void reg_of(const struct nftnl_expr *ne, uint16_t attr, uint8_t *slot)
{
	*slot = nftnl_expr_is_set(ne, attr) ? fw_reg_slot(nftnl_expr_get_u32(ne, attr))
					    : FW_REG_VERDICT;
}

static struct fw_bytes expr_bytes(struct fw_ruleset *rs, const struct nftnl_expr *ne,
				  uint16_t attr)
{
	uint32_t len = 0;
	const void *p;

	if (!nftnl_expr_is_set(ne, attr))
		return (struct fw_bytes){ 0, 0 };
	p = nftnl_expr_get(ne, attr, &len);
	return p ? fw_bytes_add(rs, p, len) : (struct fw_bytes){ 0, 0 };
}

/* Names of expressions that change nothing about where a packet goes. */
static const char *const nop_exprs[] = {
	"counter", "log", "notrack", "dynset", "last", "flow_offload", "flow", "connlimit_set",
	NULL,
};
/* ... that may end the rule, alike for any port. */
static const char *const maybe_exprs[] = { "limit", "quota", "connlimit", NULL };
/* ... that hand the packet elsewhere or rewrite where it goes. */
static const char *const away_exprs[] = {
	"queue", "fwd", "dup", "tproxy", "synproxy", "nat", "masq", "redir", NULL,
};
/* ... that load what a port does not change. */
static const char *const same_loads[] = { "exthdr", "osf", "xfrm", "rt", "numgen", "symhash",
					  "tunnel", NULL };

static bool in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return true;
	return false;
}

static void objref(struct fw_expr *e, const struct nftnl_expr *ne)
{
	uint32_t type = nftnl_expr_is_set(ne, NFTNL_EXPR_OBJREF_IMM_TYPE)
				? nftnl_expr_get_u32(ne, NFTNL_EXPR_OBJREF_IMM_TYPE)
				: 0;

	switch (type) {
	case NFT_OBJECT_COUNTER:
	case NFT_OBJECT_CT_HELPER:
	case NFT_OBJECT_CT_TIMEOUT:
	case NFT_OBJECT_SECMARK:
	case NFT_OBJECT_CT_EXPECT:
		e->kind = FX_NOP;
		break;
	case NFT_OBJECT_QUOTA:
	case NFT_OBJECT_LIMIT:
	case NFT_OBJECT_CONNLIMIT:
		e->kind = FX_MAYBE;
		break;
	default:
		e->kind = FX_OTHER;	/* a map of objects, synproxy: not followed */
	}
}

/* One expression of a rule in table (family, table), copied. */
static void add_expr(struct reader *rd, const struct nftnl_expr *ne, uint8_t family,
		     const char *table)
{
	struct fw_ruleset *rs = rd->rs;
	const char *name = nftnl_expr_get_str(ne, NFTNL_EXPR_NAME);
	struct fw_expr e = { .kind = FX_OTHER, .sreg = FW_REG_VERDICT, .dreg = FW_REG_VERDICT,
			     .set = UINT32_MAX };

	copy_name(e.name, sizeof(e.name), name);
	if (!name) {
		fw_add_expr(rs, &e);
		return;
	}
	if (strcmp(name, "payload") == 0) {
		e.kind = nftnl_expr_is_set(ne, NFTNL_EXPR_PAYLOAD_SREG) ? FX_NOP : FX_PAYLOAD;
		reg_of(ne, NFTNL_EXPR_PAYLOAD_DREG, &e.dreg);
		e.key = nftnl_expr_get_u32(ne, NFTNL_EXPR_PAYLOAD_BASE);
		e.offset = nftnl_expr_get_u32(ne, NFTNL_EXPR_PAYLOAD_OFFSET);
		e.len = nftnl_expr_get_u32(ne, NFTNL_EXPR_PAYLOAD_LEN);
	} else if (strcmp(name, "meta") == 0 || strcmp(name, "ct") == 0) {
		bool meta = name[0] == 'm';
		uint16_t dreg = meta ? NFTNL_EXPR_META_DREG : NFTNL_EXPR_CT_DREG;

		e.kind = !nftnl_expr_is_set(ne, dreg) ? FX_NOP : meta ? FX_META : FX_CT;
		reg_of(ne, dreg, &e.dreg);
		e.key = nftnl_expr_get_u32(ne, meta ? NFTNL_EXPR_META_KEY : NFTNL_EXPR_CT_KEY);
		e.flags = !meta && nftnl_expr_is_set(ne, NFTNL_EXPR_CT_DIR)
				  ? nftnl_expr_get_u8(ne, NFTNL_EXPR_CT_DIR)
				  : UINT32_MAX;
	} else if (strcmp(name, "fib") == 0) {
		e.kind = FX_FIB;
		reg_of(ne, NFTNL_EXPR_FIB_DREG, &e.dreg);
		e.key = nftnl_expr_get_u32(ne, NFTNL_EXPR_FIB_RESULT);
		e.flags = nftnl_expr_get_u32(ne, NFTNL_EXPR_FIB_FLAGS);
	} else if (strcmp(name, "cmp") == 0) {
		e.kind = FX_CMP;
		reg_of(ne, NFTNL_EXPR_CMP_SREG, &e.sreg);
		e.op = nftnl_expr_get_u32(ne, NFTNL_EXPR_CMP_OP);
		e.data = expr_bytes(rs, ne, NFTNL_EXPR_CMP_DATA);
	} else if (strcmp(name, "range") == 0) {
		e.kind = FX_RANGE;
		reg_of(ne, NFTNL_EXPR_RANGE_SREG, &e.sreg);
		e.op = nftnl_expr_get_u32(ne, NFTNL_EXPR_RANGE_OP);
		e.data = expr_bytes(rs, ne, NFTNL_EXPR_RANGE_FROM_DATA);
		e.data2 = expr_bytes(rs, ne, NFTNL_EXPR_RANGE_TO_DATA);
	} else if (strcmp(name, "bitwise") == 0) {
		bool bool_op = !nftnl_expr_is_set(ne, NFTNL_EXPR_BITWISE_OP) ||
			       nftnl_expr_get_u32(ne, NFTNL_EXPR_BITWISE_OP) == NFT_BITWISE_BOOL;

		e.kind = bool_op ? FX_BITWISE : FX_OTHER;
		reg_of(ne, NFTNL_EXPR_BITWISE_SREG, &e.sreg);
		reg_of(ne, NFTNL_EXPR_BITWISE_DREG, &e.dreg);
		e.len = nftnl_expr_get_u32(ne, NFTNL_EXPR_BITWISE_LEN);
		e.data = expr_bytes(rs, ne, NFTNL_EXPR_BITWISE_MASK);
		e.data2 = expr_bytes(rs, ne, NFTNL_EXPR_BITWISE_XOR);
	} else if (strcmp(name, "byteorder") == 0) {
		e.kind = FX_BYTEORDER;
		reg_of(ne, NFTNL_EXPR_BYTEORDER_SREG, &e.sreg);
		reg_of(ne, NFTNL_EXPR_BYTEORDER_DREG, &e.dreg);
		e.key = nftnl_expr_get_u32(ne, NFTNL_EXPR_BYTEORDER_OP);
		e.len = nftnl_expr_get_u32(ne, NFTNL_EXPR_BYTEORDER_LEN);
		e.offset = nftnl_expr_get_u32(ne, NFTNL_EXPR_BYTEORDER_SIZE);
	} else if (strcmp(name, "lookup") == 0) {
		const char *set = nftnl_expr_get_str(ne, NFTNL_EXPR_LOOKUP_SET);

		e.kind = FX_LOOKUP;
		reg_of(ne, NFTNL_EXPR_LOOKUP_SREG, &e.sreg);
		e.dreg = FW_REG_NONE;
		if (nftnl_expr_is_set(ne, NFTNL_EXPR_LOOKUP_DREG))
			reg_of(ne, NFTNL_EXPR_LOOKUP_DREG, &e.dreg);
		if (nftnl_expr_is_set(ne, NFTNL_EXPR_LOOKUP_FLAGS))
			e.flags = nftnl_expr_get_u32(ne, NFTNL_EXPR_LOOKUP_FLAGS);
		e.set = set ? fw_find_set(rs, family, table, set) : UINT32_MAX;
	} else if (strcmp(name, "immediate") == 0) {
		e.kind = FX_IMM;
		reg_of(ne, NFTNL_EXPR_IMM_DREG, &e.dreg);
		if (e.dreg == FW_REG_VERDICT) {
			e.verdict = (int)nftnl_expr_get_u32(ne, NFTNL_EXPR_IMM_VERDICT);
			if (nftnl_expr_is_set(ne, NFTNL_EXPR_IMM_CHAIN)) {
				const char *ch = nftnl_expr_get_str(ne, NFTNL_EXPR_IMM_CHAIN);

				e.info = fw_bytes_add(rs, ch, strlen(ch));
			}
		} else {
			e.data = expr_bytes(rs, ne, NFTNL_EXPR_IMM_DATA);
		}
	} else if (strcmp(name, "reject") == 0) {
		e.kind = FX_REJECT;
		e.key = nftnl_expr_get_u32(ne, NFTNL_EXPR_REJECT_TYPE);
		e.op = nftnl_expr_get_u8(ne, NFTNL_EXPR_REJECT_CODE);
	} else if (strcmp(name, "match") == 0 || strcmp(name, "target") == 0) {
		bool mt = name[0] == 'm';

		e.kind = mt ? FX_MATCH : FX_TARGET;
		copy_name(e.name, sizeof(e.name),
			  nftnl_expr_get_str(ne, mt ? NFTNL_EXPR_MT_NAME : NFTNL_EXPR_TG_NAME));
		e.key = nftnl_expr_get_u32(ne, mt ? NFTNL_EXPR_MT_REV : NFTNL_EXPR_TG_REV);
		e.info = expr_bytes(rs, ne, mt ? NFTNL_EXPR_MT_INFO : NFTNL_EXPR_TG_INFO);
	} else if (strcmp(name, "objref") == 0) {
		objref(&e, ne);
	} else if (strcmp(name, "socket") == 0) {
		e.kind = FX_NOSOCKET;
	} else if (in(name, nop_exprs)) {
		e.kind = FX_NOP;
	} else if (in(name, maybe_exprs)) {
		e.kind = FX_MAYBE;
	} else if (in(name, away_exprs)) {
		e.kind = FX_QUEUE;
	} else if (in(name, same_loads)) {
		/* A load when it has a destination register; a set or reset otherwise. */
		static const uint16_t dregs[] = { NFTNL_EXPR_EXTHDR_DREG, NFTNL_EXPR_OSF_DREG,
						  NFTNL_EXPR_XFRM_DREG, NFTNL_EXPR_RT_DREG,
						  NFTNL_EXPR_NG_DREG, NFTNL_EXPR_HASH_DREG,
						  NFTNL_EXPR_TUNNEL_DREG };
		uint16_t dreg = 0;

		for (size_t i = 0; same_loads[i]; i++)
			if (strcmp(name, same_loads[i]) == 0)
				dreg = dregs[i];
		e.kind = nftnl_expr_is_set(ne, dreg) ? FX_LOADSAME : FX_NOP;
		reg_of(ne, dreg, &e.dreg);
		e.len = strcmp(name, "exthdr") == 0 ? nftnl_expr_get_u32(ne, NFTNL_EXPR_EXTHDR_LEN)
						    : 16;
	}
	fw_add_expr(rs, &e);
}

static int rule_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct reader *rd = arg;
	struct fw_ruleset *rs = rd->rs;
	struct nftnl_rule *nr = nftnl_rule_alloc();
	struct nftnl_expr_iter *it = NULL;
	struct nftnl_expr *ne;
	const char *table, *chain;
	uint32_t family;
	size_t ci;

	if (!nr)
		return MNL_CB_ERROR;
	if (nftnl_rule_nlmsg_parse(nlh, nr) < 0)
		goto out;
	family = nftnl_rule_get_u32(nr, NFTNL_RULE_FAMILY);
	table = nftnl_rule_get_str(nr, NFTNL_RULE_TABLE);
	chain = nftnl_rule_get_str(nr, NFTNL_RULE_CHAIN);
	if (!table || !chain || skipped(rd, family, table))
		goto out;
	ci = fw_find_chain(rs, (uint8_t)family, table, chain);
	if (ci == SIZE_MAX)
		goto out;	/* a chain made after the chain dump: the next check sees it */
	/* A chain's rules come in one run; one that does not is not followed. */
	if (rs->chains[ci].n == 0)
		rs->chains[ci].first = (uint32_t)rs->nrules;
	else if (rs->chains[ci].first + rs->chains[ci].n != rs->nrules)
		rs->full = true;
	if (!fw_add_rule(rs, nftnl_rule_get_u64(nr, NFTNL_RULE_HANDLE)))
		goto out;
	rs->chains[ci].n++;
	it = nftnl_expr_iter_create(nr);
	for (ne = it ? nftnl_expr_iter_next(it) : NULL; ne; ne = nftnl_expr_iter_next(it))
		add_expr(rd, ne, (uint8_t)family, table);
out:
	if (it)
		nftnl_expr_iter_destroy(it);
	nftnl_rule_free(nr);
	return MNL_CB_OK;
}

/* ------------------------------------------------------------ dumps */

static int dump(struct nl *nl, uint16_t type, uint16_t family, nl_cb cb, void *arg,
		struct nftnl_set *for_set)
{
	char buf[REQ_BYTES];
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, type, family, NLM_F_DUMP, 0);

	if (for_set)
		nftnl_set_elems_nlmsg_build_payload(nlh, for_set);
	return nl_talk(nl, nlh, cb, arg);
}

static int read_elems(struct nl *nl, struct reader *rd, const struct fw_set *s)
{
	struct nftnl_set *ns = nftnl_set_alloc();
	int r;

	if (!ns)
		return -ENOMEM;
	nftnl_set_set_str(ns, NFTNL_SET_TABLE, s->table);
	nftnl_set_set_str(ns, NFTNL_SET_NAME, s->name);
	nftnl_set_set_u32(ns, NFTNL_SET_FAMILY, s->family);
	r = dump(nl, NFT_MSG_GETSETELEM, s->family, elem_cb, rd, ns);
	nftnl_set_free(ns);
	return r;
}

int fwread_ruleset(struct fw_ruleset *rs, const char *skip_table, char *err, size_t errlen)
{
	struct reader rd = { .rs = rs, .skip = skip_table };
	struct setlist sl = { .rd = &rd };
	struct nl *nl = nl_open(NETLINK_NETFILTER, 0);
	const char *what = "chains";
	int r;

	if (!nl) {
		r = -errno;
		snprintf(err, errlen, "cannot open a netlink socket: %s", strerror(-r));
		return r;
	}
	nl_raise_rcvbuf(nl, DUMP_RCVBUF);
	r = dump(nl, NFT_MSG_GETCHAIN, NFPROTO_UNSPEC, chain_cb, &rd, NULL);
	if (r == 0) {
		what = "sets";
		r = dump(nl, NFT_MSG_GETSET, NFPROTO_UNSPEC, set_cb, &sl, NULL);
		if (r == 0 && sl.err)
			r = sl.err;
	}
	for (size_t i = 0; r == 0 && i < sl.n; i++) {
		if (!fw_add_set(rs, &sl.s[i]))
			break;
		what = "set elements";
		r = read_elems(nl, &rd, &sl.s[i]);
		if (r == -ENOENT)
			r = 0;	/* deleted since the set dump */
	}
	if (r == 0) {
		what = "rules";
		r = dump(nl, NFT_MSG_GETRULE, NFPROTO_UNSPEC, rule_cb, &rd, NULL);
	}
	if (r < 0)
		snprintf(err, errlen, "cannot read the %s: %s%s", what, strerror(-r),
			 r == -EPERM ? " (reading the ruleset needs CAP_NET_ADMIN: run as root)" : "");
	free(sl.s);
	nl_close(nl);
	return r;
}

bool fwread_legacy(char *names, size_t len)
{
	static const char *const files[] = { "/proc/net/ip_tables_names",
					     "/proc/net/ip6_tables_names" };
	size_t off = 0;

	names[0] = '\0';
	for (size_t i = 0; i < 2; i++) {
		FILE *f = fopen(files[i], "re");
		char line[64];

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!line[0] || off >= len)
				continue;
			off += (size_t)snprintf(names + off, len - off, "%s%s %s", off ? ", " : "",
						i ? "ip6" : "ip", line);
		}
		fclose(f);
	}
	return names[0] != '\0';
}
