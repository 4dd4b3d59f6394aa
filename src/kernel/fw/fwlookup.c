/*
 * fwlookup.c - set and map lookups for the firewall judge (see fwlookup.h):
 * exact elements, interval sets (boundaries, or start and end), and
 * concatenations of ranges field by field.  A key with shared unknown
 * bytes takes one value per distinct outcome among the elements its known
 * bytes agree with.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter/nf_tables.h>

#include "kernel/fw/fwlookup.h"

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
	if (fw_reg_ok(e->dreg, el->data.len))
		fw_set_known(&r->reg[e->dreg * 4], fw_bytes_at(r->rs, el->data), el->data.len);
	return S_HOLDS;
}

enum step fw_lookup(struct run *r, const struct fw_expr *e, int *verdict, size_t *target)
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
	if (!fw_reg_ok(e->sreg, n))
		return S_NEXT;
	b = &r->reg[e->sreg * 4];
	t = fw_reg_state(b, n);
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
			int v = fw_decide(r, fw_test_key("lookup", b, n, &e->set, sizeof(e->set), 0),
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

