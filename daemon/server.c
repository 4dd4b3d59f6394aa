/*
 * server.c - the server role's data path (see server.h).
 *
 * Reading order: server_packet() is the whole path for one packet: parse,
 * find the protect entry, then either a SYN (verify the ISN against the
 * entry's keys, check for a replay, let it through or answer like a closed
 * port) or a segment of an integrity flow (hold it until the first
 * integrity_len bytes are in, verify, release in order or reset).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "integ.h"
#include "marks.h"
#include "server.h"
#include "verify.h"

enum {
	MAX_HELD = 32,			/* segments held per integrity flow */
	RELEASE_GRACE = 2,		/* seconds a verified flow is remembered */
	PENDING_MIN = 64,
};

struct held {
	uint32_t id;
	uint32_t seq;
	uint32_t bytes;
	uint32_t mark;
};

/* An integrity flow between its SYN and the check of its first bytes. */
struct pending {
	uint64_t epoch;
	uint32_t isn, tsval;
	uint16_t protect, key;
	int family;
	uint8_t local[16], remote[16];
	uint16_t lport, rport;
	uint32_t held_bytes;
	uint8_t nheld;
	bool released;		/* verified: segments still in the queue pass */
	struct held held[MAX_HELD];
	struct integ_buf buf;
};

static const char *const counter_names[SC_MAX] = {
#define X(name, desc) #name,
	SERVER_COUNTERS(X)
#undef X
};

const char *server_counter_name(enum server_counter c)
{
	return c < SC_MAX ? counter_names[c] : "unknown";
}

int server_init(struct server *s, const struct conf *c, struct replay *replay,
		struct sockkill *sk, struct rawsock *rs, unsigned nqueues)
{
	size_t max_n = 1, cap;

	memset(s, 0, sizeof(*s));
	s->conf = c;
	s->replay = replay;
	s->sk = sk;
	s->rs = rs;
	s->held_bytes_max = c->hold_bytes / (nqueues ? nqueues : 1);
	s->rl = (struct log_ratelimit){ .interval = 10, .burst = 20 };
	s->rl_full = (struct log_ratelimit){ .interval = 60, .burst = 1 };
	for (size_t i = 0; i < c->nprotect; i++)
		if (c->protect[i].integrity_len > max_n)
			max_n = c->protect[i].integrity_len;
	/* As many pending flows as the hold budget could ever fill. */
	cap = s->held_bytes_max / max_n;
	if (cap < PENDING_MIN)
		cap = PENDING_MIN;
	if (cap > c->max_flows)
		cap = c->max_flows;
	return flow_init(&s->pending, cap, sizeof(struct pending));
}

void server_free(struct server *s)
{
	/* Pending flows hold no secrets, but their buffers are peer data. */
	if (s->pending.values)
		memset(s->pending.values, 0, s->pending.cap * s->pending.value_size);
	flow_free(&s->pending);
}

static int find_protect(const struct conf *c, const struct pkt_view *v, const uint8_t *buf)
{
	for (size_t i = 0; i < c->nprotect; i++) {
		const struct conf_protect *e = &c->protect[i];

		if (e->port != v->dport)
			continue;
		if (e->naddrs == 0)
			return (int)i;
		for (size_t a = 0; a < e->naddrs; a++)
			if (prefix_contains(&e->addrs[a], v->family, pkt_dst(buf, v)))
				return (int)i;
	}
	return -1;
}

static const char *addr_str(const struct pkt_view *v, const uint8_t *addr, char *out, size_t len)
{
	return inet_ntop(v->family, addr, out, (socklen_t)len) ? out : "?";
}

/* Sends the RST a closed port would send for this segment (rst.h). */
static void send_closed_rst(struct server *s, const struct nfqueue_packet *p,
			    const struct pkt_view *v)
{
	int r = rawsock_answer_closed(s->rs, p->data, v, p->indev, p->skbinfo, s->mono);

	if (r > 0)
		s->cnt.c[SC_rst_sent]++;
	else if (r < 0)
		s->cnt.c[SC_rst_send_error]++;
}

/* What a closed port gives: the kernel's RST, or nothing (on_fail "drop"). */
static void answer_closed(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
			  const struct pkt_view *v, const struct conf_protect *e)
{
	nfqueue_verdict(q, p->id, NFQUEUE_DROP);
	if (e->on_fail == ON_FAIL_RESET)
		send_closed_rst(s, p, v);
}

static void refuse(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
		   const struct pkt_view *v, int pi, enum server_counter why)
{
	char src[INET6_ADDRSTRLEN];

	s->cnt.c[why]++;
	s->cnt.port_refused[pi]++;
	/* A flood passes here: format the address only when it will be shown. */
	if (log_getlevel() >= LOG_DEBUG)
		log_peer(&s->rl, s->mono, LOG_DEBUG, "refused SYN from %s port %u to port %u: %s",
			 addr_str(v, pkt_src(p->data, v), src, sizeof(src)), v->sport, v->dport,
			 server_counter_name(why));
	answer_closed(s, q, p, v, &s->conf->protect[pi]);
}

static void flow_key_of(struct flow_key *k, const struct pkt_view *v, const uint8_t *buf)
{
	flow_key_make(k, v->family, pkt_src(buf, v), pkt_dst(buf, v), v->sport, v->dport);
}

/*
 * The key of entry e this SYN's ISN is a knock for (an index into
 * conf.keys), or -1.  Every key is tried, also after a match, so that the
 * time taken says nothing about which one matched.
 */
static int match_key(const struct server *s, const struct conf_protect *e,
		     const struct pkt_view *v, const uint8_t *buf, uint64_t *epoch)
{
	const struct conf *c = s->conf;
	struct isn_input in = { .family = v->family, .dst = pkt_dst(buf, v), .port = v->dport,
				.tsval = v->has_ts ? v->tsval : 0 };
	struct verify_params vp = { .mode = e->mode, .integrity_len = e->integrity_len,
				    .window = e->window };
	int matched = -1;

	for (size_t k = 0; k < e->nkeys; k++) {
		uint64_t ep;

		if (verify_syn(&c->keyring.keys[e->keys[k]], &vp, &in, v->seq, s->wall, &ep) ==
			    VERIFY_OK &&
		    matched < 0) {
			matched = e->keys[k];
			*epoch = ep;
		}
	}
	return matched;
}

static void handle_syn(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
		       const struct pkt_view *v, int pi)
{
	const struct conf *c = s->conf;
	const struct conf_protect *e = &c->protect[pi];
	const uint8_t *dst = pkt_dst(p->data, v), *src = pkt_src(p->data, v);
	uint32_t tsval = v->has_ts ? v->tsval : 0;
	uint64_t epoch = 0;
	int matched = match_key(s, e, v, p->data, &epoch);

	if (matched < 0) {
		refuse(s, q, p, v, pi, SC_syn_refused);
		return;
	}

	if (e->replay) {
		switch (replay_check(s->replay, v->seq, tsval, v->dport, v->family, src, s->mono,
				     e->replay_ttl)) {
		case REPLAY_FRESH:
		case REPLAY_SAME_SOURCE:
			break;
		case REPLAY_OTHER_SOURCE:
			refuse(s, q, p, v, pi, SC_replay_refused);
			return;
		case REPLAY_FULL:
			/*
			 * Only a valid knock gets here: the operator must hear of
			 * it even when accepted knocks used up the peer messages.
			 */
			log_peer(&s->rl_full, s->mono, LOG_WARNING,
				 "replay table full (limits.replay %u): refusing new knocks "
				 "until entries expire", (unsigned)c->max_replay);
			refuse(s, q, p, v, pi, SC_replay_full);
			return;
		}
	}

	char a[INET6_ADDRSTRLEN];
	if (e->integrity_len == 0) {
		nfqueue_verdict(q, p->id, NFQUEUE_ACCEPT);
	} else {
		struct flow_key k;
		bool created;
		struct flow_entry *fe;

		flow_key_of(&k, v, p->data);
		fe = flow_insert(&s->pending, &k, s->mono + c->integrity_timeout, &created);
		if (!fe) {
			log_peer(&s->rl_full, s->mono, LOG_WARNING,
				 "pending-flow table full (limits.flows, limits.hold_bytes): "
				 "refusing new integrity knocks");
			refuse(s, q, p, v, pi, SC_flows_full);
			return;
		}
		struct pending *pf = fe->value;
		if (!created && pf->released && pf->isn == v->seq) {
			/* A late copy of a verified flow's SYN: do not flag it again. */
			nfqueue_verdict(q, p->id, NFQUEUE_ACCEPT);
		} else if (created || pf->nheld == 0) {
			/* New, or a retransmitted SYN before any data: (re)start. */
			memset(pf, 0, sizeof(*pf));
			pf->epoch = epoch;
			pf->isn = v->seq;
			pf->tsval = tsval;
			pf->protect = (uint16_t)pi;
			pf->key = (uint16_t)matched;
			pf->family = v->family;
			memcpy(pf->local, dst, v->addr_len);
			memcpy(pf->remote, src, v->addr_len);
			pf->lport = v->dport;
			pf->rport = v->sport;
			integ_init(&pf->buf, v->seq, e->integrity_len);
			fe->expires = s->mono + c->integrity_timeout;
		}
		/* Our chain sees the mark, flags the conntrack entry, accepts. */
		if (!pf->released)
			nfqueue_verdict_mark(q, p->id, NFQUEUE_REPEAT,
					     (p->mark & ~(uint32_t)KGW_MARK_MASK) | KGW_MARK_INTEG);
	}
	s->cnt.c[SC_syn_accepted]++;
	s->cnt.port_accepted[pi]++;
	log_peer(&s->rl, s->mono, LOG_INFO, "knock from %s port %u to port %u accepted with key \"%s\"",
		 addr_str(v, src, a, sizeof(a)), v->sport, v->dport, c->keys[matched].name);
}

/*
 * Resets both ends of a connection whose bytes failed or never came.
 * Aborting the service's socket (SOCK_DESTROY) makes the kernel send the
 * client an RST with the socket's own sequence numbers.  Without a socket to
 * abort (the handshake never completed), the client's latest segment, if we
 * have it, is answered with the closed-port RST: its ack is the server's next
 * sequence number, so that RST lands in the client's window.
 */
static void reset_both(struct server *s, int family, const uint8_t *local, uint16_t lport,
		       const uint8_t *remote, uint16_t rport, const struct nfqueue_packet *p,
		       const struct pkt_view *v)
{
	int r = s->sk ? sockkill_destroy(s->sk, family, local, lport, remote, rport) : -ENOTSUP;

	if (r < 0 && p)
		send_closed_rst(s, p, v);
}

/* Drops a pending flow's held segments, so none of its bytes reach the service. */
static void drop_held(struct server *s, struct nfqueue *q, struct pending *pf)
{
	for (size_t i = 0; i < pf->nheld; i++) {
		nfqueue_verdict(q, pf->held[i].id, NFQUEUE_DROP);
		s->held_bytes -= pf->held[i].bytes;
	}
	s->held_packets -= pf->nheld;
	pf->nheld = 0;
	nfqueue_set_held(q, s->held_packets);
	/* Verdicts first: the aborted socket must find nothing left to read. */
	nfqueue_flush(q);
}

/* Fails an integrity flow closed: dropped, both ends reset, forgotten. */
static void fail_flow(struct server *s, struct nfqueue *q, struct flow_entry *fe,
		      const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct pending *pf = fe->value;

	drop_held(s, q, pf);
	reset_both(s, pf->family, pf->local, pf->lport, pf->remote, pf->rport, p, v);
	memset(pf, 0, sizeof(*pf));
	flow_remove(&s->pending, fe);
}

/* Verified: release the held segments in sequence order, then forget. */
static void release_flow(struct server *s, struct nfqueue *q, struct flow_entry *fe)
{
	struct pending *pf = fe->value;

	/* Insertion sort by distance from ISN+1; at most MAX_HELD entries. */
	for (size_t i = 1; i < pf->nheld; i++) {
		struct held h = pf->held[i];
		size_t j = i;

		while (j > 0 && (int32_t)(pf->held[j - 1].seq - h.seq) > 0) {
			pf->held[j] = pf->held[j - 1];
			j--;
		}
		pf->held[j] = h;
	}
	for (size_t i = 0; i < pf->nheld; i++) {
		/* The first one also clears the flow's conntrack flag. */
		if (i == 0)
			nfqueue_verdict_mark(q, pf->held[i].id, NFQUEUE_REPEAT,
					     (pf->held[i].mark & ~(uint32_t)KGW_MARK_MASK) |
						     KGW_MARK_RELEASE);
		else
			nfqueue_verdict(q, pf->held[i].id, NFQUEUE_ACCEPT);
		s->held_bytes -= pf->held[i].bytes;
	}
	s->held_packets -= pf->nheld;
	nfqueue_set_held(q, s->held_packets);
	/*
	 * Segments the rules queued before the RELEASE verdict cleared the
	 * conntrack flag (sent right behind the completing one) still come to
	 * us: keep the flow as verified for a moment so that they pass instead
	 * of resetting it.  The kernel's TCP trims any late copy of bytes it
	 * already has.
	 */
	pf->nheld = 0;
	pf->held_bytes = 0;
	pf->released = true;
	memset(&pf->buf, 0, sizeof(pf->buf));
	fe->expires = s->mono + RELEASE_GRACE;
}

static void handle_segment(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
			   const struct pkt_view *v, int pi)
{
	const struct conf *c = s->conf;
	const struct conf_protect *e = &c->protect[pi];
	struct flow_key k;
	struct flow_entry *fe;
	struct pending *pf;

	flow_key_of(&k, v, p->data);
	fe = flow_lookup(&s->pending, &k);
	if (!fe) {
		/*
		 * Flagged in conntrack but unknown here: we restarted or the
		 * flow was already failed.  Nothing unverified may pass.
		 */
		s->cnt.c[SC_integ_unknown]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		if (!(v->flags & TCP_RST)) {
			nfqueue_flush(q);
			reset_both(s, v->family, pkt_dst(p->data, v), v->dport,
				   pkt_src(p->data, v), v->sport, p, v);
		}
		return;
	}
	pf = fe->value;
	if (pf->released) {
		nfqueue_verdict(q, p->id, NFQUEUE_ACCEPT);
		return;
	}

	/* The handshake's ACK, a bare FIN or an RST carry no bytes to check. */
	if (v->payload_len == 0) {
		nfqueue_verdict(q, p->id, NFQUEUE_ACCEPT);
		if (v->flags & TCP_RST)
			fail_flow(s, q, fe, NULL, NULL);
		return;
	}

	/* Every byte of the window this segment covers must have been captured. */
	int64_t off = (int32_t)(v->seq - pf->buf.base);
	if (off < e->integrity_len && off + (int64_t)v->payload_len > 0 &&
	    v->payload_caplen < v->payload_len &&
	    off + (int64_t)v->payload_caplen < e->integrity_len) {
		s->cnt.c[SC_integ_short_capture]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		fail_flow(s, q, fe, p, v);
		return;
	}

	uint32_t bytes = (uint32_t)(p->wirelen > p->caplen ? p->wirelen : p->caplen);
	if (pf->nheld == MAX_HELD || pf->held_bytes + bytes > c->hold_flow_bytes ||
	    s->held_bytes + bytes > s->held_bytes_max) {
		/* Dropped, not failed: the client retransmits it later. */
		s->cnt.c[SC_hold_cap]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		return;
	}

	enum integ_status st = integ_add(&pf->buf, v->seq, p->data + v->payload_off,
					 v->payload_caplen);
	pf->held[pf->nheld++] = (struct held){ .id = p->id, .seq = v->seq, .bytes = bytes,
					       .mark = p->mark };
	pf->held_bytes += bytes;
	s->held_bytes += bytes;
	s->held_packets++;
	nfqueue_set_held(q, s->held_packets);

	char a[INET6_ADDRSTRLEN];
	if (st == INTEG_MORE)
		return;
	if (st == INTEG_CONFLICT) {
		s->cnt.c[SC_integ_conflict]++;
		log_peer(&s->rl, s->mono, LOG_NOTICE,
			 "integrity flow from %s port %u to port %u: conflicting retransmission, reset",
			 addr_str(v, pkt_src(p->data, v), a, sizeof(a)), v->sport, v->dport);
		fail_flow(s, q, fe, p, v);
		return;
	}

	struct isn_input in = { .family = pf->family, .dst = pf->local, .port = pf->lport,
				.tsval = pf->tsval };
	struct verify_params vp = { .mode = e->mode, .integrity_len = e->integrity_len,
				    .window = e->window };
	if (verify_payload(&c->keyring.keys[pf->key], &vp, &in, pf->isn, pf->epoch,
			   pf->buf.data) == VERIFY_OK) {
		s->cnt.c[SC_integ_ok]++;
		release_flow(s, q, fe);
	} else {
		s->cnt.c[SC_integ_fail]++;
		log_peer(&s->rl, s->mono, LOG_NOTICE,
			 "integrity check failed for %s port %u to port %u, connection reset",
			 addr_str(v, pkt_src(p->data, v), a, sizeof(a)), v->sport, v->dport);
		fail_flow(s, q, fe, p, v);
	}
}

/*
 * closed_ports "daemon": a SYN or FIN/NULL/Xmas probe to a port nobody
 * listens on.  A refused knock spends its verification first; so does a SYN
 * here, against the first protect entry's keys (the result is not used),
 * then the same drop and RST, so that the two take the same time.
 */
static void answer_closed_port(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p,
			       const struct pkt_view *v)
{
	uint64_t epoch;

	if ((v->flags & TCP_SYN) && s->conf->nprotect > 0)
		(void)match_key(s, &s->conf->protect[0], v, p->data, &epoch);
	s->cnt.c[SC_closed]++;
	nfqueue_verdict(q, p->id, NFQUEUE_DROP);
	send_closed_rst(s, p, v);
}

void server_packet(struct server *s, struct nfqueue *q, const struct nfqueue_packet *p)
{
	struct pkt_view v;
	enum pkt_drop why;
	int pi;

	why = pkt_parse(p->data, p->caplen, &v);
	if (why != PKT_OK) {
		/* The kernel's TCP would discard it as well: drop, count. */
		s->cnt.pkt_drop[why]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		return;
	}
	pi = find_protect(s->conf, &v, p->data);
	if (pi < 0) {
		if (s->conf->closed_ports == CLOSED_DAEMON && !(v.flags & (TCP_ACK | TCP_RST))) {
			answer_closed_port(s, q, p, &v);
			return;
		}
		s->cnt.c[SC_no_entry]++;
		nfqueue_verdict(q, p->id, NFQUEUE_DROP);
		return;
	}
	if ((v.flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
		handle_syn(s, q, p, &v, pi);
	} else if ((v.flags & (TCP_SYN | TCP_ACK | TCP_RST)) == 0) {
		/* FIN, NULL, Xmas probes: a listener ignores them, a closed port
		 * answers; answer like the closed port. */
		s->cnt.c[SC_stray]++;
		answer_closed(s, q, p, &v, &s->conf->protect[pi]);
	} else {
		handle_segment(s, q, p, &v, pi);
	}
}

struct tick_ctx {
	struct server *s;
	struct nfqueue *q;
};

/* Drops a pending flow's held segments and resets it; why is counted. */
static void end_pending(struct server *s, struct nfqueue *q, struct pending *pf,
			enum server_counter why)
{
	s->cnt.c[why]++;
	drop_held(s, q, pf);
	reset_both(s, pf->family, pf->local, pf->lport, pf->remote, pf->rport, NULL, NULL);
}

static void expire(struct flow_entry *fe, void *arg)
{
	struct tick_ctx *t = arg;
	struct pending *pf = fe->value;

	if (!pf->released)	/* a released flow's grace is simply over */
		end_pending(t->s, t->q, pf, SC_integ_timeout);
}

static void expire_reload(struct flow_entry *fe, void *arg)
{
	struct tick_ctx *t = arg;
	struct pending *pf = fe->value;

	if (!pf->released)
		end_pending(t->s, t->q, pf, SC_integ_reload);
}


void server_set_conf(struct server *s, struct nfqueue *q, const struct conf *c, unsigned nqueues)
{
	struct tick_ctx t = { s, q };

	/* Everything pending expires now, through the one fail-closed path. */
	flow_gc(&s->pending, UINT64_MAX, expire_reload, &t);
	s->conf = c;
	s->held_bytes_max = c->hold_bytes / (nqueues ? nqueues : 1);
}

void server_tick(struct server *s, struct nfqueue *q)
{
	struct tick_ctx t = { s, q };

	flow_gc(&s->pending, s->mono, expire, &t);
}
