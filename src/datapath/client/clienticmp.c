/*
 * clienticmp.c - ICMP errors about translated flows (see clienticmp.h).
 */
#include <errno.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <string.h>

#include "common/bytes.h"
#include "common/csum.h"
#include "common/icmperr.h"
#include "datapath/client/clienticmp.h"
#include "datapath/client/seqrewrite.h"

enum { ICMP_CSUM_OFF = 2 };

void client_icmp(struct client *c, struct verdicts *out, const struct nfqueue_packet *p)
{
	struct icmperr_view v;
	struct ct_flow f;
	uint32_t delta;

	if (icmperr_parse(p->data, p->caplen, &v) != ICMPERR_OK) {
		c->cnt[CC_icmp_unread]++;
		verdict_accept(out, p->id);
		return;
	}
	/* The quote is the flow's own segment: its tuple is the original one. */
	memset(&f, 0, sizeof(f));
	f.family = v.family;
	f.sport = v.sport;
	f.dport = v.dport;
	memcpy(f.src, icmperr_src(p->data, &v), v.addr_len);
	memcpy(f.dst, icmperr_dst(p->data, &v), v.addr_len);
	/* The kernel path's sequence adjustment, or the user path's label. */
	if (client_flow_shift(c, &f, &delta) < 0 || delta == 0) {
		c->cnt[CC_icmp_passed]++;
		verdict_accept(out, p->id);
		return;
	}
	/* A verdict's packet replaces the whole one: it must all be here. */
	if (p->caplen != p->wirelen || v.icmp_caplen != v.icmp_len) {
		c->cnt[CC_icmp_unread]++;
		verdict_accept(out, p->id);
		return;
	}
	/* In place, in the receive buffer: the verdict copies it once. */
	seqrewrite_icmp(p->data, &v, delta);
	if (p->skbinfo & NFQA_SKB_CSUMNOTREADY)
		put_be16(p->data + v.icmp_off + ICMP_CSUM_OFF, csum_icmp_full(p->data, &v));
	c->cnt[CC_icmp_translated]++;
	verdict_replace(out, p->id, p->data, p->caplen, p->mark);
}
