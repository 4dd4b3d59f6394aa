/*
 * fakes.h - the kernel adapters the data-path tests replace (test_server.c,
 * test_client.c): the queue (nfq.h), sock_diag (sockkill.h), raw sockets
 * (rawsock.h), conntrack (ctnl.h), the gateway's source lookup (gwnat.h)
 * and the intent table (intent.h), so that the real nfq.o, sockkill.o,
 * rawsock.o, ctnl.o, gwnat.o and intent.o are never linked.
 *
 * Every call goes into one event log, in order: verdicts (with the new
 * packet, if any), flushes, held counts, socket aborts, closed-port answers,
 * conntrack changes and lookups, intents taken.  A call with a handle that
 * is not one of the fakes below, or past the log's end, counts in
 * fake_misuse.
 *
 * Conntrack answers one of two ways: from a small table of entries, which
 * ctnl_create() fills and a test may seed (the client's flows); or, with
 * fake_ct_script set, as the server's scenarios script it per step
 * (ctnl_get below).
 */
#ifndef KNOCKGW_TEST_FAKES_H
#define KNOCKGW_TEST_FAKES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/marks.h"
#include "common/pkt.h"
#include "datapath/client/intent.h"
#include "datapath/server/integ.h"
#include "kernel/ctnl.h"
#include "kernel/nfq.h"
#include "kernel/rawsock.h"
#include "kernel/sockkill.h"

enum {
	FAKE_MAX_EVENTS = 2048,
	FAKE_MAX_CT = 8,
	FAKE_PKT_LEN = 66000,	/* room for a packet larger than the client's buffer */
};

enum ev_kind {
	EV_VERDICT, EV_FLUSH, EV_HELD, EV_KILL, EV_ANSWER, EV_UNFLAG,
	EV_CREATE, EV_GET, EV_DELETE, EV_INTENT,
};

struct event {
	enum ev_kind kind;
	const struct nfqueue *q;	/* verdict, flush, held: the queue */
	uint32_t id;			/* verdict */
	enum nfqueue_verdict v;
	bool has_mark, has_pkt;		/* verdict: a mark; a new packet (in fake_verdict_pkt) */
	uint32_t mark, mask;		/* verdict, unflag */
	size_t len;			/* verdict: the new packet's */
	size_t held;			/* set_held */
	int family;			/* kill, answer, unflag: the service's, the client's end */
	uint8_t local[16], remote[16];
	uint16_t lport, rport;
	uint32_t seq;			/* answer: the segment answered */
	uint32_t indev;
	uint64_t now;
	struct ct_flow f;		/* answer, create, get, delete: the tuple */
	bool seqadj, has_labels;	/* create */
	struct ct_labels labels;
	uint32_t kernel_isn, delta, timeout;
};

struct fake_ct {
	bool used;
	struct ct_flow f;
	struct ct_info info;
};

extern struct event events[FAKE_MAX_EVENTS];
extern size_t nevents;
extern unsigned fake_misuse;
extern uint8_t fake_verdict_pkt[FAKE_PKT_LEN];	/* the last packet given with a verdict */
extern size_t fake_held_last;			/* the last nfqueue_set_held value */

/* Injected results (0: as the real adapter would). */
extern int fake_kill_ret, fake_raw_ret, fake_unflag_ret;
extern int fake_get_ret, fake_create_ret, fake_recreate_ret, fake_gwnat_ret;

/* Conntrack from a table: the entries, and how many creates came. */
extern struct fake_ct cts[FAKE_MAX_CT];
extern unsigned ncreates;

/*
 * Conntrack scripted (fake_ct_script): for a SYN by default that it has no
 * entry (a new connection's is not confirmed while its SYN is queued), for
 * any other segment an established entry with fake_ct_integ, our bit
 * (fake_ct_flagged, unless the step says conntrack lost it);
 * fake_ct_state > 0, an entry in that TCP state; fake_get_ret < 0, an
 * error.  fake_ct_gets counts the lookups.
 */
extern bool fake_ct_script, fake_ct_flagged;
extern uint8_t fake_ct_state;
extern uint32_t fake_ct_integ;
extern unsigned fake_ct_gets;

/* One announced payload for intent_take(); taken once, for its own key only. */
extern struct fake_intent {
	bool set;
	int ret;
	int family;
	uint16_t sport, dport;
	uint8_t dst[16];
	uint8_t payload[INTEG_MAX_LEN];
	size_t len;
} fake_intent;

/* The gateway's source address fake gwnat_source() gives, per family. */
extern const uint8_t fake_router4[4], fake_router6[16];

extern char fake_q, fake_pq, fake_dq, fake_sk, fake_rs, fake_ct, fake_it;

/*
 * One queue for everything, or one per set, as the daemon's queue threads
 * have them: SYNs FAKE_Q, probes FAKE_PQ, data FAKE_DQ.
 */
#define FAKE_Q ((struct nfqueue *)&fake_q)
#define FAKE_PQ ((struct nfqueue *)&fake_pq)
#define FAKE_DQ ((struct nfqueue *)&fake_dq)
#define FAKE_SK ((struct sockkill *)&fake_sk)
#define FAKE_RS ((struct rawsock *)&fake_rs)
#define FAKE_CT ((struct ctnl *)&fake_ct)
#define FAKE_IT ((struct intent_table *)&fake_it)

/* Empties the log and the conntrack table, and zeroes every injected result. */
void fakes_reset(void);

/* Seeds the conntrack table with an entry (one left over, say); NULL when full (misuse). */
struct fake_ct *fake_ct_add(const struct ct_flow *f, const struct ct_info *info);

/* A new log entry of kind (a spare one, counted as misuse, when the log is full). */
struct event *fake_record(enum ev_kind kind);

#endif
