/*
 * fwrules.h - other tables' rules as plain data, for the firewall check
 * (check_firewall.h): what fwread.c reads from the kernel and fwjudge.c judges.
 *
 * The model stays close to what the kernel holds (nf_tables expressions,
 * xtables matches and targets as iptables-nft writes them, sets and their
 * elements), so that reading is a copy and every interpretation is the
 * judge's.  Registers are 4-byte slots, numbered as NFT_REG32_00 = 0 (the
 * 16-byte NFT_REG_1..4 are slots 0, 4, 8, 12); the verdict register is
 * FW_REG_VERDICT.  Variable-length bytes (compare data, set keys, compat
 * info, chain and set names) live in one arena and are named by offset.
 *
 * Pure: no I/O; fwrules.c only grows and frees the arrays.
 */
#ifndef KNOCKGW_FWRULES_H
#define KNOCKGW_FWRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	FW_NAME_MAX = 64,	/* table, chain and set names (NFT_NAME_MAXLEN 256: longer ones are cut) */
	FW_REG_SLOTS = 16,	/* NFT_REG32_00..15 */
	FW_REG_VERDICT = 0xff,
	FW_REG_NONE = 0xfe,	/* a lookup with no destination (a plain set) */
	FW_DATA_MAX = 64,	/* the longest register value (NFT_REG_SIZE * 4) */
	/* Bounds on what one check reads: past them it cannot tell. */
	FW_MAX_CHAINS = 4096,
	FW_MAX_RULES = 65536,
	FW_MAX_EXPRS = 524288,
	FW_MAX_SETS = 4096,
	FW_MAX_ELEMS = 1048576,
};

enum fw_ex {
	FX_OTHER,	/* an expression the judge does not know (its name is kept) */
	FX_NOP,		/* counter, log, notrack, a set update, a mark set: no verdict */
	FX_MAYBE,	/* limit, quota, connlimit: may end the rule, the same for any port */
	FX_PAYLOAD,	/* load: base, offset, len -> dreg */
	FX_META,	/* load: key -> dreg */
	FX_CT,		/* load: key, dir -> dreg */
	FX_FIB,		/* load: result (key), flags -> dreg */
	FX_LOADSAME,	/* a load of something a port does not change (exthdr, osf, numgen, ...) */
	FX_NOSOCKET,	/* socket: no socket for either packet, so the rule ends */
	FX_CMP,		/* sreg op data */
	FX_RANGE,	/* sreg op [data, data2] */
	FX_BITWISE,	/* dreg = (sreg & data) ^ data2, len bytes (shifts: FX_OTHER) */
	FX_BYTEORDER,	/* dreg = byteorder(sreg): op, len, size (in key) */
	FX_LOOKUP,	/* sreg in set (dreg for a map); flags: NFT_LOOKUP_F_INV */
	FX_IMM,		/* dreg = data, or a verdict (dreg FW_REG_VERDICT) */
	FX_REJECT,	/* key: NFT_REJECT_* type, op: code */
	FX_MATCH,	/* xtables match (compat): name, rev (key), info */
	FX_TARGET,	/* xtables target (compat): name, rev (key), info */
	FX_QUEUE,	/* queue, synproxy, fwd, dup, tproxy, nat: the packet leaves the path */
};

/* Bytes in the arena: off, len. */
struct fw_bytes {
	uint32_t off, len;
};

struct fw_expr {
	enum fw_ex kind;
	char name[16];		/* the expression's name; a compat match's or target's */
	uint8_t sreg, dreg;	/* register slots (FW_REG_VERDICT for the verdict) */
	uint32_t key;		/* payload base, meta/ct key, fib result, reject type, compat rev,
				   byteorder op */
	uint32_t offset, len;	/* payload; bitwise/byteorder length; byteorder size in offset */
	uint32_t op;		/* cmp/range op (NFT_CMP_*), reject code */
	uint32_t flags;		/* fib flags, lookup flags, ct direction */
	int verdict;		/* immediate: NF_ACCEPT, NF_DROP, NFT_JUMP, ... */
	struct fw_bytes data, data2;	/* cmp/imm data, range from/to, bitwise mask/xor */
	struct fw_bytes info;	/* compat info; immediate's chain name */
	uint32_t set;		/* lookup: index into sets, or UINT32_MAX when not found */
};

struct fw_rule {
	uint64_t handle;
	uint32_t first, n;	/* exprs[first .. first + n) */
};

struct fw_chain {
	uint8_t family;		/* NFPROTO_* */
	char table[FW_NAME_MAX], name[FW_NAME_MAX];
	bool base;
	uint32_t hook;		/* NF_INET_* (base chains) */
	int32_t prio;
	char type[8];		/* "filter", "nat", "route" */
	int policy;		/* NF_ACCEPT or NF_DROP */
	uint32_t first, n;	/* rules[first .. first + n) */
};

struct fw_elem {
	struct fw_bytes key, key_end;	/* key_end.len 0: none */
	bool interval_end;		/* NFT_SET_ELEM_INTERVAL_END */
	int verdict;			/* verdict maps */
	struct fw_bytes chain;		/* ... jump/goto target */
	struct fw_bytes data;		/* data maps */
};

struct fw_set {
	uint8_t family;
	char table[FW_NAME_MAX], name[FW_NAME_MAX];
	uint32_t flags;			/* NFT_SET_* */
	uint32_t key_len, data_type, data_len;
	uint8_t nfields;		/* a concatenation's fields (0: one field) */
	uint8_t field_len[16];		/* ... each one's length in bytes */
	uint32_t first, n;		/* elems[first .. first + n) */
};

struct fw_ruleset {
	struct fw_chain *chains;
	size_t nchains, cap_chains;
	struct fw_rule *rules;
	size_t nrules, cap_rules;
	struct fw_expr *exprs;
	size_t nexprs, cap_exprs;
	struct fw_set *sets;
	size_t nsets, cap_sets;
	struct fw_elem *elems;
	size_t nelems, cap_elems;
	uint8_t *arena;
	size_t narena, cap_arena;
	bool full;			/* a bound was reached: the model is incomplete */
};

void fw_ruleset_free(struct fw_ruleset *rs);

/*
 * Appends one item (copied) and returns it, or NULL (out of memory, or past
 * a bound: rs->full).  Rules and expressions are appended in order: a rule
 * owns the expressions added after it.
 */
struct fw_chain *fw_add_chain(struct fw_ruleset *rs, const struct fw_chain *c);
struct fw_rule *fw_add_rule(struct fw_ruleset *rs, uint64_t handle);
struct fw_expr *fw_add_expr(struct fw_ruleset *rs, const struct fw_expr *e);
struct fw_set *fw_add_set(struct fw_ruleset *rs, const struct fw_set *s);
struct fw_elem *fw_add_elem(struct fw_ruleset *rs, const struct fw_elem *e);

/* Copies len bytes into the arena; {0, 0} for nothing (or on failure: rs->full). */
struct fw_bytes fw_bytes_add(struct fw_ruleset *rs, const void *p, size_t len);
static inline const uint8_t *fw_bytes_at(const struct fw_ruleset *rs, struct fw_bytes b)
{
	return rs->arena + b.off;
}

/* The set named name in table (family, table), or UINT32_MAX. */
uint32_t fw_find_set(const struct fw_ruleset *rs, uint8_t family, const char *table,
		     const char *name);

/* The chain named name in (family, table), or SIZE_MAX. */
size_t fw_find_chain(const struct fw_ruleset *rs, uint8_t family, const char *table,
		     const char *name);

/* Normalised register slot of an nft register number (NFT_REG_*), or FW_REG_VERDICT. */
uint8_t fw_reg_slot(uint32_t nft_reg);

#endif
