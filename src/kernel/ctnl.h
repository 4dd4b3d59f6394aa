/*
 * ctnl.h - conntrack entries for client-role flows (and the server role's
 * integrity bit), over ctnetlink.
 *
 * The kernel translation path: before a knocked SYN passes conntrack, the
 * daemon creates the flow's entry itself with a sequence adjustment
 * (CTA_SEQ_ADJ_ORIG: correction position = the kernel's ISN, offset = knock
 * ISN - kernel ISN) and then accepts the SYN unchanged.  nf_conntrack_seqadj
 * then rewrites the SYN and every later packet of the flow, both ways (seq
 * out, ack and SACK in), at line rate and even with the daemon gone.  The
 * entry must exist before the SYN is confirmed: the kernel ignores seqadj
 * changes to an entry it created itself.  The only module that speaks
 * ctnetlink.
 */
#ifndef KNOCKGW_CTNL_H
#define KNOCKGW_CTNL_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/marks.h"

struct ctnl;

struct ct_flow {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];	/* original direction, network order */
	uint16_t sport, dport;		/* host order */
	bool snat;			/* gateway: source NAT to snat_addr (gwnat.h) */
	uint8_t snat_addr[16];
};

struct ctnl *ctnl_open(void);
void ctnl_close(struct ctnl *c);

/* Conntrack label bits to write: those set in mask take val's (marks.h). */
struct ct_labels {
	uint32_t val[MARKS_LABEL_WORDS], mask[MARKS_LABEL_WORDS];
};

/*
 * Creates the entry for flow in state SYN_SENT (with f->snat, source NAT'ed
 * to f->snat_addr, the port kept unless taken).  With seqadj, the kernel
 * shifts the flow by delta from kernel_isn on; with labels (may be NULL),
 * the entry gets those label bits and keeps every other one clear (the
 * user path keeps its shift there).  Labels need the extension active in
 * the namespace (some rule that uses `ct label`): without it the kernel
 * makes the entry without them and says nothing.  0, -EEXIST when an
 * entry for the tuple exists, or another -errno.
 */
int ctnl_create(struct ctnl *c, const struct ct_flow *f, bool seqadj, uint32_t kernel_isn,
		uint32_t delta, uint32_t timeout, const struct ct_labels *labels);

struct ct_info {
	bool has_seqadj;
	uint32_t pos, delta;		/* sequence adjustment, when present */
	uint32_t mark;			/* 0 when absent */
	uint32_t labels[MARKS_LABEL_WORDS];	/* 0 when absent (the kernel sends
								  none while every bit is clear) */
	uint8_t tcp_state;		/* enum tcp_conntrack; 0 (NONE) when absent */
};

/*
 * Reads one conntrack entry message (the kernel's answer to a get) into ret:
 * the mark, the labels, the original direction's sequence adjustment and
 * the TCP state, each taken only when present and well formed (labels:
 * whole 32-bit words, the first MARKS_LABEL_WORDS of them); attributes of
 * unknown types are skipped.
 * 0, or -EBADMSG when the message is shorter than its headers or its length
 * is not padded as the kernel pads it (ret untouched).
 * Pure: no I/O.
 */
int ctnl_parse_info(const struct nlmsghdr *nlh, struct ct_info *ret);

/* Reads the existing entry for f: 0, or -ENOENT when there is none. */
int ctnl_get(struct ctnl *c, const struct ct_flow *f, struct ct_info *ret);

int ctnl_delete(struct ctnl *c, const struct ct_flow *f);

/*
 * Sets the bits of mask in the existing entry's mark to those of mark (the
 * server role clears a flow's integrity bit this way once the service has
 * acknowledged the verified bytes).  0, -ENOENT when there is no entry, or
 * another -errno.
 */
int ctnl_set_mark(struct ctnl *c, const struct ct_flow *f, uint32_t mark, uint32_t mask);

/*
 * Counts the open TCP entries that carry a client-role translation: a
 * sequence adjustment (kernel path), or our label flag at bit label_base
 * (user path, marks.h).  -errno on failure.
 */
long ctnl_count_translated(struct ctnl *c, unsigned label_base);

#endif
