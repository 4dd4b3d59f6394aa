/*
 * pending.c - the server's integrity flows (see pending.h): the table,
 * starting a flow at its knock, holding and releasing its packets, and
 * ending it (failed, evicted, timed out, reloaded).  What each segment does
 * to its flow is pending_seg.c.
 *
 * Reading order: pending_start() (the knock, and why a SYN of a connection
 * past its handshake starts nothing), pending_hold() / pending_unhold(), pending_end()
 * (every flow ends there or in expire_one()), pending_expire().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/marks.h"
#include "datapath/server/pending.h"
#include "datapath/server/pending_int.h"
#include "datapath/verdict.h"

enum {
	PENDING_MIN = 64,
	SOURCE_SHARE = 8,		/* one source: at most 1/8 of the queue's share */
	STRAY_SOURCES = 1024,		/* sources whose stray resets are counted */
};

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

int pending_init(struct pending *pd, const struct conf *c, unsigned nqueues,
		 struct server_counters *cnt, struct ctnl *ct, struct log_ratelimit *rl,
		 struct log_ratelimit *rl_full)
{
	/*
	 * Held packets stay in the kernel's queue: half of it at most, so that
	 * knocks always find room.  As many pending flows as could hold one
	 * packet each (a flow needs its table slot, ~3 KB, from the SYN on).
	 */
	size_t max_pkts = max_sz(MAX_HELD, c->queue_maxlen / 2);
	size_t flows = max_sz(PENDING_MIN, max_pkts);
	int r;

	if (flows > c->max_flows)
		flows = c->max_flows;
	*pd = (struct pending){ .cnt = cnt, .ct = ct, .rl = rl, .rl_full = rl_full };
	pending_set_conf(pd, c, nqueues);
	r = flow_init(&pd->table, flows, sizeof(struct pending_flow));
	if (r < 0)
		return r;
	r = holdacct_init(&pd->acct, max_pkts, max_sz(MAX_HELD, max_pkts / SOURCE_SHARE),
			  max_sz(4, flows / SOURCE_SHARE), flows);
	if (r < 0)
		goto fail_acct;
	/* Every flow the table can hold can end while its segments still come. */
	r = strays_init(&pd->strays, flows, STRAY_SOURCES);
	if (r < 0)
		goto fail_strays;
	return 0;
fail_strays:
	holdacct_free(&pd->acct);
fail_acct:
	flow_free(&pd->table);
	return r;
}

void pending_set_conf(struct pending *pd, const struct conf *c, unsigned nqueues)
{
	pd->conf = c;
	pd->held_bytes_max = c->hold_bytes / (nqueues ? nqueues : 1);
}

size_t pending_verdicts_max(const struct pending *pd)
{
	return pd->acct.max_pkts + 2 * pd->table.max + 8;
}

void pending_free(struct pending *pd)
{
	/* flow_free wipes the values: pending flows hold the peer's bytes. */
	flow_free(&pd->table);
	holdacct_free(&pd->acct);
	strays_free(&pd->strays);
}

static const char *addr_str(int family, const uint8_t *addr, char *out, size_t len)
{
	return inet_ntop(family, addr, out, (socklen_t)len) ? out : "?";
}

static void flow_key_client(struct flow_key *k, const struct pkt_view *v, const uint8_t *buf)
{
	flow_key_make(k, v->family, pkt_src(buf, v), pkt_dst(buf, v), v->sport, v->dport);
}

/* Our mark bits off, the packet's own kept: what a passing packet leaves with. */
static uint32_t own_mark(const struct pending *pd, uint32_t mark)
{
	return marks_own(&pd->conf->marks, mark);
}

bool pending_has_code(const struct pending *pd, uint32_t mark, uint32_t code)
{
	return marks_code(&pd->conf->marks, mark) == code;
}

/*
 * Lets a packet go.  The service's segments came with the reply code, the
 * client's invalid ones with the invalid code, those of no connection
 * conntrack knows with NOCONN: they leave without it.
 */
void pending_accept(const struct pending *pd, struct verdicts *out, enum verdict_queue q, uint32_t id,
		    uint32_t mark)
{
	/* A NOCONN code left on would meet the late chain's reject (nftplan.h). */
	bool coded = pending_has_code(pd, mark, pd->conf->marks.reply) ||
		     pending_has_code(pd, mark, pd->conf->marks.invalid) ||
		     pending_has_code(pd, mark, pd->conf->marks.noconn);

	verdicts_push(out, &(struct verdict){ .what = VD_PACKET, .queue = (uint8_t)q, .id = id,
					      .v = NFQUEUE_ACCEPT, .has_mark = coded,
					      .mark = coded ? own_mark(pd, mark) : 0 });
}

void pending_unhold(struct pending *pd, struct verdicts *out, struct pending_flow *pf, bool ok)
{
	/* Held segments wait in the data queue, whichever packet ends them. */
	if (ok) {
		/*
		 * The client's in sequence order first (a FIN held after the
		 * bytes it follows), then the service's.
		 */
		for (size_t i = 1; i < pf->nheld; i++) {
			struct held h = pf->held[i];
			size_t j = i;

			while (j > 0 && (pf->held[j - 1].reply > h.reply ||
					 (pf->held[j - 1].reply == h.reply &&
					  (int32_t)(pf->held[j - 1].seq - h.seq) > 0))) {
				pf->held[j] = pf->held[j - 1];
				j--;
			}
			pf->held[j] = h;
		}
	}
	for (size_t i = 0; i < pf->nheld; i++) {
		if (ok)
			pending_accept(pd, out, VQ_HOLD, pf->held[i].id, pf->held[i].mark);
		else
			verdicts_push(out, &(struct verdict){ .what = VD_PACKET, .queue = VQ_HOLD,
							      .id = pf->held[i].id,
							      .v = NFQUEUE_DROP });
		pd->held_bytes -= pf->held[i].bytes;
	}
	holdacct_pkt_del(&pd->acct, pf->family, pf->remote, pf->nheld);
	pf->nheld = 0;
	pf->held_bytes = 0;
	verdict_held(out, VQ_HOLD, pd->acct.pkts);
}

/*
 * Aborting the service's socket (SOCK_DESTROY) makes the kernel send the
 * client an RST with the socket's own sequence numbers.  Without a socket
 * to abort (the handshake never completed), the client's latest segment,
 * if we have it, is answered with the closed-port RST: its ack is the
 * server's next sequence number, so that RST lands in the client's window.
 * The flow is remembered as reset (strays.h): its late segments cost no
 * second abort.
 */
void pending_abort(struct pending *pd, struct verdicts *out, int family, const uint8_t *local,
		   uint16_t lport, const uint8_t *remote, uint16_t rport, bool answer)
{
	struct verdict_abort a = { .family = family, .lport = lport, .rport = rport,
				   .answer = answer };
	size_t alen = family == AF_INET6 ? 16 : 4;

	/* Carried out after the verdicts before it are sent (verdict.h). */
	memcpy(a.local, local, alen);
	memcpy(a.remote, remote, alen);
	verdict_abort(out, &a);
	strays_note(&pd->strays, family, remote, local, rport, lport, pd->now);
}

void pending_end(struct pending *pd, struct verdicts *out, struct flow_entry *fe, bool fail, bool answer)
{
	struct pending_flow *pf = fe->value;

	pending_unhold(pd, out, pf, !fail);
	if (fail)
		pending_abort(pd, out, pf->family, pf->local, pf->lport, pf->remote, pf->rport, answer);
	holdacct_flow_del(&pd->acct, pf->family, pf->remote, 0);
	flow_remove(&pd->table, fe);
}

void pending_log(struct pending *pd, const struct pending_flow *pf, const char *what)
{
	char a[INET6_ADDRSTRLEN];

	log_peer(pd->rl, pd->now, LOG_NOTICE, "integrity flow from %s port %u to port %u: %s",
		 addr_str(pf->family, pf->remote, a, sizeof(a)), pf->rport, pf->lport, what);
}

void pending_log_event(struct pending *pd, const struct pending_flow *pf, enum log_event_kind kind,
		       const char *what)
{
	char a[INET6_ADDRSTRLEN];

	addr_str(pf->family, pf->remote, a, sizeof(a));
	log_peer_event(pd->rl, pd->now, LOG_NOTICE,
		       &(struct log_event){ kind, a, pf->lport, pd->conf->keys[pf->key].name },
		       "integrity flow from %s port %u to port %u: %s", a, pf->rport, pf->lport, what);
}

/* Resets the oldest unverified flow (with something held, if held) but keep. */
static bool evict_oldest(struct pending *pd, struct verdicts *out, const struct flow_entry *keep,
			 bool held)
{
	struct flow_entry *e, *oldest = NULL;
	size_t pos = 0;

	while ((e = flow_next(&pd->table, &pos))) {
		const struct pending_flow *pf = e->value;

		if (e == keep || pf->state != PENDING_WAIT || (held && pf->nheld == 0))
			continue;
		if (!oldest || pf->order < ((const struct pending_flow *)oldest->value)->order)
			oldest = e;
	}
	if (!oldest)
		return false;
	pd->cnt->c[SC_integ_evicted]++;
	pending_end(pd, out, oldest, true, false);
	return true;
}

/*
 * Has the service answered the connection this SYN belongs to, as
 * conntrack sees it (SYN_RECV or later, and not over): 1 yes, 0 no,
 * -errno when conntrack could not be asked.
 *
 * A copy of a verified connection's own SYN (a retransmission seen late,
 * or one an attacker captured and sends from the client's address, which
 * replay protection lets through as "the same source") verifies like the
 * first, and conntrack lets it pass on the established entry.  Starting
 * the check again there would flag the entry anew and hold the client's
 * next data, never the range the ISN covers, until the timeout reset the
 * connection.  And once the service has answered one ISN (its SYN-ACK
 * passed), a check started for another would watch bytes the service does
 * not read first.  So such a SYN starts nothing.  Conntrack keeps that
 * state for the connection's whole life, where a memory of verified flows
 * would have to last as long as their knocks verify (an epoch and more; in
 * knock mode, for ever).
 */
static int answered(struct pending *pd, const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct ct_flow f = { .family = v->family, .sport = v->sport, .dport = v->dport };
	struct ct_info ci;
	int r;

	/*
	 * Conntrack calls a SYN new (the rule's NEWSYN, marks.h) until it has
	 * seen an answer: nothing to ask.
	 */
	if (pending_has_code(pd, p->mark, pd->conf->marks.newsyn))
		return 0;
	if (!pd->ct)
		return -ENOTSUP;
	memcpy(f.src, pkt_src(p->data, v), v->addr_len);
	memcpy(f.dst, pkt_dst(p->data, v), v->addr_len);
	/*
	 * A new connection's entry is not confirmed while its SYN is queued:
	 * there is none to find.  Nor after TIME_WAIT or CLOSE, which a new
	 * SYN replaces with a fresh entry.
	 */
	r = ctnl_get(pd->ct, &f, &ci);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	switch (ci.tcp_state) {
	case TCP_CONNTRACK_SYN_RECV:
	case TCP_CONNTRACK_ESTABLISHED:
	case TCP_CONNTRACK_FIN_WAIT:
	case TCP_CONNTRACK_CLOSE_WAIT:
	case TCP_CONNTRACK_LAST_ACK:
		return 1;
	default:
		return 0;
	}
}

static bool same_syn(const struct pending_flow *pf, const struct pkt_view *v)
{
	return pf->isn == v->seq && pf->tsval == (v->has_ts ? v->tsval : 0);
}

/*
 * Sends p back through our chain to have its conntrack entry flagged
 * (marks.h): the rule that sees the code sets the bit and goes on, the
 * knock rule queues the SYN once more, and pending_requeued() lets that
 * copy through.  Every SYN a waiting flow lets through goes this way, never
 * straight: conntrack may have replaced the entry since the last one (lost
 * it, or reopened it after an RST), and a SYN passed on an entry without
 * the bit would open a connection whose segments bypass the check.
 */
static void flag_syn(const struct pending *pd, struct verdicts *out, struct pending_flow *pf,
		     const struct nfqueue_packet *p)
{
	pf->echo = true;
	verdict_give_mark(out, p->id, NFQUEUE_REPEAT,
			  own_mark(pd, p->mark) | pd->conf->marks.integ);
}

enum pending_start pending_start(struct pending *pd, struct verdicts *out,
				 const struct nfqueue_packet *p, const struct pkt_view *v, int pi,
				 int key, uint64_t epoch, const struct dest *dialled, uint64_t now)
{
	const struct conf *c = pd->conf;
	const struct conf_protect *e = &c->protect[pi];
	struct flow_key k;
	struct flow_entry *fe;
	struct pending_flow *pf;
	bool created;
	int live;

	pd->now = now;
	flow_key_client(&k, v, p->data);
	fe = flow_lookup(&pd->table, &k);
	pf = fe ? fe->value : NULL;
	if (pf && pf->state == PENDING_WAIT && same_syn(pf, v)) {
		/* A retransmission: the flow goes on (its deadline too). */
		flag_syn(pd, out, pf, p);
		return PENDING_AGAIN;
	}
	/*
	 * Another ISN, where the service may already hold the first one: the
	 * flow's SYN was let through or its data came, its bytes went through
	 * unacknowledged (VERIFIED), or conntrack sees the connection
	 * answered.  Restarting would have the check watch another range than
	 * the one the service reads.  (A flow whose SYN never got through, or
	 * one that is over, starts again.)
	 */
	if (pf && (pf->state == PENDING_VERIFIED ||
		   (pf->state == PENDING_WAIT && (pf->nheld > 0 || pf->passed))))
		live = 1;
	else
		live = answered(pd, p, v);
	if (live < 0) {
		pd->cnt->c[SC_integ_ct_error]++;
		return PENDING_REFUSED;
	}
	if (live > 0) {
		/*
		 * Dropped, not passed: the service's TCP would only answer it
		 * with an ACK, and should the service have no socket for it
		 * any more, the SYN would open a connection nobody checks.
		 */
		pd->cnt->c[SC_integ_syn_live]++;
		verdict_drop(out, p->id);
		return PENDING_LIVE;
	}
	if (!fe) {
		if (!holdacct_flow_ok(&pd->acct, v->family, pkt_src(p->data, v))) {
			pd->cnt->c[SC_source_cap]++;
			return PENDING_REFUSED;
		}
		if (pd->table.count >= pd->table.max && !evict_oldest(pd, out, NULL, false)) {
			log_peer(pd->rl_full, pd->now, LOG_WARNING,
				 "pending-flow table full (limits.flows, queue.maxlen): "
				 "refusing new integrity knocks");
			pd->cnt->c[SC_flows_full]++;
			return PENDING_REFUSED;
		}
		if (holdacct_flow_add(&pd->acct, v->family, pkt_src(p->data, v)) < 0) {
			pd->cnt->c[SC_flows_full]++;
			return PENDING_REFUSED;
		}
	}
	fe = flow_insert(&pd->table, &k, pd->now + c->integrity_timeout, &created);
	if (!fe) {		/* cannot happen: room was made above */
		holdacct_flow_del(&pd->acct, v->family, pkt_src(p->data, v), 0);
		pd->cnt->c[SC_flows_full]++;
		return PENDING_REFUSED;
	}
	/*
	 * New; another ISN before the service answered and before any data;
	 * or a new connection on the tuple of one that is over: (re)start.
	 */
	pf = fe->value;
	memset(pf, 0, sizeof(*pf));
	pf->order = pd->next_order++;
	pf->epoch = epoch;
	pf->isn = v->seq;
	pf->tsval = v->has_ts ? v->tsval : 0;
	pf->protect = (uint16_t)pi;
	pf->key = (uint16_t)key;
	pf->family = v->family;
	memcpy(pf->local, pkt_dst(p->data, v), v->addr_len);
	memcpy(pf->remote, pkt_src(p->data, v), v->addr_len);
	pf->lport = v->dport;
	pf->rport = v->sport;
	pf->dialled = *dialled;
	integ_init(&pf->buf, v->seq, e->integrity_len);
	fe->expires = pd->now + c->integrity_timeout;
	flag_syn(pd, out, pf, p);
	return PENDING_STARTED;
}

bool pending_knows(struct pending *pd, const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct flow_key k;

	flow_key_client(&k, v, p->data);
	return flow_lookup(&pd->table, &k) != NULL;
}

bool pending_requeued(struct pending *pd, const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct flow_key k;
	struct flow_entry *fe;
	struct pending_flow *pf;

	flow_key_client(&k, v, p->data);
	fe = flow_lookup(&pd->table, &k);
	if (!fe)
		return false;
	pf = fe->value;
	if (pf->state != PENDING_WAIT || !pf->echo || !same_syn(pf, v))
		return false;
	/* The one copy our REPEAT sent back: its entry carries the bit now. */
	pf->echo = false;
	pf->passed = true;
	return true;
}

bool pending_hold(struct pending *pd, struct verdicts *out, struct flow_entry *fe,
		  const struct nfqueue_packet *p, const struct pkt_view *v, bool reply)
{
	struct pending_flow *pf = fe->value;
	uint32_t bytes = (uint32_t)(p->wirelen > p->caplen ? p->wirelen : p->caplen);
	enum hold_check hc;

	if (pf->nheld == MAX_HELD || pf->held_bytes + bytes > pd->conf->hold_flow_bytes ||
	    pd->held_bytes + bytes > pd->held_bytes_max) {
		pd->cnt->c[SC_hold_cap]++;
		verdict_drop(out, p->id);
		return false;
	}
	hc = holdacct_pkt_check(&pd->acct, pf->family, pf->remote);
	if (hc == HOLD_QUEUE_FULL && evict_oldest(pd, out, fe, true))
		hc = holdacct_pkt_check(&pd->acct, pf->family, pf->remote);
	if (hc != HOLD_OK) {
		pd->cnt->c[hc == HOLD_SOURCE_FULL ? SC_source_cap : SC_hold_cap]++;
		verdict_drop(out, p->id);
		return false;
	}
	pf->held[pf->nheld++] = (struct held){ .id = p->id, .seq = v->seq, .bytes = bytes,
					       .mark = p->mark, .reply = reply };
	pf->held_bytes += bytes;
	pd->held_bytes += bytes;
	holdacct_pkt_add(&pd->acct, pf->family, pf->remote);
	verdict_held(out, VQ_OWN, pd->acct.pkts);
	return true;
}

struct expire_ctx {
	struct pending *pd;
	struct verdicts *out;
	enum server_counter why;
};

static void expire_one(struct flow_entry *fe, void *arg)
{
	struct expire_ctx *x = arg;
	struct pending_flow *pf = fe->value;

	/* A finished flow's grace is simply over; the others fail closed. */
	if (pf->state != PENDING_DONE) {
		x->pd->cnt->c[pf->state == PENDING_VERIFIED && x->why == SC_integ_timeout ?
				    SC_integ_unacked : x->why]++;
		pending_unhold(x->pd, x->out, pf, false);
		pending_abort(x->pd, x->out, pf->family, pf->local, pf->lport, pf->remote, pf->rport,
			      false);
	}
	/* flow_gc removes the entry itself. */
	holdacct_flow_del(&x->pd->acct, pf->family, pf->remote, 0);
}

void pending_expire(struct pending *pd, struct verdicts *out, uint64_t now,
		    enum server_counter why)
{
	struct expire_ctx x = { pd, out, why };

	pd->now = now;
	flow_gc(&pd->table, now, expire_one, &x);
	strays_gc(&pd->strays, now);
}

void pending_reload(struct pending *pd, struct verdicts *out, uint64_t now)
{
	struct flow_entry *e;
	size_t pos = 0;

	pd->now = now;
	/*
	 * A flow still waiting for its bytes was knocked under the old
	 * configuration, whose entry or key may be gone: it fails closed.  A
	 * verified one needs nothing of the configuration any more (only the
	 * bytes it keeps, and the mark bits, which a reload cannot change).
	 */
	while ((e = flow_next(&pd->table, &pos))) {
		if (((struct pending_flow *)e->value)->state != PENDING_WAIT)
			continue;
		pd->cnt->c[SC_integ_reload]++;
		pending_end(pd, out, e, true, false);
	}
}
