/*
 * fwrules.c - the arrays of a struct fw_ruleset (see fwrules.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/nf_tables.h>

#include "kernel/fw/fwrules.h"

void fw_ruleset_free(struct fw_ruleset *rs)
{
	free(rs->chains);
	free(rs->rules);
	free(rs->exprs);
	free(rs->sets);
	free(rs->elems);
	free(rs->arena);
	memset(rs, 0, sizeof(*rs));
}

/* Room for one more of size bytes in *arr (n used of *cap), at most max. */
static void *grow(struct fw_ruleset *rs, void **arr, size_t *n, size_t *cap, size_t size,
		  size_t max)
{
	if (*n >= max) {
		rs->full = true;
		return NULL;
	}
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		void *p = reallocarray(*arr, c, size);

		if (!p) {
			rs->full = true;
			return NULL;
		}
		*arr = p;
		*cap = c;
	}
	return (char *)*arr + (*n)++ * size;
}

#define ADD(rs, field, count, cap, max, item)                                             \
	({                                                                                 \
		__typeof__(rs->field) slot_ = grow(rs, (void **)&rs->field, &rs->count,    \
						   &rs->cap, sizeof(*rs->field), max);     \
		if (slot_)                                                                 \
			*slot_ = *(item);                                                  \
		slot_;                                                                     \
	})

struct fw_chain *fw_add_chain(struct fw_ruleset *rs, const struct fw_chain *c)
{
	return ADD(rs, chains, nchains, cap_chains, FW_MAX_CHAINS, c);
}

struct fw_rule *fw_add_rule(struct fw_ruleset *rs, uint64_t handle)
{
	struct fw_rule r = { .handle = handle, .first = (uint32_t)rs->nexprs };

	return ADD(rs, rules, nrules, cap_rules, FW_MAX_RULES, &r);
}

struct fw_expr *fw_add_expr(struct fw_ruleset *rs, const struct fw_expr *e)
{
	struct fw_expr *x;

	if (rs->nrules == 0)
		return NULL;
	x = ADD(rs, exprs, nexprs, cap_exprs, FW_MAX_EXPRS, e);
	if (x)
		rs->rules[rs->nrules - 1].n++;
	return x;
}

struct fw_set *fw_add_set(struct fw_ruleset *rs, const struct fw_set *s)
{
	struct fw_set copy = *s;

	copy.first = (uint32_t)rs->nelems;
	copy.n = 0;
	return ADD(rs, sets, nsets, cap_sets, FW_MAX_SETS, &copy);
}

struct fw_elem *fw_add_elem(struct fw_ruleset *rs, const struct fw_elem *e)
{
	struct fw_elem *x;

	if (rs->nsets == 0)
		return NULL;
	x = ADD(rs, elems, nelems, cap_elems, FW_MAX_ELEMS, e);
	if (x)
		rs->sets[rs->nsets - 1].n++;
	return x;
}

struct fw_bytes fw_bytes_add(struct fw_ruleset *rs, const void *p, size_t len)
{
	struct fw_bytes b = { 0, 0 };

	if (len == 0)
		return b;
	if (len > UINT32_MAX / 2 || rs->narena + len > UINT32_MAX / 2) {
		rs->full = true;
		return b;
	}
	if (rs->narena + len > rs->cap_arena) {
		size_t c = rs->cap_arena ? rs->cap_arena : 4096;
		uint8_t *a;

		while (c < rs->narena + len)
			c *= 2;
		a = realloc(rs->arena, c);
		if (!a) {
			rs->full = true;
			return b;
		}
		rs->arena = a;
		rs->cap_arena = c;
	}
	memcpy(rs->arena + rs->narena, p, len);
	b.off = (uint32_t)rs->narena;
	b.len = (uint32_t)len;
	rs->narena += len;
	return b;
}

uint32_t fw_find_set(const struct fw_ruleset *rs, uint8_t family, const char *table,
		     const char *name)
{
	for (size_t i = 0; i < rs->nsets; i++) {
		const struct fw_set *s = &rs->sets[i];

		if (s->family == family && strcmp(s->table, table) == 0 &&
		    strcmp(s->name, name) == 0)
			return (uint32_t)i;
	}
	return UINT32_MAX;
}

size_t fw_find_chain(const struct fw_ruleset *rs, uint8_t family, const char *table,
		     const char *name)
{
	for (size_t i = 0; i < rs->nchains; i++) {
		const struct fw_chain *c = &rs->chains[i];

		if (c->family == family && strcmp(c->table, table) == 0 &&
		    strcmp(c->name, name) == 0)
			return i;
	}
	return SIZE_MAX;
}

uint8_t fw_reg_slot(uint32_t r)
{
	if (r == NFT_REG_VERDICT)
		return FW_REG_VERDICT;
	if (r >= NFT_REG_1 && r <= NFT_REG_4)
		return (uint8_t)((r - NFT_REG_1) * 4);
	if (r >= NFT_REG32_00 && r < NFT_REG32_00 + FW_REG_SLOTS)
		return (uint8_t)(r - NFT_REG32_00);
	return FW_REG_VERDICT;	/* no such register: nothing reads it back */
}
