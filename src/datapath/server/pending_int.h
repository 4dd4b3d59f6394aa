/*
 * pending_int.h - what pending.c (the flows: start, hold, end) and
 * pending_seg.c (what each segment does to its flow) share; nothing else
 * includes it.  See pending.h for the states and the guarantee.
 */
#ifndef KNOCKGW_PENDING_INT_H
#define KNOCKGW_PENDING_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/table/flowtable.h"
#include "common/log.h"
#include "common/pkt.h"
#include "datapath/server/integ.h"
#include "datapath/server/pending.h"
#include "datapath/verdict.h"
#include "kernel/nfq.h"

enum {
	MAX_HELD = 32,			/* segments held per integrity flow */
	RELEASE_GRACE = 2,		/* seconds a finished flow is remembered */
};

enum pending_state { PENDING_WAIT, PENDING_VERIFIED, PENDING_DONE };

struct held {
	uint32_t id;
	uint32_t seq;
	uint32_t bytes;
	uint32_t mark;
	bool reply;			/* the service's, not the client's */
};

/* One integrity flow; the key is client address/port -> local address/port. */
struct pending_flow {
	uint64_t epoch;
	uint64_t order;			/* pd->next_order when it started: eviction age */
	uint32_t isn, tsval;
	uint16_t protect, key;
	int family;
	uint8_t local[16], remote[16];
	uint16_t lport, rport;
	struct dest dialled;		/* what the knock verified for: its bytes are checked with it */
	uint32_t held_bytes;
	uint8_t nheld;
	uint8_t state;			/* enum pending_state */
	bool echo;			/* a SYN went back to be flagged (REPEAT): its copy is due */
	bool passed;			/* its SYN was let through: the service may hold its ISN */
	uint8_t asks;			/* conntrack asked about it in ask_second (pending_seg.c) */
	uint64_t ask_second;
	struct held held[MAX_HELD];
	struct integ_buf buf;		/* VERIFIED: the verified bytes, kept to compare */
};

/* Is our code in mark this one? */
bool pending_has_code(const struct pending *pd, uint32_t mark, uint32_t code);

/* Lets a packet go (q: its own queue, or held), our code off where a rule put one. */
void pending_accept(const struct pending *pd, struct verdicts *out, enum verdict_queue q, uint32_t id,
		    uint32_t mark);

/*
 * Holds packet p of flow fe (caps permitting); false when it was dropped at
 * a cap instead (counted: the sender retransmits it later).
 */
bool pending_hold(struct pending *pd, struct verdicts *out, struct flow_entry *fe,
		  const struct nfqueue_packet *p, const struct pkt_view *v, bool reply);

/* Every held packet of pf gets its verdict: passed (in order) or dropped. */
void pending_unhold(struct pending *pd, struct verdicts *out, struct pending_flow *pf, bool ok);

/*
 * Ends a flow.  fail: what is held is dropped and both ends are reset
 * (answer: the client's segment being decided failed it, and gets the
 * closed-port RST if there is no socket to abort); else what is held
 * passes.  The entry is removed (flow_remove never moves others).
 */
void pending_end(struct pending *pd, struct verdicts *out, struct flow_entry *fe, bool fail,
		 bool answer);

/*
 * Resets the connection local:lport <-> remote:rport at both ends (an
 * abort in out, carried out after the verdicts before it are sent); answer:
 * the segment being decided is one of it, to answer with the closed-port
 * RST when there is no socket to abort.
 */
void pending_abort(struct pending *pd, struct verdicts *out, int family, const uint8_t *local,
		   uint16_t lport, const uint8_t *remote, uint16_t rport, bool answer);

/* A line about the flow for the log (rate-limited, peer-triggered). */
void pending_log(struct pending *pd, const struct pending_flow *pf, const char *what);

/* pending_log() of an event log tools act on (kind): the same line, with the journal's fields. */
void pending_log_event(struct pending *pd, const struct pending_flow *pf, enum log_event_kind kind,
		       const char *what);

#endif
