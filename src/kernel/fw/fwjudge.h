/*
 * fwjudge.h - does this host's firewall treat a refused SYN like a SYN to
 * an unused port?  Pure: it follows two packets through a ruleset read
 * into plain data (fwrules.h) and compares what each one gets.
 *
 * A refused SYN to a protected port P is redirected by knockgw's nat rule
 * to rules.refuse_port R: from the nat hook (prerouting, priority -100)
 * on, the host's chains see a new connection to port R, DNAT'ed (ct status
 * dnat), carrying knockgw's mark code; before it, a SYN to P.  The other
 * packet is a SYN to an unused port U of this host (nothing listens, no
 * DNAT; knockgw's closed ports' nat rewrites its source port at input
 * priority 100, which the judge does not follow: a filter chain of the
 * host's past that priority is rare).  Both come from the same remote
 * prober: same source, interface, TCP options; every field but the port
 * (and what the redirect changed) is alike, unknown but equal for the two.
 *
 * The judge walks, for the probe's family, the base chains of other tables
 * that such a packet meets on its way in (netdev ingress, prerouting and
 * input filter chains, by priority; nat chains and knockgw's own table are
 * left out), rule by rule, with jumps, gotos, returns and policies.  A
 * condition it can decide (ports, ct state and status, the protocol, "not
 * loopback") is decided; one that depends on what is alike for both (the
 * source address, a rate limit) is a variable both packets share, and
 * every combination of such variables is followed (bounded); one that
 * depends on what differs and is not known (a packet mark under knockgw's
 * bits, an expression it does not know) makes that packet's answer
 * unknown.  Each packet ends in an answer: accepted (the kernel's TCP
 * answers: an RST, since nothing listens on R nor on U), dropped
 * (silence), rejected (an RST or an ICMP error from a reject rule),
 * queued elsewhere, or unknown.
 *
 * Result: ALIKE when in every combination both get the same answer;
 * DIFFER when some combination gives different answers (the pair shown is
 * one); UNSURE when no difference was found but some answer was unknown.
 */
#ifndef KNOCKGW_FWJUDGE_H
#define KNOCKGW_FWJUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/fw/fwrules.h"

enum {
	FW_WHY_LEN = 160,
	FW_MAX_WORLDS = 4096,	/* combinations of shared conditions followed, at most */
};

enum fw_answer_kind {
	FA_KERNEL,	/* accepted: the kernel's TCP answers (RST: nothing listens) */
	FA_SILENT,	/* dropped */
	FA_RST,		/* a reject rule's TCP reset */
	FA_ICMP,	/* a reject rule's ICMP error */
	FA_QUEUED,	/* queued to user space, or rewritten: not followed */
	FA_UNKNOWN,	/* the judge could not follow it */
};

/* One of the two packets. */
struct fw_probe {
	uint8_t family;		/* NFPROTO_IPV4 or NFPROTO_IPV6 */
	uint16_t dport;		/* as dialled (the protected port P, or U) */
	uint16_t dport_nat;	/* from the nat hook on (R for a refused SYN; U) */
	bool dnat;		/* redirected: ct status dnat, the reply's source port R */
	uint32_t mark_mask;	/* knockgw's mark bits, which a refused SYN may carry (0: none) */
	/*
	 * knockgw answers it itself, whatever the rules: on_fail "drop"
	 * (silence, FA_SILENT), or with fail_open, where no nat rule refuses
	 * and the daemon sends an RST built like the kernel's (FA_KERNEL).
	 */
	bool fixed;
	enum fw_answer_kind fixed_kind;
};

struct fw_answer {
	enum fw_answer_kind kind;
	uint8_t icmp_type, icmp_code;	/* FA_ICMP, in the probe's family */
	int32_t chain;			/* the chain that decided (index), or -1: none did */
	int32_t rule;			/* the rule (index), or -1: the chain's policy */
	char why[FW_WHY_LEN];		/* FA_UNKNOWN, FA_QUEUED: what stopped the judge */
};

enum fw_result { FW_ALIKE, FW_DIFFER, FW_UNSURE };

struct fw_judgement {
	enum fw_result result;
	struct fw_answer refused, unused;	/* a pair that shows the result */
	size_t worlds;			/* combinations of shared conditions followed */
	bool varied;			/* the answers depend on shared conditions */
	bool capped;			/* FW_MAX_WORLDS reached: UNSURE */
};

/*
 * Judges refused against unused through rs.  skip_table: knockgw's own
 * table (family inet), left out.  0, or -ENOMEM.
 */
int fw_judge(const struct fw_ruleset *rs, const char *skip_table, const struct fw_probe *refused,
	     const struct fw_probe *unused, struct fw_judgement *j);

/* Is the answer the same a prober sees (kind, and ICMP type and code)? */
bool fw_answer_same(const struct fw_answer *a, const struct fw_answer *b);

/* "silence (dropped)", "the kernel's RST (accepted)", "ICMP ... (rejected)", ... */
void fw_answer_text(const struct fw_answer *a, uint8_t family, char *buf, size_t len);

/*
 * Where an answer was decided: "rule handle 7 of chain input in table inet
 * filter", "policy drop of chain INPUT in table ip filter", "no chain
 * decides it".
 */
void fw_where_text(const struct fw_ruleset *rs, const struct fw_answer *a, char *buf, size_t len);

/*
 * Is port mentioned in rs as a 2-byte constant (a compare, a range bound,
 * a set element)?  The check picks unused ports no rule names.
 */
bool fw_port_mentioned(const struct fw_ruleset *rs, uint16_t port);

#endif
