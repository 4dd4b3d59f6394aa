/*
 * pending.h - the server role's integrity flows, from a valid integrity
 * knock until the service's TCP has acknowledged the verified bytes.
 *
 * Part of the server's data path (server.c decides SYNs and calls in here
 * for everything of a flow the rules queue because its conntrack entry
 * carries the integrity bit (marks.h)).  The guarantee: the service never reads a byte
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

#include <stdint.h>

#include "nfq.h"
#include "pkt.h"
#include "server.h"
#include "verdict.h"

/* Sizes the pending-flow table and the hold caps from c; 0 or -errno. */
int pending_init(struct server *s, const struct conf *c, unsigned nqueues);
void pending_free(struct server *s);

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
enum pending_start pending_start(struct server *s, struct verdicts *out,
				 const struct nfqueue_packet *p, const struct pkt_view *v, int pi,
				 int key, uint64_t epoch, const struct dest *dialled);

/*
 * A SYN that may be the copy of one pending_start() sent back through our
 * chain to be flagged (REPEAT), with the ISN it was sent for: true, and the
 * caller lets it through (not verified or counted again).  Only the one
 * copy: any other SYN goes through pending_start() again.
 */
bool pending_requeued(struct server *s, const struct nfqueue_packet *p, const struct pkt_view *v);

/* Is p (from the client) a segment of an integrity flow being checked? */
bool pending_knows(struct server *s, const struct nfqueue_packet *p, const struct pkt_view *v);

/* A segment from the client of a flagged flow (not a SYN). */
void pending_client(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		    const struct pkt_view *v, int pi);

/* A segment from the service of a flagged flow (queued in the output path). */
void pending_reply(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		   const struct pkt_view *v);

/* Ends flows past their deadline (now = s->mono), counting them as why. */
void pending_expire(struct server *s, struct verdicts *out, uint64_t now, enum server_counter why);

/* Before a reload: flows still waiting for their bytes fail closed (counted). */
void pending_reload(struct server *s, struct verdicts *out);

#endif
