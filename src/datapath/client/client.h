/*
 * client.h - the client role's data path: outgoing SYNs to configured
 * destinations get the knock ISN, and (translate = "user") every later
 * packet of those flows is shifted in user space.
 *
 * Kernel path (default): the SYN is queued before conntrack; the daemon
 * creates the flow's conntrack entry with a sequence adjustment (ctnl.h) and
 * accepts the SYN unchanged: the kernel rewrites it and the whole flow.
 * User path: the daemon writes the knock ISN into the SYN itself and
 * creates the entry with the shift in conntrack label bits of its own
 * (rules.ct_label, marks.h), never in a mark other software shares; each
 * worker keeps the shifts of the flows it saw in a table, which a restart
 * may lose: the labels are read back, by tuple, for a flow it does not
 * know.  Outgoing packets are shifted before conntrack sees them (output
 * and prerouting at raw priority) and incoming ones after, so conntrack
 * sees every packet as the wire carries it and judges the flow, RSTs
 * included, as it judges any other; seqrewrite.c applies the shift.  All
 * of a flow's packets, its SYN too, must come to one worker, as the queue
 * rules' balancing by address pair sees to.  Either way, a retransmitted
 * SYN keeps the first one's ISN and TSval (pinned).
 *
 * A struct client belongs to one queue thread, like struct server.
 */
#ifndef KNOCKGW_CLIENT_H
#define KNOCKGW_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/table/flowtable.h"
#include "common/log.h"
#include "common/pkt.h"
#include "config/conf.h"
#include "datapath/client/intent.h"
#include "datapath/verdict.h"
#include "kernel/ctnl.h"
#include "kernel/nfq.h"
#include "kernel/rawsock.h"

#define CLIENT_COUNTERS(X)                                                             \
	X(knocked, "SYNs given a knock ISN")                                           \
	X(retransmits, "retransmitted SYNs pinned to their first ISN and TSval")       \
	X(stale_replaced, "stale conntrack entries replaced")                          \
	X(ct_errors, "SYNs dropped because the conntrack entry could not be made")    \
	X(integrity_refused, "transparent connections refused: integrity needs knock-connect") \
	X(intents_used, "knock-connect integrity knocks")                              \
	X(no_entry, "queued packets matching no knock entry")                          \
	X(translated_out, "outgoing packets shifted in user space")                    \
	X(translated_in, "incoming packets shifted in user space")                     \
	X(untranslatable, "user-path packets dropped: not wholly captured")            \
	X(passed_as_is, "user-path packets of no translated flow, let through as they were") \
	X(shift_lookups, "user-path shifts read from conntrack labels (a flow this worker did not know)") \
	X(lookup_errors, "user-path packets dropped: conntrack could not tell their flow's shift") \
	X(icmp_translated, "ICMP errors about translated flows translated back")       \
	X(icmp_passed, "ICMP errors passed unchanged: their flow has no shift")        \
	X(icmp_unread, "ICMP errors passed unchanged: unreadable or not wholly captured") \
	X(pkt_errors, "malformed packets dropped")

enum client_counter {
#define X(name, desc) CC_##name,
	CLIENT_COUNTERS(X)
#undef X
	CC_MAX
};

struct client {
	const struct conf *conf;
	struct ctnl *ct;
	struct rawsock *rs;
	struct intent_table *intents;	/* shared with the control socket */
	struct flowtable syns;		/* recent SYNs: pins retransmissions */
	struct flowtable shifts;	/* user path: flows' shifts (client.c) */
	uint8_t nonce_key[16];		/* the nonce of SYNs without a timestamp */
	uint64_t mono, wall;		/* seconds; set by the caller */
	uint64_t cnt[CC_MAX];
	struct log_ratelimit rl;
	uint8_t buf[65536 + 256];	/* rewritten packet for the verdict */
};

int client_init(struct client *c, const struct conf *conf, struct ctnl *ct, struct rawsock *rs,
		struct intent_table *intents);
void client_free(struct client *c);

/*
 * The data path for packets the client role's rules queued, parsed into v;
 * each decision goes into out (verdict.h), which may point into p's bytes
 * or c->buf until the caller has carried it out.
 *
 * client_out(): going out, this host's at output or (routed) a routed
 * flow's at prerouting with the FWD code: a SYN gets its knock, the user
 * path's later packets their shift.  client_in(): the user path's
 * incoming packets, this host's at input or routed ones at forward.
 */
void client_out(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
		const struct pkt_view *v, bool routed);
void client_in(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
	       const struct pkt_view *v);

/* A packet of the client's rules that pkt_parse() refused: dropped, counted. */
void client_malformed(struct client *c, struct verdicts *out, const struct nfqueue_packet *p);

/* A packet no rule of ours queues from where it came: accepted, counted. */
void client_unqueued(struct client *c, struct verdicts *out, const struct nfqueue_packet *p);

void client_tick(struct client *c);

/*
 * The shift of the translated flow f: what the knock added to its outgoing
 * sequence numbers (knock ISN - kernel ISN), to be subtracted from the
 * acknowledgements coming back.  f is the flow's original direction as the
 * client sent it (a routed flow: the LAN host's source, before any NAT).
 * Kernel path: the conntrack entry's sequence adjustment; user path: where
 * the daemon keeps it (docs/DESIGN.md), read from conntrack again after a
 * restart.  Needs no conntrack entry attached to any packet, so it serves
 * packets conntrack calls invalid and ICMP errors quoting the flow.  0 and
 * *ret_delta, -ENOENT when f is no flow this path translates, or another
 * -errno (a conntrack request that failed).
 */
int client_flow_shift(struct client *c, const struct ct_flow *f, uint32_t *ret_delta);

/* Switches to a reloaded configuration; pinned SYNs and flows carry over. */
void client_set_conf(struct client *c, const struct conf *conf);

const char *client_counter_name(enum client_counter cc);

#endif
