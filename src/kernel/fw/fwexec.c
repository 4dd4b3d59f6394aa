/*
 * fwexec.c - the firewall judge's rule interpreter (see fwexec.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>

#include "kernel/fw/fwexec.h"
#include "kernel/fw/fwload.h"
#include "kernel/fw/fwlookup.h"

/* ------------------------------------------------------------ tests */

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
	return fw_decide_bool(r, key);
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

	if (!fw_reg_ok(e->sreg, n))
		return S_NEXT;	/* a malformed rule the kernel would not hold */
	b = &r->reg[e->sreg * 4];
	t = fw_reg_state(b, n);
	if (t == T_TRUE)
		return cmp_holds(e->op, bytecmp(b, d, n)) ? S_HOLDS : S_NEXT;
	if (t == T_SHARED) {
		t = loopback_test(b, n, e->op, d);
		if (t == T_TRUE)
			return S_HOLDS;
		if (t == T_FALSE)
			return S_NEXT;
	}
	return test_step(test_result(r, t, fw_test_key("cmp", b, n, d, n, e->op)));
}

static enum step do_range(struct run *r, const struct fw_expr *e)
{
	const uint8_t *lo = fw_bytes_at(r->rs, e->data), *hi = fw_bytes_at(r->rs, e->data2);
	size_t n = e->data.len;
	const struct rbyte *b;
	enum tri t;

	if (!fw_reg_ok(e->sreg, n) || e->data2.len != n)
		return S_NEXT;
	b = &r->reg[e->sreg * 4];
	t = fw_reg_state(b, n);
	if (t == T_TRUE) {
		bool in = bytecmp(b, lo, n) >= 0 && bytecmp(b, hi, n) <= 0;

		return in == (e->op == NFT_RANGE_EQ) ? S_HOLDS : S_NEXT;
	}
	return test_step(test_result(r, t, fw_test_key("range", b, n, lo, n,
						    e->op ^ (uint32_t)fw_fnv(0, hi, n))));
}

static void do_bitwise(struct run *r, const struct fw_expr *e)
{
	const uint8_t *mask = fw_bytes_at(r->rs, e->data), *xor = fw_bytes_at(r->rs, e->data2);
	size_t n = e->len;
	struct rbyte out[REG_BYTES];

	if (!fw_reg_ok(e->sreg, n) || !fw_reg_ok(e->dreg, n) || e->data.len < n || e->data2.len < n)
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

	if (!fw_reg_ok(e->sreg, n) || !fw_reg_ok(e->dreg, n) || (size != 2 && size != 4 && size != 8) ||
	    n % size)
		return;
	/* ntoh and hton are the same swap on a little-endian host. */
	for (size_t w = 0; w < n; w += size)
		for (size_t i = 0; i < size; i++)
			out[w + i] = r->reg[e->sreg * 4 + w + size - 1 - i];
	memcpy(&r->reg[e->dreg * 4], out, n * sizeof(*out));
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
			v = fw_decide_bool(r, fw_test_key("maybe", NULL, 0, &ri, sizeof(ri), x));
			if (v == PENDING)
				return S_PENDING;
			if (!v)
				return S_NEXT;
			break;
		case FX_PAYLOAD:
			fw_load_payload(r, e);
			break;
		case FX_META:
			if (!fw_load_meta(r, e))
				return S_NEXT;
			break;
		case FX_CT:
			if (!fw_load_ct(r, e))
				return S_NEXT;
			break;
		case FX_FIB:
			fw_load_fib(r, e);
			break;
		case FX_LOADSAME:
			fw_set_unknown(r, e->dreg, e->len ? e->len : 16, e->name, e->key, e->offset,
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
			st = fw_lookup(r, e, &verdict, target);
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
				if (fw_reg_ok(e->dreg, e->data.len))
					fw_set_known(&r->reg[e->dreg * 4], fw_bytes_at(r->rs, e->data),
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
				v = fw_decide_bool(r, fw_test_key(e->name, NULL, 0, info, e->info.len,
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

