/*
 * fwrun.h - the state of one packet's run through the firewall judge's
 * interpreter (fwexec.h), shared by the interpreter and its loads and
 * lookups: registers, the world's variables, the step a rule ends in.
 *
 * Registers hold, byte by byte, a known value or an unknown one named by
 * a symbol: shared (the same bytes in both packets: the source address,
 * the interface) or own (bytes that may differ and are not known: the
 * mark under knockgw's bits).  A test on shared bytes is a variable of
 * the world; on meeting one the world does not assign, the rule stops
 * with S_PENDING and the values it may take, and the driver starts a
 * world for each.  Pure.
 */
#ifndef KNOCKGW_FWRUN_H
#define KNOCKGW_FWRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/fw/fwcompat.h"
#include "kernel/fw/fwjudge.h"
#include "kernel/fw/fwrules.h"

enum {
	MAX_VARS = 48,		/* variables one world assigns */
	MAX_VALS = 64,		/* values one variable may take (a map's distinct data) */
	MAX_DEPTH = 16,		/* jumps inside one another (the kernel's limit) */
	MAX_STEPS = 100000,	/* rules one packet meets */
	REG_BYTES = FW_REG_SLOTS * 4,
	LO_IFINDEX = 1,
	CT_DIR_ORIGINAL = 0,	/* CT_DIR_ORIGINAL */
	CT_DIR_REPLY = 1,
	PRI_CONNTRACK = -200,	/* PRI_CONNTRACK */
	PRI_NAT_DST = -100,	/* PRI_NAT_DST: the prerouting nat hook, DNAT */
	PRI_NAT_SRC = 100,	/* PRI_NAT_SRC: the input nat hook */
	ARPHRD_LOOPBACK_ = 772,
	PROTO_TCP = 6,
};

/* What a register byte holds; the field tags let "not loopback" be decided. */
enum field { F_NONE, F_IIF, F_IIFNAME, F_IIFTYPE };

struct rbyte {
	bool known;
	bool own;		/* unknown, and may differ between the two packets */
	uint8_t v;
	uint8_t field;		/* enum field, for whole loads of it */
	uint32_t sym;		/* unknown: what it is */
};

struct world {
	size_t n;
	uint64_t key[MAX_VARS];
	int16_t val[MAX_VARS];
};

/* One packet's run through the chains in one world. */
struct run {
	const struct fw_ruleset *rs;
	const struct fw_probe *p;
	struct world *w;
	struct fw_view view;
	struct rbyte reg[REG_BYTES];
	unsigned steps;
	/* A variable the world does not assign yet, and its values. */
	bool pending;
	uint64_t pkey;
	int npvals;
	int16_t pvals[MAX_VALS];
	char why[FW_WHY_LEN];
	/* The rule that last accepted the packet (chain, rule index), or -1. */
	long acc_chain, acc_rule;
};

/* What one rule does. */
enum step { S_HOLDS, S_NEXT, S_ACCEPT, S_DROP, S_ANSWER, S_JUMP, S_GOTO, S_RETURN, S_PENDING,
	    S_UNKNOWN, S_QUEUED };

/* decide()'s answer while the world does not assign the variable yet. */
#define PENDING INT32_MIN
/* test_result()'s answer for a test it cannot decide. */
#define UNKNOWN_V (INT32_MIN + 1)

enum tri { T_FALSE, T_TRUE, T_SHARED, T_OWN };

/* Symbols, registers and worlds. */
uint64_t fw_fnv(uint64_t h, const void *p, size_t n);
uint32_t fw_sym(const char *tag, uint32_t a, uint32_t b, uint32_t i);
bool fw_reg_ok(uint8_t slot, size_t n);
void fw_set_known(struct rbyte *r, const uint8_t *v, size_t n);
/* n unknown bytes from slot named tag (a, b): shared, or the packet's own when own. */
void fw_set_unknown(struct run *r, uint8_t slot, size_t n, const char *tag, uint32_t a,
		    uint32_t b, bool own, enum field f);
/* What n register bytes hold: all known (T_TRUE), some own (T_OWN), or shared unknowns. */
enum tri fw_reg_state(const struct rbyte *b, size_t n);
/* The world's value of a variable, or PENDING (its values kept in r for the driver). */
int fw_decide(struct run *r, uint64_t key, int nvals, const int16_t *vals);
int fw_decide_bool(struct run *r, uint64_t key);
/* The variable of a test on register bytes: their symbols and values, and the operand. */
uint64_t fw_test_key(const char *what, const struct rbyte *b, size_t n, const void *operand,
		     size_t olen, uint32_t extra);

#endif
