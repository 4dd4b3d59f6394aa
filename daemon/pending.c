/*
 * pending.c - the server's integrity flows (see pending.h).
 *
 * Reading order: pending_start() (the knock), pending_client() (the
 * client's segments: hold, verify, pass; then check what covers the range
 * again), pending_reply() (the service's segments: hold its data until the
 * bytes verify; its acknowledgement of the whole range ends the checking),
 * pending_expire().  Every flow ends through end_flow().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "integ.h"
#include "marks.h"
#include "pending.h"
#include "verify.h"

enum {
	MAX_HELD = 32,			/* segments held per integrity flow */
	RELEASE_GRACE = 2,		/* seconds a finished flow is remembered */
	PENDING_MIN = 64,
	SOURCE_SHARE = 8,		/* one source: at most 1/8 of the queue's share */
};

enum pf_state { PF_WAIT, PF_VERIFIED, PF_DONE };

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
	uint64_t order;			/* s->next_order when it started: eviction age */
	uint32_t isn, tsval;
	uint16_t protect, key;
	int family;
	uint8_t local[16], remote[16];
	uint16_t lport, rport;
	struct dest dialled;		/* what the knock verified for: its bytes are checked with it */
	uint32_t held_bytes;
	uint8_t nheld;
	uint8_t state;			/* enum pf_state */
	bool flagged;			/* its conntrack entry was sent to get the bit */
	struct held held[MAX_HELD];
	struct integ_buf buf;		/* VERIFIED: the verified bytes, kept to compare */
};

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

int pending_init(struct server *s, const struct conf *c, unsigned nqueues)
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
	s->held_bytes_max = c->hold_bytes / (nqueues ? nqueues : 1);
	r = flow_init(&s->pending, flows, sizeof(struct pending_flow));
	if (r < 0)
		return r;
	r = holdacct_init(&s->acct, max_pkts, max_sz(MAX_HELD, max_pkts / SOURCE_SHARE),
			  max_sz(4, flows / SOURCE_SHARE), flows);
	if (r < 0)
		flow_free(&s->pending);
	return r;
}

void pending_free(struct server *s)
{
	/* flow_free wipes the values: pending flows hold the peer's bytes. */
	flow_free(&s->pending);
	holdacct_free(&s->acct);
}

static const char *addr_str(int family, const uint8_t *addr, char *out, size_t len)
{
	return inet_ntop(family, addr, out, (socklen_t)len) ? out : "?";
}

static void flow_key_client(struct flow_key *k, const struct pkt_view *v, const uint8_t *buf)
{
	flow_key_make(k, v->family, pkt_src(buf, v), pkt_dst(buf, v), v->sport, v->dport);
}

/* The same key for the service's segments, which go the other way. */
static void flow_key_reply(struct flow_key *k, const struct pkt_view *v, const uint8_t *buf)
{
	flow_key_make(k, v->family, pkt_dst(buf, v), pkt_src(buf, v), v->dport, v->sport);
}

/* Our mark bits off, the packet's own kept: what a passing packet leaves with. */
static uint32_t own_mark(const struct server *s, uint32_t mark)
{
	return kgw_mark_own(&s->conf->marks, mark);
}

static bool has_code(const struct server *s, uint32_t mark, uint32_t code)
{
	return kgw_mark_code(&s->conf->marks, mark) == code;
}

/*
 * Lets a packet go.  The service's segments came with the reply code, the
 * client's invalid ones with the invalid code, those of no connection
 * conntrack knows with NOCONN: they leave without it.
 */
static void accept_id(const struct server *s, struct nfqueue *q, uint32_t id, uint32_t mark)
{
	/* A NOCONN code left on would meet the late chain's reject (nftplan.c). */
	if (has_code(s, mark, s->conf->marks.reply) || has_code(s, mark, s->conf->marks.invalid) ||
	    has_code(s, mark, s->conf->marks.noconn))
		nfqueue_verdict_mark(q, id, NFQUEUE_ACCEPT, own_mark(s, mark));
	else
		nfqueue_verdict(q, id, NFQUEUE_ACCEPT);
}

/* Every held packet of pf gets its verdict: passed (in order) or dropped. */
static void unhold(struct server *s, struct nfqueue *q, struct pending_flow *pf, bool ok)
{
	/* Held segments wait in the data queue, whichever packet ends them. */
	q = server_hold_q(s, q);
	if (ok) {
		/* The client's in sequence order first, then the service's. */
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
			accept_id(s, q, pf->held[i].id, pf->held[i].mark);
		else
			nfqueue_verdict(q, pf->held[i].id, NFQUEUE_DROP);
		s->held_bytes -= pf->held[i].bytes;
	}
	holdacct_pkt_del(&s->acct, pf->family, pf->remote, pf->nheld);
	pf->nheld = 0;
	pf->held_bytes = 0;
	nfqueue_set_held(q, s->acct.pkts);
}

/*
 * Aborts the connection at both ends.  Aborting the service's socket (SOCK_DESTROY) makes the
 * kernel send the client an RST with the socket's own sequence numbers.
 * Without a socket to abort (the handshake never completed), the client's
 * latest segment, if we have it, is answered with the closed-port RST: its
 * ack is the server's next sequence number, so that RST lands in the
 * client's window.
 */
static void abort_connection(struct server *s, int family, const uint8_t *local, uint16_t lport,
			     const uint8_t *remote, uint16_t rport, const struct nfqueue_packet *p,
			     const struct pkt_view *v)
{
	int r = s->sk ? sockkill_destroy(s->sk, family, local, lport, remote, rport) : -ENOTSUP;

	if (r < 0 && p)
		server_send_closed_rst(s, p, v);
}

/*
 * Ends a flow.  fail: what is held is dropped and both ends are reset (p, v:
 * the client's segment that failed it, or NULL); else what is held passes.
 * The entry is removed (flow_remove never moves others).
 */
static void end_flow(struct server *s, struct nfqueue *q, struct flow_entry *fe, bool fail,
		     const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct pending_flow *pf = fe->value;

	unhold(s, q, pf, !fail);
	if (fail) {
		/* Verdicts first: the aborted socket must find nothing left to read. */
		nfqueue_flush(q);
		nfqueue_flush(server_hold_q(s, q));
		abort_connection(s, pf->family, pf->local, pf->lport, pf->remote, pf->rport, p, v);
	}
	holdacct_flow_del(&s->acct, pf->family, pf->remote, 0);
	flow_remove(&s->pending, fe);
}

/* Resets the oldest unverified flow (with something held, if held) but keep. */
static bool evict_oldest(struct server *s, struct nfqueue *q, const struct flow_entry *keep,
			 bool held)
{
	struct flow_entry *e, *oldest = NULL;
	size_t pos = 0;

	while ((e = flow_next(&s->pending, &pos))) {
		const struct pending_flow *pf = e->value;

		if (e == keep || pf->state != PF_WAIT || (held && pf->nheld == 0))
			continue;
		if (!oldest || pf->order < ((const struct pending_flow *)oldest->value)->order)
			oldest = e;
	}
	if (!oldest)
		return false;
	s->cnt.c[SC_integ_evicted]++;
	end_flow(s, q, oldest, true, NULL, NULL);
	return true;
}

bool pending_start(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
		   const struct pkt_view *v, int pi, int key, uint64_t epoch,
		   const struct dest *dialled)
{
	const struct conf *c = s->conf;
	const struct conf_protect *e = &c->protect[pi];
	struct flow_key k;
	struct flow_entry *fe;
	struct pending_flow *pf;
	bool created;

	flow_key_client(&k, v, p->data);
	fe = flow_lookup(&s->pending, &k);
	if (!fe) {
		if (!holdacct_flow_ok(&s->acct, v->family, pkt_src(p->data, v))) {
			s->cnt.c[SC_source_cap]++;
			return false;
		}
		if (s->pending.count >= s->pending.max && !evict_oldest(s, q, NULL, false)) {
			log_peer(&s->rl_full, s->mono, LOG_WARNING,
				 "pending-flow table full (limits.flows, queue.maxlen): "
				 "refusing new integrity knocks");
			s->cnt.c[SC_flows_full]++;
			return false;
		}
		if (holdacct_flow_add(&s->acct, v->family, pkt_src(p->data, v)) < 0) {
			s->cnt.c[SC_flows_full]++;
			return false;
		}
	}
	fe = flow_insert(&s->pending, &k, s->mono + c->integrity_timeout, &created);
	if (!fe) {		/* cannot happen: room was made above */
		holdacct_flow_del(&s->acct, v->family, pkt_src(p->data, v), 0);
		s->cnt.c[SC_flows_full]++;
		return false;
	}
	pf = fe->value;
	if (created || pf->nheld == 0) {
		/* New, or a retransmitted SYN before any data: (re)start. */
		memset(pf, 0, sizeof(*pf));
		pf->order = s->next_order++;
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
		fe->expires = s->mono + c->integrity_timeout;
	}
	if (pf->flagged) {
		/* The flow's conntrack entry carries the bit already. */
		server_accept_syn(s, q, p);
		return true;
	}
	/*
	 * Our chain sees the code, flags the conntrack entry and goes on: the
	 * knock rule queues the SYN once more, and pending_requeued() lets it
	 * through.  One REPEAT per ISN: nothing loops.
	 */
	pf->flagged = true;
	nfqueue_verdict_mark(q, p->id, NFQUEUE_REPEAT, own_mark(s, p->mark) | s->conf->marks.integ);
	return true;
}

bool pending_requeued(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
		      const struct pkt_view *v)
{
	struct flow_key k;
	struct flow_entry *fe;
	const struct pending_flow *pf;

	flow_key_client(&k, v, p->data);
	fe = flow_lookup(&s->pending, &k);
	if (!fe)
		return false;
	pf = fe->value;
	if (!pf->flagged || pf->isn != v->seq || pf->tsval != (v->has_ts ? v->tsval : 0))
		return false;
	server_accept_syn(s, q, p);
	return true;
}

/*
 * Holds packet p of flow fe (caps permitting); false when it was dropped at
 * a cap instead (counted: the sender retransmits it later).
 */
static bool hold(struct server *s, struct nfqueue *q, struct flow_entry *fe,
		 const struct nfqueue_packet *p, const struct pkt_view *v, bool reply)
{
	struct pending_flow *pf = fe->value;
	uint32_t bytes = (uint32_t)(p->wirelen > p->caplen ? p->wirelen : p->caplen);
	enum hold_check hc;

	if (pf->nheld == MAX_HELD || pf->held_bytes + bytes > s->conf->hold_flow_bytes ||
	    s->held_bytes + bytes > s->held_bytes_max) {
		s->cnt.c[SC_hold_cap]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		return false;
	}
	hc = holdacct_pkt_check(&s->acct, pf->family, pf->remote);
	if (hc == HOLD_QUEUE_FULL && evict_oldest(s, q, fe, true))
		hc = holdacct_pkt_check(&s->acct, pf->family, pf->remote);
	if (hc != HOLD_OK) {
		s->cnt.c[hc == HOLD_SOURCE_FULL ? SC_source_cap : SC_hold_cap]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		return false;
	}
	pf->held[pf->nheld++] = (struct held){ .id = p->id, .seq = v->seq, .bytes = bytes,
					       .mark = p->mark, .reply = reply };
	pf->held_bytes += bytes;
	s->held_bytes += bytes;
	holdacct_pkt_add(&s->acct, pf->family, pf->remote);
	nfqueue_set_held(q, s->acct.pkts);
	return true;
}

/* Are all bytes of the integrity range this segment covers in the capture? */
static bool window_captured(const struct pending_flow *pf, const struct pkt_view *v)
{
	int64_t off = (int32_t)(v->seq - pf->buf.base);

	return !(off < pf->buf.need && off + (int64_t)v->payload_len > 0 &&
		 v->payload_caplen < v->payload_len &&
		 off + (int64_t)v->payload_caplen < pf->buf.need);
}

static void log_flow(struct server *s, const struct pending_flow *pf, const char *what)
{
	char a[INET6_ADDRSTRLEN];

	log_peer(&s->rl, s->mono, LOG_NOTICE, "integrity flow from %s port %u to port %u: %s",
		 addr_str(pf->family, pf->remote, a, sizeof(a)), pf->rport, pf->lport, what);
}

/* WAIT: every byte of the range is in; verify, then pass or fail the flow. */
static void check_bytes(struct server *s, struct nfqueue *q, struct flow_entry *fe,
			const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct pending_flow *pf = fe->value;
	const struct conf_protect *e = &s->conf->protect[pf->protect];
	struct isn_input in = { .family = pf->dialled.family, .dst = pf->dialled.addr,
				.port = pf->dialled.port, .tsval = pf->tsval };
	struct verify_params vp = { .mode = e->mode, .integrity_len = e->integrity_len,
				    .window = e->window };

	if (verify_payload(&s->conf->keyring.keys[pf->key], &vp, &in, pf->isn, pf->epoch,
			   pf->buf.data) != VERIFY_OK) {
		s->cnt.c[SC_integ_fail]++;
		server_note_refusal(s, pf->family, pf->remote);
		log_flow(s, pf, "integrity check failed, connection reset");
		end_flow(s, q, fe, true, p, v);
		return;
	}
	s->cnt.c[SC_integ_ok]++;
	unhold(s, q, pf, true);
	pf->state = PF_VERIFIED;
	fe->expires = s->mono + s->conf->integrity_timeout;
}

bool pending_knows(struct server *s, const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct flow_key k;

	flow_key_client(&k, v, p->data);
	return flow_lookup(&s->pending, &k) != NULL;
}

void pending_client(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
		    const struct pkt_view *v, int pi)
{
	struct flow_key k;
	struct flow_entry *fe;
	struct pending_flow *pf;

	(void)pi;
	flow_key_client(&k, v, p->data);
	fe = flow_lookup(&s->pending, &k);
	if (!fe && has_code(s, p->mark, s->conf->marks.invalid)) {
		/*
		 * Conntrack called it invalid (it carries no entry, so no flag),
		 * and it belongs to no flow being checked: it goes on to TCP as
		 * it would without us.
		 */
		accept_id(s, q, p->id, p->mark);
		return;
	}
	if (fe && has_code(s, p->mark, s->conf->marks.noconn)) {
		/*
		 * Conntrack lost the flow's entry (flushed, evicted): the flag
		 * that brings its segments here is gone with it, so nothing
		 * after this one would be checked.  Failed closed.
		 */
		s->cnt.c[SC_integ_lost]++;
		log_flow(s, fe->value, "conntrack lost the flow, reset");
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		end_flow(s, q, fe, true, p, v);
		return;
	}
	if (!fe) {
		/*
		 * Flagged in conntrack but unknown here (we restarted, or the
		 * flow was already failed), or of no connection at all: nothing
		 * unverified may pass.
		 */
		s->cnt.c[SC_integ_unknown]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		if (!(v->flags & TCP_RST)) {
			nfqueue_flush(q);
			abort_connection(s, v->family, pkt_dst(p->data, v), v->dport,
					 pkt_src(p->data, v), v->sport, p, v);
		}
		return;
	}
	pf = fe->value;
	if (pf->state == PF_DONE || v->payload_len == 0) {
		/* The handshake's ACK, a bare FIN or an RST carry no bytes to check. */
		accept_id(s, q, p->id, p->mark);
		if ((v->flags & TCP_RST) && pf->state != PF_DONE)
			end_flow(s, q, fe, pf->state == PF_WAIT, NULL, NULL);
		return;
	}
	if (!window_captured(pf, v)) {
		/* Bytes of the range we cannot see: they cannot be checked. */
		s->cnt.c[SC_integ_short_capture]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		end_flow(s, q, fe, true, p, v);
		return;
	}
	enum integ_status st = integ_add(&pf->buf, v->seq, p->data + v->payload_off,
					 v->payload_caplen);
	if (st == INTEG_CONFLICT) {
		/*
		 * Bytes that disagree with those already seen (WAIT) or
		 * verified (VERIFIED: the service may not have taken the
		 * verified copy; this one it would).
		 */
		s->cnt.c[SC_integ_conflict]++;
		log_flow(s, pf, "conflicting retransmission, reset");
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		end_flow(s, q, fe, true, p, v);
		return;
	}
	if (pf->state == PF_VERIFIED) {
		/* What it carries of the range is the verified bytes again. */
		accept_id(s, q, p->id, p->mark);
		return;
	}
	if (!hold(s, q, fe, p, v, false))
		return;
	if (st == INTEG_COMPLETE)
		check_bytes(s, q, fe, p, v);
}

/*
 * Clears the flow's conntrack bit, so that its packets bypass the daemon
 * from now on.  False when that failed for now (counted; the next of the
 * service's segments tries again, and the checks go on meanwhile); an
 * entry conntrack no longer has needs no clearing.
 */
static bool unflag(struct server *s, const struct pending_flow *pf)
{
	struct ct_flow f = { .family = pf->family, .sport = pf->rport, .dport = pf->lport };
	size_t alen = pf->family == AF_INET6 ? 16 : 4;
	int r;

	memcpy(f.src, pf->remote, alen);
	memcpy(f.dst, pf->local, alen);
	r = s->ct ? ctnl_set_mark(s->ct, &f, 0, s->conf->marks.ct_integ) : -ENOTSUP;
	if (r == 0 || r == -ENOENT)
		return true;
	s->cnt.c[SC_integ_unflag_error]++;
	return false;
}

void pending_reply(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
		   const struct pkt_view *v)
{
	struct flow_key k;
	struct flow_entry *fe;
	struct pending_flow *pf;

	flow_key_reply(&k, v, p->data);
	fe = flow_lookup(&s->pending, &k);
	if (!fe) {
		/*
		 * Without data (an ACK, the RST of a socket we aborted) it tells
		 * the client nothing.  Data of a flow we do not know (we
		 * restarted, or failed it) is the service talking to a client
		 * nobody verified: dropped, both ends reset.
		 */
		if (v->payload_len == 0 || (v->flags & TCP_RST))
			goto accept;
		s->cnt.c[SC_integ_unknown]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		nfqueue_flush(q);
		abort_connection(s, v->family, pkt_src(p->data, v), v->sport, pkt_dst(p->data, v),
				 v->dport, NULL, NULL);
		return;
	}
	pf = fe->value;
	switch ((enum pf_state)pf->state) {
	case PF_WAIT:
		if (v->flags & TCP_RST) {
			/* The service gave up: nothing held of this flow may follow. */
			nfqueue_verdict_mark(q, p->id, NFQUEUE_ACCEPT, own_mark(s, p->mark));
			end_flow(s, q, fe, true, NULL, NULL);
			return;
		}
		/* The service's first bytes (a banner) wait for the client's. */
		if (v->payload_len > 0) {
			hold(s, q, fe, p, v, true);
			return;
		}
		break;
	case PF_VERIFIED:
		if ((v->flags & TCP_ACK) && (int32_t)(v->ack - (pf->buf.base + pf->buf.need)) >= 0 &&
		    unflag(s, pf)) {
			/* The service's TCP has every verified byte: checking ends. */
			pf->state = PF_DONE;
			fe->expires = s->mono + RELEASE_GRACE;
		}
		break;
	case PF_DONE:
		break;
	}
accept:
	nfqueue_verdict_mark(q, p->id, NFQUEUE_ACCEPT, own_mark(s, p->mark));
}

struct expire_ctx {
	struct server *s;
	struct nfqueue *q;
	enum server_counter why;
};

static void expire_one(struct flow_entry *fe, void *arg)
{
	struct expire_ctx *x = arg;
	struct pending_flow *pf = fe->value;

	/* A finished flow's grace is simply over; the others fail closed. */
	if (pf->state != PF_DONE) {
		x->s->cnt.c[pf->state == PF_VERIFIED && x->why == SC_integ_timeout ?
				    SC_integ_unacked : x->why]++;
		unhold(x->s, x->q, pf, false);
		nfqueue_flush(server_hold_q(x->s, x->q));
		abort_connection(x->s, pf->family, pf->local, pf->lport, pf->remote, pf->rport,
				 NULL, NULL);
	}
	/* flow_gc removes the entry itself. */
	holdacct_flow_del(&x->s->acct, pf->family, pf->remote, 0);
}

void pending_expire(struct server *s, struct nfqueue *q, uint64_t now, enum server_counter why)
{
	struct expire_ctx x = { s, q, why };

	flow_gc(&s->pending, now, expire_one, &x);
}

void pending_reload(struct server *s, struct nfqueue *q)
{
	struct flow_entry *e;
	size_t pos = 0;

	/*
	 * A flow still waiting for its bytes was knocked under the old
	 * configuration, whose entry or key may be gone: it fails closed.  A
	 * verified one needs nothing of the configuration any more (only the
	 * bytes it keeps, and the mark bits, which a reload cannot change).
	 */
	while ((e = flow_next(&s->pending, &pos))) {
		if (((struct pending_flow *)e->value)->state != PF_WAIT)
			continue;
		s->cnt.c[SC_integ_reload]++;
		end_flow(s, q, e, true, NULL, NULL);
	}
}
