/*
 * fwrun.c - one packet's run through the firewall judge's interpreter
 * (see fwrun.h): symbols for unknown bytes, registers, and the world's
 * variables.  Pure.
 */
#include <stdint.h>
#include <string.h>

#include "kernel/fw/fwrun.h"

/* ------------------------------------------------------------ symbols */

uint64_t fw_fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint32_t fw_sym(const char *tag, uint32_t a, uint32_t b, uint32_t i)
{
	uint64_t h = fw_fnv(0xcbf29ce484222325ULL, tag, strlen(tag));

	h = fw_fnv(h, &a, sizeof(a));
	h = fw_fnv(h, &b, sizeof(b));
	h = fw_fnv(h, &i, sizeof(i));
	return (uint32_t)(h ^ (h >> 32)) | 1;
}

void fw_set_known(struct rbyte *r, const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r[i] = (struct rbyte){ .known = true, .v = v[i] };
}

/* n unknown bytes named tag (a, b): shared, or the packet's own when own. */
void fw_set_unknown(struct run *r, uint8_t slot, size_t n, const char *tag, uint32_t a,
		    uint32_t b, bool own, enum field f)
{
	for (size_t i = 0; i < n && slot * 4u + i < REG_BYTES; i++)
		r->reg[slot * 4 + i] = (struct rbyte){
			.own = own, .field = (uint8_t)f,
			.sym = fw_sym(tag, a, b, (uint32_t)i + (own ? 0x100u * (r->p->dport + 1u) : 0)),
		};
}

bool fw_reg_ok(uint8_t slot, size_t n)
{
	return slot != FW_REG_VERDICT && slot * 4u + n <= REG_BYTES;
}

/* ------------------------------------------------------------ worlds */

/*
 * The world's value of variable key, or, unassigned, PENDING (the values
 * it may take kept for the driver).
 */
int fw_decide(struct run *r, uint64_t key, int nvals, const int16_t *vals)
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

int fw_decide_bool(struct run *r, uint64_t key)
{
	static const int16_t tf[] = { 1, 0 };

	return fw_decide(r, key, 2, tf);
}

/* The key of a test on register bytes: the bytes' symbols and values, and the operand. */
uint64_t fw_test_key(const char *what, const struct rbyte *b, size_t n, const void *operand,
		     size_t olen, uint32_t extra)
{
	uint64_t h = fw_fnv(0xcbf29ce484222325ULL, what, strlen(what));

	for (size_t i = 0; i < n; i++) {
		uint32_t x = b[i].known ? b[i].v : b[i].sym;

		h = fw_fnv(h, &b[i].known, sizeof(b[i].known));
		h = fw_fnv(h, &x, sizeof(x));
	}
	h = fw_fnv(h, operand, olen);
	return fw_fnv(h, &extra, sizeof(extra));
}


/* What is in n register bytes from slot: all known, some own, or shared unknowns. */
enum tri fw_reg_state(const struct rbyte *b, size_t n)
{
	bool all = true;

	for (size_t i = 0; i < n; i++) {
		if (b[i].own)
			return T_OWN;
		all = all && b[i].known;
	}
	return all ? T_TRUE : T_SHARED;
}
