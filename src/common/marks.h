/*
 * marks.h - the packet and conntrack mark bits knockgw uses, shared by the
 * rules (nftrules.c) and the data path (server.c, pending.c).
 *
 * The packet mark bits in `mask` (rules.mark_mask) carry small codes
 * between our rules and the daemon:
 *   - a valid integrity SYN goes back with NF_REPEAT and INTEG there: our
 *     chain runs again, and a rule that also checks the packet is a SYN sets
 *     the flow's conntrack bit, clears the code and lets it go on through
 *     the chain (to be queued once more and let through), never accepting
 *     on the mark alone.  A verdict cannot set the conntrack mark directly
 *     (that needs the NFQA_CT glue, CONFIG_NETFILTER_NETLINK_GLUE_CT, which
 *     kernels such as this project's build machine lack), and ctnetlink
 *     cannot reach the SYN's entry before it is confirmed.  Clearing the
 *     bit later is done over ctnetlink (ctnl_set_mark), not by a mark;
 *   - rules that queue put REPLY, INVALID or NOCONN there, so the daemon
 *     knows why a packet came; the integrity rule clears the field;
 *   - the daemon lets a SYN to a protected port through with ACCEPTED
 *     there: the nat rule after the queue sends every other SYN to that
 *     port (one the daemon refused, or one no daemon saw) to a closed port,
 *     and lets this one go, clearing the code.  The knock rules clear our
 *     bits before they queue, so ACCEPTED only comes from a verdict;
 *   - the knock rule for new SYNs from outside puts NEWSYN there: such a
 *     SYN is one the nat rule can refuse, so for a routed host (forward)
 *     the daemon refuses it by letting it go on unmarked, to the host's
 *     own closed port;
 *   - the gateway client role's SYN rule puts FWD there: a SYN this host
 *     routes, from a knock entry's `from` prefix (the daemon hands it back
 *     with our bits cleared).
 * The conntrack bit `ct_integ` (rules.ct_mark_bit) marks a flow that awaits
 * its integrity bytes.  Both are configurable so that knockgw can live
 * beside other users of marks.
 *
 * Conntrack labels (rules.ct_label = N): the client role's user translation
 * path keeps a flow's shift in label bits N+1..N+32 of the flow's conntrack
 * entry and sets bit N to say it is a flow it translates (its rules match
 * that bit).  The shift takes 32 bits, which would fill the whole conntrack
 * mark that other software shares; 128 label bits leave room.  Labels are
 * handled as the kernel reads and writes them, over ctnetlink and in nft
 * registers: four 32-bit words in host order, bit b at b % 32 of word b / 32
 * (nft's `ct label b` on a little-endian host).
 * Pure: no I/O.
 */
#ifndef KNOCKGW_MARKS_H
#define KNOCKGW_MARKS_H

#include <stdbool.h>
#include <stdint.h>

enum {
	MARKS_MARK_MASK_DEFAULT = 0x7f000000,
	MARKS_CTMARK_DEFAULT = 0x40000000,
	MARKS_MARK_BITS_MIN = 3,		/* seven codes and "none" */
	MARKS_LABEL_WORDS = 4,		/* 128 conntrack label bits */
	MARKS_LABEL_BITS = 33,		/* ours: the flag, then the shift */
	MARKS_CTLABEL_DEFAULT = 95,	/* bits 95..127 */
	MARKS_CTLABEL_MAX = 32 * MARKS_LABEL_WORDS - MARKS_LABEL_BITS,
};

struct marks {
	uint32_t mask;		/* packet mark bits of ours */
	uint32_t integ;		/* valid integrity SYN: flag the flow */
	uint32_t reply;		/* the output rule's: the service's integrity segment */
	uint32_t invalid;	/* a rule's: conntrack called it invalid */
	uint32_t noconn;	/* a rule's: conntrack knows no connection for it */
	uint32_t accepted;	/* the daemon's: a SYN it let through */
	uint32_t newsyn;	/* a rule's: a new SYN from outside (nat can refuse it) */
	uint32_t fwd;		/* the gateway client's rule: a routed SYN to knock */
	uint32_t ct_integ;	/* conntrack mark bit: the flow awaits its bytes */
};

/*
 * Codes 1..7 at the lowest bit of mask.  0, or -EINVAL when mask is not one
 * run of at least MARKS_MARK_BITS_MIN bits or ct_bit is not exactly one bit.
 */
int marks_make(uint32_t mask, uint32_t ct_bit, struct marks *ret);

/* The code a mark carries (0: none of ours). */
static inline uint32_t marks_code(const struct marks *m, uint32_t mark)
{
	return mark & m->mask;
}

/* The packet's own mark: ours cleared, the rest kept. */
static inline uint32_t marks_own(const struct marks *m, uint32_t mark)
{
	return mark & ~m->mask;
}

/*
 * The labels of a flow shifted by shift (our flag set), and the mask of our
 * bits, for a write that leaves every other bit alone.  A base (N) above
 * MARKS_CTLABEL_MAX gives an empty mask (and marks_label_get() false).
 */
void marks_label_put(unsigned base, uint32_t shift, uint32_t ret_val[static MARKS_LABEL_WORDS],
		     uint32_t ret_mask[static MARKS_LABEL_WORDS]);

/* A flow's shift from its labels: true when our flag is set. */
bool marks_label_get(unsigned base, const uint32_t val[static MARKS_LABEL_WORDS],
		     uint32_t *ret_shift);

#endif
