/*
 * fwexec.c - the firewall judge's rule interpreter (see fwexec.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>

#include "fwexec.h"

/* ------------------------------------------------------------ symbols */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint32_t sym_of(const char *tag, uint32_t a, uint32_t b, uint32_t i)
{
	uint64_t h = fnv(0xcbf29ce484222325ULL, tag, strlen(tag));

	h = fnv(h, &a, sizeof(a));
	h = fnv(h, &b, sizeof(b));
	h = fnv(h, &i, sizeof(i));
	return (uint32_t)(h ^ (h >> 32)) | 1;
}

static void set_known(struct rbyte *r, const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r[i] = (struct rbyte){ .known = true, .v = v[i] };
}

/* n unknown bytes named tag (a, b): shared, or the packet's own when own. */
static void set_unknown(struct run *r, uint8_t slot, size_t n, const char *tag, uint32_t a,
			uint32_t b, bool own, enum field f)
{
	for (size_t i = 0; i < n && slot * 4u + i < REG_BYTES; i++)
		r->reg[slot * 4 + i] = (struct rbyte){
			.own = own, .field = (uint8_t)f,
			.sym = sym_of(tag, a, b, (uint32_t)i + (own ? 0x100u * (r->p->dport + 1u) : 0)),
		};
}

static bool reg_ok(uint8_t slot, size_t n)
{
	return slot != FW_REG_VERDICT && slot * 4u + n <= REG_BYTES;
}

/* ------------------------------------------------------------ worlds */

/*
 * The world's value of variable key, or, unassigned, PENDING (the values
 * it may take kept for the driver).
 */
static int decide(struct run *r, uint64_t key, int nvals, const int16_t *vals)
{
	for (size_t i = 0; i < r->w->n; i++)
		if (r->w->key[i] == key)
			return r->w->val[i];
	r->pending = true;
	r->pkey = key;
	r->npvals = nvals < MAX_VALS ? nvals : MAX_VALS;
	memcpy(r->pvals, vals, (size_t)r->npvals * sizeof(*vals));
	return PENDING;
}

static int decide_bool(struct run *r, uint64_t key)
{
	static const int16_t tf[] = { 1, 0 };

	return decide(r, key, 2, tf);
}

/* The key of a test on register bytes: the bytes' symbols and values, and the operand. */
static uint64_t test_key(const char *what, const struct rbyte *b, size_t n, const void *operand,
			 size_t olen, uint32_t extra)
{
	uint64_t h = fnv(0xcbf29ce484222325ULL, what, strlen(what));

	for (size_t i = 0; i < n; i++) {
		uint32_t x = b[i].known ? b[i].v : b[i].sym;

		h = fnv(h, &b[i].known, sizeof(b[i].known));
		h = fnv(h, &x, sizeof(x));
	}
	h = fnv(h, operand, olen);
	return fnv(h, &extra, sizeof(extra));
}

/* ------------------------------------------------------------ loads */

static void load_payload(struct run *r, const struct fw_expr *e)
{
	size_t n = e->len;

	if (!reg_ok(e->dreg, n))
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t off = e->offset + (uint32_t)i;
		struct rbyte *b = &r->reg[e->dreg * 4 + i];
		uint8_t v;
		bool known = false;

		if (e->key == NFT_PAYLOAD_NETWORK_HEADER) {
			/* The protocol: IPv4's byte 9, IPv6's next header (no extension headers). */
			if ((r->view.family == NFPROTO_IPV4 && off == 9) ||
			    (r->view.family == NFPROTO_IPV6 && off == 6)) {
				v = PROTO_TCP;
				known = true;
			}
		} else if (e->key == NFT_PAYLOAD_TRANSPORT_HEADER) {
			if (off == 2 || off == 3) {
				v = (uint8_t)(off == 2 ? r->view.dport >> 8 : r->view.dport);
				known = true;
			} else if (off == 13) {
				v = 0x02;	/* SYN */
				known = true;
			}
		}
		if (known)
			*b = (struct rbyte){ .known = true, .v = v };
		else
			*b = (struct rbyte){ .sym = sym_of("payload", e->key, off, 0) };
	}
}

static void load_u32(struct run *r, uint8_t slot, uint32_t v)
{
	if (reg_ok(slot, 4))
		set_known(&r->reg[slot * 4], (const uint8_t *)&v, 4);	/* host order, as nft */
}

static void load_u8(struct run *r, uint8_t slot, uint8_t v)
{
	if (reg_ok(slot, 1))
		set_known(&r->reg[slot * 4], &v, 1);
}

static void load_be16(struct run *r, uint8_t slot, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	if (reg_ok(slot, 2))
		set_known(&r->reg[slot * 4], b, 2);
}

/* false: the kernel ends the rule here (NFT_BREAK: nothing to load). */
static bool load_meta(struct run *r, const struct fw_expr *e)
{
	uint16_t proto = r->view.family == NFPROTO_IPV6 ? 0x86dd : 0x0800;

	switch (e->key) {
	case NFT_META_L4PROTO:
		load_u8(r, e->dreg, PROTO_TCP);
		return true;
	case NFT_META_NFPROTO:
		load_u8(r, e->dreg, r->view.family);
		return true;
	case NFT_META_PROTOCOL:
		load_be16(r, e->dreg, proto);
		return true;
	case NFT_META_PKTTYPE:
		load_u8(r, e->dreg, 0);	/* PACKET_HOST */
		return true;
	case NFT_META_OIF:
	case NFT_META_OIFNAME:
	case NFT_META_OIFTYPE:
	case NFT_META_OIFGROUP:
	case NFT_META_SKUID:
	case NFT_META_SKGID:
	case NFT_META_CGROUP:
		return false;	/* no output device, no socket on the way in */
	case NFT_META_IIF:
		set_unknown(r, e->dreg, 4, "iif", 0, 0, false, F_IIF);
		return true;
	case NFT_META_IIFNAME:
		set_unknown(r, e->dreg, 16, "iifname", 0, 0, false, F_IIFNAME);
		return true;
	case NFT_META_IIFTYPE:
		set_unknown(r, e->dreg, 2, "iiftype", 0, 0, false, F_IIFTYPE);
		return true;
	case NFT_META_MARK:
		/* knockgw's bits differ (a refused SYN carries a code); the rest is alike. */
		for (size_t i = 0; i < 4 && reg_ok(e->dreg, 4); i++) {
			uint32_t m = r->p->mark_mask;
			bool own = ((const uint8_t *)&m)[i] != 0;

			r->reg[e->dreg * 4 + i] = (struct rbyte){
				.own = own,
				.sym = sym_of("mark", own ? r->p->dport : 0, 0, (uint32_t)i),
			};
		}
		return true;
	default:
		set_unknown(r, e->dreg, 16, "meta", e->key, 0, false, F_NONE);
		return true;
	}
}

static bool load_ct(struct run *r, const struct fw_expr *e)
{
	const struct fw_view *v = &r->view;

	if (!v->tracked && e->key != NFT_CT_STATE)
		return false;	/* no entry: ct expressions end the rule */
	switch (e->key) {
	case NFT_CT_STATE:
		load_u32(r, e->dreg, fw_view_ct_state(v));
		return true;
	case NFT_CT_STATUS:
		load_u32(r, e->dreg, fw_view_ct_status(v));
		return true;
	case NFT_CT_DIRECTION:
		load_u8(r, e->dreg, CT_DIR_ORIGINAL);
		return true;
	case NFT_CT_L3PROTOCOL:
		load_u8(r, e->dreg, v->family);
		return true;
	case NFT_CT_PROTOCOL:
		load_u8(r, e->dreg, PROTO_TCP);
		return true;
	case NFT_CT_PROTO_DST:
		if (e->flags == CT_DIR_ORIGINAL) {
			load_be16(r, e->dreg, v->orig_dport);
			return true;
		}
		break;
	case NFT_CT_PROTO_SRC:
		if (e->flags == CT_DIR_REPLY) {
			load_be16(r, e->dreg, v->reply_sport);
			return true;
		}
		break;
	default:
		break;
	}
	set_unknown(r, e->dreg, 16, "ct", e->key, e->flags, false, F_NONE);
	return true;
}

static void load_fib(struct run *r, const struct fw_expr *e)
{
	/* The destination is a local address for both (the redirect keeps it local). */
	if (e->key == NFT_FIB_RESULT_ADDRTYPE && (e->flags & NFTA_FIB_F_DADDR) &&
	    !(e->flags & NFTA_FIB_F_SADDR)) {
		load_u32(r, e->dreg, RTN_LOCAL);
		return;
	}
	set_unknown(r, e->dreg, 16, "fib", e->key, e->flags, false, F_NONE);
}

/* ------------------------------------------------------------ tests */

enum tri { T_FALSE, T_TRUE, T_SHARED, T_OWN };

/* What is in n register bytes from slot: all known, some own, or shared unknowns. */
static enum tri reg_state(const struct rbyte *b, size_t n)
{
	bool all = true;

	for (size_t i = 0; i < n; i++) {
		if (b[i].own)
			return T_OWN;
		all = all && b[i].known;
	}
	return all ? T_TRUE : T_SHARED;
}

static bool cmp_holds(uint32_t op, int d)
{
	switch (op) {
	case NFT_CMP_EQ:
		return d == 0;
	case NFT_CMP_NEQ:
		return d != 0;
	case NFT_CMP_LT:
		return d < 0;
	case NFT_CMP_LTE:
		return d <= 0;
	case NFT_CMP_GT:
		return d > 0;
	case NFT_CMP_GTE:
		return d >= 0;
	}
	return false;
}

static int bytecmp(const struct rbyte *b, const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].v != d[i])
			return b[i].v < d[i] ? -1 : 1;
	return 0;
}

/*
 * The loopback tests (iifname "lo", iif lo, iiftype loopback): a prober is
 * not on loopback.  T_SHARED when the test is not one of them.
 */
static enum tri loopback_test(const struct rbyte *b, size_t n, uint32_t op, const uint8_t *d)
{
	enum field f = (enum field)b[0].field;
	bool is_lo;

	if (f == F_NONE || (op != NFT_CMP_EQ && op != NFT_CMP_NEQ))
		return T_SHARED;
	for (size_t i = 1; i < n; i++)
		if (b[i].field != f)
			return T_SHARED;
	if (f == F_IIFNAME)
		is_lo = n >= 3 && memcmp(d, "lo", 3) == 0;
	else if (f == F_IIF && n == 4)
		is_lo = d[0] == LO_IFINDEX && !d[1] && !d[2] && !d[3];	/* little-endian host */
	else if (f == F_IIFTYPE && n == 2)
		is_lo = (d[0] | d[1] << 8) == ARPHRD_LOOPBACK_;
	else
		return T_SHARED;
	if (!is_lo)
		return T_SHARED;
	return op == NFT_CMP_EQ ? T_FALSE : T_TRUE;
}

/* A shared or own test's outcome for this packet: 1, 0, PENDING or UNKNOWN_V (said). */
static int test_result(struct run *r, enum tri t, uint64_t key)
{
	if (t == T_OWN) {
		snprintf(r->why, sizeof(r->why), "a test of something that can differ between "
			 "the two packets and is not known (such as the packet mark)");
		return UNKNOWN_V;
	}
	return decide_bool(r, key);
}

/* A test's 1 or 0 as a step; PENDING and UNKNOWN_V as theirs. */
static enum step test_step(int v)
{
	if (v == PENDING)
		return S_PENDING;
	if (v == UNKNOWN_V)
		return S_UNKNOWN;
	return v ? S_HOLDS : S_NEXT;
}

static enum step do_cmp(struct run *r, const struct fw_expr *e)
{
	const uint8_t *d = fw_bytes_at(r->rs, e->data);
	size_t n = e->data.len;
	const struct rbyte *b;
	enum tri t;

	if (!reg_ok(e->sreg, n))
		return S_NEXT;	/* a malformed rule the kernel would not hold */
	b = &r->reg[e->sreg * 4];
	t = reg_state(b, n);
	if (t == T_TRUE)
		return cmp_holds(e->op, bytecmp(b, d, n)) ? S_HOLDS : S_NEXT;
	if (t == T_SHARED) {
		t = loopback_test(b, n, e->op, d);
		if (t == T_TRUE)
			return S_HOLDS;
		if (t == T_FALSE)
			return S_NEXT;
	}
	return test_step(test_result(r, t, test_key("cmp", b, n, d, n, e->op)));
}

static enum step do_range(struct run *r, const struct fw_expr *e)
{
	const uint8_t *lo = fw_bytes_at(r->rs, e->data), *hi = fw_bytes_at(r->rs, e->data2);
	size_t n = e->data.len;
	const struct rbyte *b;
	enum tri t;

	if (!reg_ok(e->sreg, n) || e->data2.len != n)
		return S_NEXT;
	b = &r->reg[e->sreg * 4];
	t = reg_state(b, n);
	if (t == T_TRUE) {
		bool in = bytecmp(b, lo, n) >= 0 && bytecmp(b, hi, n) <= 0;

		return in == (e->op == NFT_RANGE_EQ) ? S_HOLDS : S_NEXT;
	}
	return test_step(test_result(r, t, test_key("range", b, n, lo, n,
						    e->op ^ (uint32_t)fnv(0, hi, n))));
}

static void do_bitwise(struct run *r, const struct fw_expr *e)
{
	const uint8_t *mask = fw_bytes_at(r->rs, e->data), *xor = fw_bytes_at(r->rs, e->data2);
	size_t n = e->len;
	struct rbyte out[REG_BYTES];

	if (!reg_ok(e->sreg, n) || !reg_ok(e->dreg, n) || e->data.len < n || e->data2.len < n)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct rbyte *b = &r->reg[e->sreg * 4 + i];

		if (mask[i] == 0 || b->known)
			out[i] = (struct rbyte){ .known = true,
						 .v = (uint8_t)(((b->known ? b->v : 0) & mask[i]) ^
								xor[i]) };
		else
			out[i] = (struct rbyte){ .own = b->own,
						 .sym = b->sym * 31u + mask[i] * 7u + xor[i] };
	}
	memcpy(&r->reg[e->dreg * 4], out, n * sizeof(*out));
}

static void do_byteorder(struct run *r, const struct fw_expr *e)
{
	size_t n = e->len, size = e->offset;
	struct rbyte out[REG_BYTES];

	if (!reg_ok(e->sreg, n) || !reg_ok(e->dreg, n) || (size != 2 && size != 4 && size != 8) ||
	    n % size)
		return;
	/* ntoh and hton are the same swap on a little-endian host. */
	for (size_t w = 0; w < n; w += size)
		for (size_t i = 0; i < size; i++)
			out[w + i] = r->reg[e->sreg * 4 + w + size - 1 - i];
	memcpy(&r->reg[e->dreg * 4], out, n * sizeof(*out));
}

/* ------------------------------------------------------------ sets */

static bool key_in_elem(const struct fw_ruleset *rs, const struct fw_set *s,
			const struct fw_elem *el, const uint8_t *k, size_t n)
{
	const uint8_t *a = fw_bytes_at(rs, el->key);

	if (el->key_end.len) {
		const uint8_t *z = fw_bytes_at(rs, el->key_end);

		if (s->nfields == 0)
			return memcmp(k, a, n) >= 0 && memcmp(k, z, n) <= 0;
		/* A concatenation of ranges: each field in its own range. */
		for (size_t f = 0, off = 0; f < s->nfields && off < n; f++) {
			size_t flen = (s->field_len[f] + 3u) & ~3u, cmp = s->field_len[f];

			if (off + cmp > n || memcmp(k + off, a + off, cmp) < 0 ||
			    memcmp(k + off, z + off, cmp) > 0)
				return false;
			off += flen;
		}
		return true;
	}
	return memcmp(k, a, n) == 0;
}

/* The element key k falls in, or -1. */
static long set_find(const struct fw_ruleset *rs, const struct fw_set *s, const uint8_t *k,
		     size_t n)
{
	long best = -1;

	if ((s->flags & NFT_SET_INTERVAL) && !(s->flags & NFT_SET_CONCAT)) {
		/* Interval boundaries: the greatest start or end at or below k decides. */
		const uint8_t *bk = NULL;

		for (uint32_t i = 0; i < s->n; i++) {
			const struct fw_elem *el = &rs->elems[s->first + i];
			const uint8_t *a = fw_bytes_at(rs, el->key);
			int c;

			if (el->key_end.len) {
				if (key_in_elem(rs, s, el, k, n))
					return (long)i;
				continue;
			}
			if (el->key.len < n || memcmp(a, k, n) > 0)
				continue;
			c = bk ? memcmp(a, bk, n) : 1;
			if (c > 0 || (c == 0 && !el->interval_end)) {
				bk = a;
				best = el->interval_end ? -1 : (long)i;
			}
		}
		return best;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		const struct fw_elem *el = &rs->elems[s->first + i];

		if (el->key.len >= n && key_in_elem(rs, s, el, k, n))
			return (long)i;
	}
	return -1;
}

/* What element i does: its verdict for a verdict map; 0 for a plain set. */
static bool same_data(const struct fw_ruleset *rs, const struct fw_elem *a, const struct fw_elem *b)
{
	return a->verdict == b->verdict && a->chain.len == b->chain.len &&
	       memcmp(fw_bytes_at(rs, a->chain), fw_bytes_at(rs, b->chain), a->chain.len) == 0 &&
	       a->data.len == b->data.len &&
	       memcmp(fw_bytes_at(rs, a->data), fw_bytes_at(rs, b->data), a->data.len) == 0;
}

/* Sets the rule's verdict from a verdict map's element, or loads a data map's. */
static enum step map_result(struct run *r, const struct fw_expr *e, const struct fw_set *s,
			    long i, int *verdict, size_t *target)
{
	const struct fw_elem *el;

	if (i < 0)
		return S_NEXT;	/* no element: the rule ends */
	el = &r->rs->elems[s->first + (uint32_t)i];
	if (e->dreg == FW_REG_VERDICT) {
		*verdict = el->verdict;
		*target = SIZE_MAX;
		if (el->chain.len) {
			char name[FW_NAME_MAX];

			snprintf(name, sizeof(name), "%.*s", (int)el->chain.len,
				 (const char *)fw_bytes_at(r->rs, el->chain));
			*target = fw_find_chain(r->rs, s->family, s->table, name);
		}
		return S_JUMP;	/* the caller applies *verdict */
	}
	if (reg_ok(e->dreg, el->data.len))
		set_known(&r->reg[e->dreg * 4], fw_bytes_at(r->rs, el->data), el->data.len);
	return S_HOLDS;
}

static enum step do_lookup(struct run *r, const struct fw_expr *e, int *verdict, size_t *target)
{
	const struct fw_set *s;
	const struct rbyte *b;
	uint8_t k[REG_BYTES];
	size_t n;
	enum tri t;
	bool map;
	long i;

	if (e->set >= r->rs->nsets) {
		snprintf(r->why, sizeof(r->why), "a lookup in a set that could not be read");
		return S_UNKNOWN;
	}
	s = &r->rs->sets[e->set];
	n = s->key_len;
	map = e->dreg != FW_REG_NONE && (s->flags & NFT_SET_MAP);
	if (!reg_ok(e->sreg, n))
		return S_NEXT;
	b = &r->reg[e->sreg * 4];
	t = reg_state(b, n);
	if (t == T_OWN) {
		snprintf(r->why, sizeof(r->why), "a set lookup keyed on something that can differ "
			 "between the two packets and is not known");
		return S_UNKNOWN;
	}
	for (size_t j = 0; j < n; j++)
		k[j] = b[j].v;
	if (t == T_TRUE) {
		i = set_find(r->rs, s, k, n);
	} else {
		/*
		 * Unknown but shared: the variable takes one value per distinct
		 * outcome (not in the set, or each element's data), among the
		 * elements whose known bytes agree with the key's.
		 */
		int16_t vals[MAX_VALS];
		int nv = 0;

		vals[nv++] = -1;
		for (uint32_t j = 0; j < s->n && nv < MAX_VALS; j++) {
			const struct fw_elem *el = &r->rs->elems[s->first + j];
			const uint8_t *a = fw_bytes_at(r->rs, el->key);
			bool agree = el->key.len >= n;
			int dup = 0;

			for (size_t x = 0; agree && !el->key_end.len && x < n; x++)
				agree = !b[x].known || a[x] == b[x].v;
			if (!agree)
				continue;
			for (int q = 1; q < nv && map && !dup; q++)
				dup = same_data(r->rs, el, &r->rs->elems[s->first + (uint32_t)vals[q]]);
			if (!map && nv > 1)
				dup = 1;	/* a plain set: in it or not */
			if (!dup)
				vals[nv++] = (int16_t)j;
		}
		if (s->n > INT16_MAX) {
			snprintf(r->why, sizeof(r->why), "a lookup in a set too large to follow");
			return S_UNKNOWN;
		}
		if (nv == 1) {
			i = -1;
		} else {
			int v = decide(r, test_key("lookup", b, n, &e->set, sizeof(e->set), 0),
				       nv, vals);

			if (v == PENDING)
				return S_PENDING;
			i = v;
		}
	}
	if (map)
		return map_result(r, e, s, i, verdict, target);
	return (i >= 0) != !!(e->flags & NFT_LOOKUP_F_INV) ? S_HOLDS : S_NEXT;
}

/* ------------------------------------------------------------ rules */

/* Can this rule send the packet anywhere?  Rules with no verdict are skipped. */
static bool rule_decides(const struct fw_ruleset *rs, const struct fw_rule *ru, uint8_t family)
{
	for (uint32_t i = 0; i < ru->n; i++) {
		const struct fw_expr *e = &rs->exprs[ru->first + i];
		struct fw_answer a;

		switch (e->kind) {
		case FX_IMM:
		case FX_LOOKUP:
			if (e->dreg == FW_REG_VERDICT)
				return true;
			break;
		case FX_REJECT:
		case FX_QUEUE:
		case FX_OTHER:
			return true;
		case FX_TARGET:
			if (fw_compat_target(e, fw_bytes_at(rs, e->info), family, &a) != FT_NOP)
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

static enum step verdict_step(int verdict)
{
	switch (verdict) {
	case NF_ACCEPT:
		return S_ACCEPT;
	case NF_DROP:
		return S_DROP;
	case NFT_JUMP:
		return S_JUMP;
	case NFT_GOTO:
		return S_GOTO;
	case NFT_RETURN:
		return S_RETURN;
	case NFT_CONTINUE:
	case NFT_BREAK:
		return S_NEXT;
	default:
		return S_QUEUED;	/* NF_QUEUE and the like */
	}
}

enum step fw_exec_rule(struct run *r, const struct fw_chain *c, size_t ri, size_t *target,
		       struct fw_answer *a)
{
	const struct fw_rule *ru = &r->rs->rules[ri];

	if (!rule_decides(r->rs, ru, r->view.family))
		return S_NEXT;
	for (size_t i = 0; i < REG_BYTES; i++)
		r->reg[i] = (struct rbyte){ .own = true, .sym = (uint32_t)i + 1 };
	for (uint32_t x = 0; x < ru->n; x++) {
		const struct fw_expr *e = &r->rs->exprs[ru->first + x];
		const uint8_t *info = fw_bytes_at(r->rs, e->info);
		enum step st = S_HOLDS;
		int verdict = NFT_CONTINUE;
		int v;

		switch (e->kind) {
		case FX_NOP:
			break;
		case FX_MAYBE:
			v = decide_bool(r, test_key("maybe", NULL, 0, &ri, sizeof(ri), x));
			if (v == PENDING)
				return S_PENDING;
			if (!v)
				return S_NEXT;
			break;
		case FX_PAYLOAD:
			load_payload(r, e);
			break;
		case FX_META:
			if (!load_meta(r, e))
				return S_NEXT;
			break;
		case FX_CT:
			if (!load_ct(r, e))
				return S_NEXT;
			break;
		case FX_FIB:
			load_fib(r, e);
			break;
		case FX_LOADSAME:
			set_unknown(r, e->dreg, e->len ? e->len : 16, e->name, e->key, e->offset,
				    false, F_NONE);
			break;
		case FX_NOSOCKET:
			return S_NEXT;
		case FX_CMP:
			st = do_cmp(r, e);
			break;
		case FX_RANGE:
			st = do_range(r, e);
			break;
		case FX_BITWISE:
			do_bitwise(r, e);
			break;
		case FX_BYTEORDER:
			do_byteorder(r, e);
			break;
		case FX_LOOKUP:
			st = do_lookup(r, e, &verdict, target);
			if (st == S_JUMP) {
				st = verdict_step(verdict);
				if ((st == S_JUMP || st == S_GOTO) && *target == SIZE_MAX) {
					snprintf(r->why, sizeof(r->why),
						 "a verdict map jumps to a chain that was not read");
					return S_UNKNOWN;
				}
				if (st != S_NEXT)
					return st;
				return S_NEXT;
			}
			break;
		case FX_IMM:
			if (e->dreg != FW_REG_VERDICT) {
				if (reg_ok(e->dreg, e->data.len))
					set_known(&r->reg[e->dreg * 4], fw_bytes_at(r->rs, e->data),
						  e->data.len);
				break;
			}
			st = verdict_step(e->verdict);
			if (st == S_JUMP || st == S_GOTO) {
				char name[FW_NAME_MAX];

				snprintf(name, sizeof(name), "%.*s", (int)e->info.len, (const char *)info);
				*target = fw_find_chain(r->rs, c->family, c->table, name);
				if (*target == SIZE_MAX) {
					snprintf(r->why, sizeof(r->why), "a jump to chain \"%s\", "
						 "which was not read", name);
					return S_UNKNOWN;
				}
			}
			if (st == S_QUEUED)
				snprintf(r->why, sizeof(r->why), "a verdict that hands the packet "
					 "elsewhere (queue)");
			if (st == S_NEXT)
				return S_NEXT;	/* continue or break: this rule ends */
			return st;
		case FX_REJECT:
			fw_reject_answer(e->key, e->op, r->view.family, a);
			if (a->kind == FA_UNKNOWN) {
				snprintf(r->why, sizeof(r->why), "%s", a->why);
				return S_UNKNOWN;
			}
			return S_ANSWER;
		case FX_MATCH:
			switch (fw_compat_match(e, info, &r->view)) {
			case FC_TRUE:
				break;
			case FC_FALSE:
				return S_NEXT;
			case FC_SHARED:
				v = decide_bool(r, test_key(e->name, NULL, 0, info, e->info.len,
							    e->key));
				if (v == PENDING)
					return S_PENDING;
				if (!v)
					return S_NEXT;
				break;
			case FC_UNKNOWN:
				snprintf(r->why, sizeof(r->why), "the xtables match \"%s\" (rev %u)",
					 e->name, e->key);
				return S_UNKNOWN;
			}
			break;
		case FX_TARGET:
			switch (fw_compat_target(e, info, r->view.family, a)) {
			case FT_NOP:
				break;
			case FT_ANSWER:
				return S_ANSWER;
			case FT_ACCEPT:
				return S_ACCEPT;
			case FT_DROP:
				return S_DROP;
			case FT_RETURN:
				return S_RETURN;
			case FT_UNKNOWN:
				snprintf(r->why, sizeof(r->why), "the xtables target \"%s\"", e->name);
				return S_UNKNOWN;
			}
			break;
		case FX_QUEUE:
			snprintf(r->why, sizeof(r->why), "the \"%s\" statement hands the packet "
				 "elsewhere or rewrites it", e->name);
			return S_QUEUED;
		case FX_OTHER:
			snprintf(r->why, sizeof(r->why), "the expression \"%s\"", e->name);
			return S_UNKNOWN;
		}
		if (st != S_HOLDS)
			return st;
	}
	return S_NEXT;
}

