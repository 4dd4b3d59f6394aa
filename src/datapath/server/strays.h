/*
 * strays.h - how much work the segments of unknown integrity flows may cost.
 *
 * A segment of an integrity-flagged flow the daemon does not know (it
 * restarted, or failed, evicted or timed the flow out, or nobody knocked
 * for it) is dropped, and the connection is reset at both ends: a verdict
 * flush, a socket abort over sock_diag and, with no socket to abort, a
 * closed-port RST.  That is worth doing once per flow, not for every
 * segment a retransmitting client or a flood of trickled segments sends:
 * done per segment it costs a system call or two each and starves the
 * queue (knocks included).  So a flow reset here, or ended by the daemon
 * itself (strays_note), is remembered for STRAY_QUIET seconds, during
 * which its segments are dropped quietly; and each source (an IPv4
 * address, an IPv6 /64) may cost at most STRAY_SOURCE_RATE resets a
 * second, every source together STRAY_TOTAL_RATE: past that, quietly too.
 * A quiet drop lets nothing through either: the guarantee does not depend
 * on the reset, which only ends the connection sooner.
 *
 * Fixed-size tables (full: the reset is done and not remembered, or the
 * source counted with everyone); `now` is a parameter.  Pure: no I/O, no
 * logging.  One per queue thread, like the server state that owns it.
 */
#ifndef KNOCKGW_STRAYS_H
#define KNOCKGW_STRAYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/table/flowtable.h"

enum {
	STRAY_QUIET = 10,		/* seconds a reset flow stays quiet */
	STRAY_SOURCE_RATE = 8,		/* resets per second per source */
	STRAY_TOTAL_RATE = 64,		/* resets per second, all sources */
};

struct strays {
	struct flowtable flows;		/* flows reset lately */
	struct flowtable sources;	/* resets this second per source */
	uint64_t second;		/* the second total counts */
	uint32_t total;
};

/* 0 or -ENOMEM.  max_flows flows remembered, max_sources sources counted. */
int strays_init(struct strays *t, size_t max_flows, size_t max_sources);
void strays_free(struct strays *t);

enum stray_action {
	STRAY_RESET,		/* reset the connection (then it is remembered) */
	STRAY_DROP_QUIET,	/* just drop the segment */
};

/*
 * A segment of an unknown flow, client src:sport to local dst:dport
 * (addresses 4 or 16 bytes by family), at now.
 */
enum stray_action strays_check(struct strays *t, int family, const uint8_t *src,
			       const uint8_t *dst, uint16_t sport, uint16_t dport, uint64_t now);

/* Was this flow reset lately (strays_check, strays_note)? */
bool strays_recent(struct strays *t, int family, const uint8_t *src, const uint8_t *dst,
		   uint16_t sport, uint16_t dport, uint64_t now);

/* The daemon reset this flow itself: its late segments are quiet. */
void strays_note(struct strays *t, int family, const uint8_t *src, const uint8_t *dst,
		 uint16_t sport, uint16_t dport, uint64_t now);

/* Forgets what is past; call a few times a second. */
void strays_gc(struct strays *t, uint64_t now);

#endif
