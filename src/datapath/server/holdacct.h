/*
 * holdacct.h - how much of the queue each source holds (integrity mode).
 *
 * Packets the server holds while an integrity flow waits for its bytes stay
 * in the kernel's queue and count against queue.maxlen; when the queue is
 * full the kernel drops every new packet, valid knocks included.  So what is
 * held is capped per queue (well under maxlen) and per source address, and
 * so are the pending flows of one source: one address (which needs only one
 * valid knock, replayed from its own many ports) cannot take the queue or
 * the pending-flow table from everyone else.
 *
 * Counts per source live in a fixed-size table keyed by address; an entry
 * lives while its source has a pending flow.  Pure: no I/O, no logging, no
 * clock.  One per queue thread, like the server state that owns it.
 */
#ifndef KNOCKGW_HOLDACCT_H
#define KNOCKGW_HOLDACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/table/flowtable.h"

struct holdacct {
	struct flowtable sources;
	size_t pkts;			/* held by everyone */
	size_t max_pkts;		/* per queue */
	size_t max_src_pkts;		/* per source address */
	size_t max_src_flows;		/* pending flows per source address */
};

enum hold_check {
	HOLD_OK,
	HOLD_SOURCE_FULL,	/* this source holds its share */
	HOLD_QUEUE_FULL,	/* the queue's share is used up */
};

/* max_sources: how many sources can have pending flows at once. */
int holdacct_init(struct holdacct *h, size_t max_pkts, size_t max_src_pkts, size_t max_src_flows,
		  size_t max_sources);
void holdacct_free(struct holdacct *h);

/* May src start one more pending flow?  Then holdacct_flow_add(). */
bool holdacct_flow_ok(struct holdacct *h, int family, const uint8_t *src);
/* 0, or -ENOSPC when the source table is full (cannot happen with max_sources flows). */
int holdacct_flow_add(struct holdacct *h, int family, const uint8_t *src);
/* The flow ended; npkts of its packets were still counted as held. */
void holdacct_flow_del(struct holdacct *h, int family, const uint8_t *src, size_t npkts);

/* May src hold one more packet? */
enum hold_check holdacct_pkt_check(struct holdacct *h, int family, const uint8_t *src);
void holdacct_pkt_add(struct holdacct *h, int family, const uint8_t *src);
/* npkts of src's held packets got their verdicts (the flow goes on). */
void holdacct_pkt_del(struct holdacct *h, int family, const uint8_t *src, size_t npkts);

#endif
