/*
 * verdict.h - what the data path decided about queued packets, as values:
 * an ordered list that a handler fills and the door (door.h) carries out,
 * in order, as the one place that talks to the queue.
 *
 * Most packets get one verdict for themselves.  An integrity flow also
 * releases or drops packets it held earlier (their verdicts go to the hold
 * queue, the data set's), tells the queue how many it holds now (nfq.h
 * batches verdicts only while nothing is held), and resets connections:
 * an abort comes after every verdict before it has been sent, so the
 * aborted socket finds nothing left to read.  So an entry is one of three
 * things, and order matters.
 *
 * Pure: no I/O.  The list grows when needed, but its owner sizes it for
 * the most a handler can add (door.c), so that it never has to.
 */
#ifndef KNOCKGW_VERDICT_H
#define KNOCKGW_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/nfq.h"

enum verdict_what {
	VD_PACKET,		/* a packet's verdict */
	VD_HELD,		/* packets held from now on (n) */
	VD_ABORT,		/* reset a connection at both ends (abort) */
};

/* Where an entry goes: the packet's own queue, or the one held packets wait in. */
enum verdict_queue {
	VQ_OWN,
	VQ_HOLD,
};

/*
 * A connection to reset: local is the service's end, remote the client's.
 * answer: when there is no socket to abort, the packet being decided gets
 * the closed-port RST instead (its ack lands in the client's window).
 */
struct verdict_abort {
	int family;
	uint8_t local[16], remote[16];
	uint16_t lport, rport;
	bool answer;
};

struct verdict {
	uint8_t what;			/* enum verdict_what */
	uint8_t queue;			/* enum verdict_queue */
	uint8_t v;			/* VD_PACKET: enum nfqueue_verdict */
	bool has_mark;
	uint32_t id, mark;
	const uint8_t *pkt;		/* VD_PACKET: what replaces the packet, or NULL */
	size_t len;			/* its length; VD_HELD: packets held */
	struct verdict_abort abort;
};

struct verdicts {
	struct verdict *v;
	size_t n, cap;
	uint64_t lost;			/* entries that found no memory (never, when sized) */
};

/* 0 or -ENOMEM. */
int verdicts_init(struct verdicts *o, size_t cap);
void verdicts_free(struct verdicts *o);

static inline void verdicts_clear(struct verdicts *o)
{
	o->n = 0;
}

void verdicts_push(struct verdicts *o, const struct verdict *v);

/* The packet's own verdict, its mark left alone. */
static inline void verdict_give(struct verdicts *o, uint32_t id, enum nfqueue_verdict v)
{
	verdicts_push(o, &(struct verdict){ .what = VD_PACKET, .id = id, .v = (uint8_t)v });
}

/* The packet's own verdict with a new mark. */
static inline void verdict_give_mark(struct verdicts *o, uint32_t id, enum nfqueue_verdict v,
				     uint32_t mark)
{
	verdicts_push(o, &(struct verdict){ .what = VD_PACKET, .id = id, .v = (uint8_t)v,
					    .has_mark = true, .mark = mark });
}

/*
 * Accepts the packet as pkt (the whole packet, from the IP header) with
 * mark; pkt must stay as it is until the door has carried the list out.
 */
static inline void verdict_replace(struct verdicts *o, uint32_t id, const uint8_t *pkt,
				   size_t len, uint32_t mark)
{
	verdicts_push(o, &(struct verdict){ .what = VD_PACKET, .id = id, .v = NFQUEUE_ACCEPT,
					    .has_mark = true, .mark = mark, .pkt = pkt,
					    .len = len });
}

static inline void verdict_drop(struct verdicts *o, uint32_t id)
{
	verdict_give(o, id, NFQUEUE_DROP);
}

static inline void verdict_accept(struct verdicts *o, uint32_t id)
{
	verdict_give(o, id, NFQUEUE_ACCEPT);
}

static inline void verdict_held(struct verdicts *o, enum verdict_queue q, size_t held)
{
	verdicts_push(o, &(struct verdict){ .what = VD_HELD, .queue = (uint8_t)q, .len = held });
}

static inline void verdict_abort(struct verdicts *o, const struct verdict_abort *a)
{
	verdicts_push(o, &(struct verdict){ .what = VD_ABORT, .abort = *a });
}

#endif
