/*
 * pending.h - the server role's integrity flows, from a valid integrity
 * knock until the service's TCP has acknowledged the verified bytes.
 *
 * Part of the server's data path (server.c decides SYNs and calls in here
 * for everything of a flow the rules queue because its conntrack entry
 * carries the integrity bit (marks.h)); the server owns the object, and
 * acts on what it returns.  The guarantee: the service never reads a byte
 * of [ISN+1, ISN+1+integrity_len) that was not verified, and sends nothing
 * to the client (its banner) before the bytes are verified.
 *
 *   WAIT      client segments are held in the queue until the first
 *             integrity_len bytes are in, in any order, and so is a FIN
 *             (the service sees nothing of the stream, its end included,
 *             before the verdict); bare ACKs pass.  The service's segments
 *             that carry data are held too (a lucky guess of the 16-bit
 *             check learns nothing past the SYN-ACK).  Verified: all of
 *             them pass, in order.  Failed, conflicting, short, timed out:
 *             everything held is dropped and both ends are reset.
 *   VERIFIED  the bytes went through, but nothing says the service's TCP
 *             took them: it drops a segment for its own reasons (a stale
 *             timestamp, an unexpected TCP-MD5 option, a bad checksum) and
 *             then takes whatever covers the same range next.  So every
 *             client segment that covers any of the range must carry the
 *             verified bytes again (else: reset), until the service's
 *             acknowledgement covers the whole range; that segment goes
 *             back with the release code, which clears the conntrack flag.
 *   DONE      a short grace for segments queued before the flag cleared.
 *
 * In WAIT and VERIFIED, two things reset the flow whatever its bytes: an
 * urgent pointer that designates a byte of the range (the receiving TCP
 * would take that byte out of the stream, and the service would read one
 * from past the range in its place: integ.h), and a FIN inside the range
 * (the stream would end before the bytes the ISN covers).
 *
 * Held packets are capped per flow, per source and per queue (holdacct.h),
 * well under the queue's length: when the queue's share is used up, the
 * oldest unverified flow is reset to make room, and so it is when the
 * pending-flow table is full.
 */
#ifndef KNOCKGW_PENDING_H
#define KNOCKGW_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/table/flowtable.h"
#include "common/log.h"
#include "common/pkt.h"
#include "config/conf.h"
#include "datapath/server/holdacct.h"
#include "datapath/server/servercount.h"
#include "datapath/server/strays.h"
#include "datapath/verdict.h"
#include "kernel/ctnl.h"
#include "kernel/nfq.h"

/*
 * The integrity flows of one queue thread, owned by its server: their
 * table, what they hold, and the unknown flows' resets.  What it decides
 * goes into out (verdict.h) or comes back as a result; it calls nothing of
 * its owner's.  It counts into the owner's counters and logs through the
 * owner's rate limits; now is the owner's clock, in seconds.
 */
struct pending {
	const struct conf *conf;
	struct server_counters *cnt;
	struct ctnl *ct;		/* asks and clears a flow's conntrack bit (may be NULL) */
	struct log_ratelimit *rl;	/* peers' events */
	struct log_ratelimit *rl_full;	/* "table full" warnings */
	struct flowtable table;		/* the flows (pending_int.h) */
	struct holdacct acct;		/* held packets, per queue and per source */
	struct strays strays;		/* unknown flows' segments: resets bounded */
	size_t held_bytes, held_bytes_max;
	uint64_t next_order;		/* flows in the order they started */
	uint64_t now;			/* the clock of the call in progress */
};

/* Sizes the flow table and the hold caps from c; 0 or -errno. */
int pending_init(struct pending *pd, const struct conf *c, unsigned nqueues,
		 struct server_counters *cnt, struct ctnl *ct, struct log_ratelimit *rl,
		 struct log_ratelimit *rl_full);
void pending_free(struct pending *pd);

/*
 * The most entries a call below puts in out: every held packet's verdict,
 * and per flow its held count and its abort, with room for the packet's own.
 */
size_t pending_verdicts_max(const struct pending *pd);

enum pending_start {
	PENDING_STARTED,	/* the flow (re)started: the SYN has its verdict */
	PENDING_AGAIN,		/* a retransmission of a waiting flow's SYN: has its verdict */
	PENDING_LIVE,		/* a SYN of a connection past its handshake: dropped, counted */
	PENDING_REFUSED,	/* no flow could be started: the caller refuses the knock */
};

/*
 * A verified integrity knock (entry pi, key, epoch, and the destination it
 * verified for: the SYN's own or one of the entry's public ones) for the
 * SYN p: starts (or restarts) its flow and gives the SYN its verdict.  The
 * flow's bytes are checked later with that same key, epoch and destination.
 * A SYN whose connection conntrack holds past its handshake (established
 * or closing) starts nothing: a copy of a verified connection's SYN must
 * not put it under check again.  Refusals are counted here.
 */
enum pending_start pending_start(struct pending *pd, struct verdicts *out,
				 const struct nfqueue_packet *p, const struct pkt_view *v, int pi,
				 int key, uint64_t epoch, const struct dest *dialled, uint64_t now);

/*
 * A SYN that may be the copy of one pending_start() sent back through our
 * chain to be flagged (REPEAT), with the ISN it was sent for: true, and the
 * caller lets it through (not verified or counted again).  Only the one
 * copy: any other SYN goes through pending_start() again.
 */
bool pending_requeued(struct pending *pd, const struct nfqueue_packet *p,
		      const struct pkt_view *v);

/* Is p (from the client) a segment of an integrity flow being checked? */
bool pending_knows(struct pending *pd, const struct nfqueue_packet *p, const struct pkt_view *v);

enum pending_seg {
	PENDING_SEG_DONE,	/* decided */
	PENDING_SEG_FAILED,	/* decided: the flow's bytes failed their check, a refused knock */
};

/* A segment from the client of a flagged flow (not a SYN). */
enum pending_seg pending_client(struct pending *pd, struct verdicts *out,
				const struct nfqueue_packet *p, const struct pkt_view *v,
				uint64_t now);

/* A segment from the service of a flagged flow (queued in the output path). */
void pending_reply(struct pending *pd, struct verdicts *out, const struct nfqueue_packet *p,
		   const struct pkt_view *v, uint64_t now);

/* Ends flows past their deadline, counting them as why. */
void pending_expire(struct pending *pd, struct verdicts *out, uint64_t now,
		    enum server_counter why);

/*
 * Before a reload: flows still waiting for their bytes fail closed
 * (counted).  Then pending_set_conf() with the new configuration.
 */
void pending_reload(struct pending *pd, struct verdicts *out, uint64_t now);
void pending_set_conf(struct pending *pd, const struct conf *c, unsigned nqueues);

#endif
