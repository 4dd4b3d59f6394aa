/*
 * server.c - the server role's data path (see server.h).
 *
 * Reading order: server_packet() is the whole path for one packet the
 * door parsed (door.h): find the protect entry, then either a SYN (verify
 * the ISN against the entry's keys, for the SYN's own destination and the
 * entry's public ones; check for a replay; let it through or answer like
 * a closed port) or a segment of an integrity flow, either way (the
 * pending object, pending.h, which returns what it decided).  Every
 * decision goes into the caller's list (verdict.h), which the door
 * carries out.
 *
 * A packet that does not get through gets what a closed port gives, one
 * name per case: refuse_knock() counts a SYN without a valid knock, then
 * mimic_closed_port() answers as the entry's on_fail says (the kernel's RST
 * or silence): a new connection (NEWSYN) goes on to the nat rule's closed
 * port, anything else is dropped and answered by server_send_closed_rst(),
 * which sends the RST itself (also for an integrity flow's abort, when
 * there is no socket to destroy: server_abort());
 * answer_unlistened_port() is closed_ports "daemon" for a port nobody
 * listens on: the same work and the same mimic_closed_port() as a probe of
 * a protected port, and the kernel, or our RST, answers as the closed port
 * it is.  verify_work() is the verification every SYN decided here costs:
 * the entry's own (a closed port's SYN: the budget's stand-in entry's),
 * padded to the budget (server.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/isn.h"
#include "common/marks.h"
#include "datapath/server/pending.h"
#include "datapath/server/server.h"

enum { CSUM_SPOIL = 0x55 };	/* no one's-complement equivalent of the old sum */

static const char *const counter_names[SC_MAX] = {
#define X(name, desc) #name,
	SERVER_COUNTERS(X)
#undef X
};

const char *server_counter_name(enum server_counter c)
{
	return c < SC_MAX ? counter_names[c] : "unknown";
}

enum { GUESS_SOURCES = 4096 };	/* source prefixes counted per queue */

static void guess_params_of(const struct conf *c, struct guess_params *ret)
{
	*ret = (struct guess_params){ .threshold = c->guess_threshold, .window = c->guess_window,
				      .penalty = c->guess_penalty };
}

/*
 * MACs (ISN computations) verifying a SYN against entry e takes
 * (isn_verify_syn): per key and candidate destination, one per epoch, and
 * without a timestamp in native mode (no integrity) the nonce form's too.
 */
static unsigned key_macs(const struct conf_protect *e, bool no_ts)
{
	unsigned epochs = e->mode == KG_MODE_NATIVE && e->window ? 3 : 1;
	unsigned forms = e->mode == KG_MODE_NATIVE && no_ts && !e->integrity_len ? 2 : 1;

	return epochs * forms;
}

static unsigned entry_macs(const struct conf_protect *e, bool no_ts)
{
	unsigned dests = 1 + (unsigned)(e->npublic < CONF_MAX_PUBLIC ? e->npublic : CONF_MAX_PUBLIC);

	return (unsigned)e->nkeys * dests * key_macs(e, no_ts);
}

void server_budget_of(const struct conf *c, struct server_budget *ret)
{
	struct server_budget b = { .key = { -1, -1 }, .standin = { -1, -1 } };
	unsigned most[2] = { 0, 0 };	/* [no timestamp] the stand-in's MACs */

	for (size_t i = 0; i < c->nprotect && i < CONF_MAX_PROTECT; i++) {
		const struct conf_protect *e = &c->protect[i];

		if (e->mode != KG_MODE_KNOCK && e->mode != KG_MODE_NATIVE)
			continue;
		for (int no_ts = 0; no_ts <= 1; no_ts++) {
			unsigned n = entry_macs(e, no_ts);

			if (n > b.calls[no_ts][e->mode])
				b.calls[no_ts][e->mode] = n;
			if (n > most[no_ts] && e->nkeys > 0) {
				most[no_ts] = n;
				b.standin[no_ts] = (int)i;
			}
		}
		if (b.key[e->mode] < 0 && e->nkeys > 0)
			b.key[e->mode] = e->keys[0];
	}
	*ret = b;
}

int server_init(struct server *s, const struct conf *c, struct replay *replay,
		struct sockkill *sk, struct rawsock *rs, struct ctnl *ct, unsigned nqueues)
{
	struct guess_params gp;
	int r;

	memset(s, 0, sizeof(*s));
	s->conf = c;
	server_budget_of(c, &s->budget);
	s->replay = replay;
	s->sk = sk;
	s->rs = rs;
	s->ct = ct;
	s->rl = (struct log_ratelimit){ .interval = 10, .burst = 20 };
	s->rl_full = (struct log_ratelimit){ .interval = 60, .burst = 1 };
	s->rl_guess = (struct log_ratelimit){ .interval = 10, .burst = 10 };
	guess_params_of(c, &gp);
	if (guess_init(&s->guess, &gp, GUESS_SOURCES) < 0)
		return -ENOMEM;
	r = pending_init(&s->pending, c, nqueues, &s->cnt, ct, &s->rl, &s->rl_full);
	if (r < 0)
		guess_free(&s->guess);
	return r;
}

void server_free(struct server *s)
{
	pending_free(&s->pending);
	guess_free(&s->guess);
}

void server_note_refusal(struct server *s, int family, const uint8_t *src)
{
	char a[INET6_ADDRSTRLEN];
	uint8_t pfx[16];
	unsigned len;

	if (guess_refused(&s->guess, family, src, s->mono) != GUESS_CROSSED)
		return;
	char prefix[INET6_ADDRSTRLEN + 8];

	s->cnt.c[SC_guessers]++;
	len = guess_prefix(family, src, pfx);
	snprintf(prefix, sizeof(prefix), "%s/%u", inet_ntop(family, pfx, a, sizeof(a)) ? a : "?", len);
	log_peer_event(&s->rl_guess, s->mono, LOG_INFO,
		       &(struct log_event){ .kind = LOG_EV_GUESSING, .source = prefix },
		       "source %s: %u refused knocks within %u s%s", prefix,
		       (unsigned)s->guess.p.threshold, (unsigned)s->guess.p.window,
		       s->guess.p.penalty ? "; its SYNs get the closed-port answer for a while" : "");
}

static const char *addr_str(const struct pkt_view *v, const uint8_t *addr, char *out, size_t len)
{
	return inet_ntop(v->family, addr, out, (socklen_t)len) ? out : "?";
}

void server_send_closed_rst(struct server *s, const struct nfqueue_packet *p,
			    const struct pkt_view *v)
{
	int r = rawsock_answer_closed(s->rs, p->data, v, p->indev, p->skbinfo, s->mono);

	if (r > 0)
		s->cnt.c[SC_rst_sent]++;
	else if (r < 0)
		s->cnt.c[SC_rst_send_error]++;
}

void server_abort(struct server *s, const struct verdict_abort *a, const struct nfqueue_packet *p,
		  const struct pkt_view *v)
{
	int r = s->sk ? sockkill_destroy(s->sk, a->family, a->local, a->lport, a->remote, a->rport)
		      : -ENOTSUP;

	if (r < 0 && a->answer && p)
		server_send_closed_rst(s, p, v);
}

void server_accept_syn(const struct server *s, struct verdicts *out, const struct nfqueue_packet *p)
{
	const struct marks *m = &s->conf->marks;

	verdict_give_mark(out, p->id, NFQUEUE_ACCEPT, marks_own(m, p->mark) | m->accepted);
}

/*
 * A closed port never answers what the kernel's IPv6 input discards after
 * the input hook (pkt.h, v6_discarded): the kernel drops it, silently or
 * with an ICMPv6 Parameter Problem.  So such a packet goes on to the
 * kernel, which does exactly that, with its TCP checksum spoiled first:
 * should the kernel take it after all, TCP drops it instead of answering,
 * and a refused packet never reaches the service either way.
 */
static bool let_kernel_discard(struct server *s, struct verdicts *out,
			       const struct nfqueue_packet *p, const struct pkt_view *v)
{
	if (!v->v6_discarded || p->caplen != p->wirelen)
		return false;
	p->data[v->l4_off + TCP_CSUM_OFF] ^= CSUM_SPOIL;
	p->data[v->l4_off + TCP_CSUM_OFF + 1] ^= CSUM_SPOIL;
	verdict_replace(out, p->id, p->data, p->caplen, marks_own(&s->conf->marks, p->mark));
	s->cnt.c[SC_v6_discarded]++;
	return true;
}

/*
 * Gives p what a closed port would give: the kernel's RST (on_fail
 * "reset"), or nothing (on_fail "drop"); the packet goes no further, but to
 * a closed port.  closed: p is a probe of a port nobody listens on
 * (answer_unlistened_port), which takes the same path.
 */
static void mimic_closed_port(struct server *s, struct verdicts *out,
			      const struct nfqueue_packet *p, const struct pkt_view *v,
			      enum on_fail how, bool closed)
{
	const struct marks *m = &s->conf->marks;

	if (how == ON_FAIL_RESET && let_kernel_discard(s, out, p, v))
		return;
	/*
	 * A new connection from outside (the rule marked it NEWSYN: a SYN, or
	 * an ACK conntrack took up) is refused by the kernel itself: it goes
	 * on unmarked, and the nat rule sends it to rules.refuse_port, of this
	 * host or, for a routed one (forward), of that host, where nobody
	 * listens.  The answer is then a closed port's by construction, IP
	 * options and all, with the routed host's own fields and this hop on
	 * it (nftplan.h).  A closed port's probe goes on the same way, past
	 * every DNAT already, to the port itself (past the host's filter
	 * chains the closed ports' nat rule rewrites its source port, the nat
	 * work the redirect is on the other side).  Anything else (a SYN that
	 * is invalid, untracked or from loopback, a FIN/NULL/Xmas probe) the
	 * nat rule cannot redirect: the RST is ours.
	 */
	if (how == ON_FAIL_RESET && marks_code(m, p->mark) == m->newsyn) {
		verdict_give_mark(out, p->id, NFQUEUE_ACCEPT, marks_own(m, p->mark));
		s->cnt.c[closed ? SC_closed : SC_nat_refusals]++;
		return;
	}
	verdict_drop(out, p->id);
	if (how == ON_FAIL_RESET)
		server_send_closed_rst(s, p, v);
	if (closed)
		s->cnt.c[SC_closed]++;
}

/* A SYN to protected entry pi that is not let through: counted as why, then mimic_closed_port. */
static void refuse_knock(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
			 const struct pkt_view *v, int pi, enum server_counter why)
{
	char src[INET6_ADDRSTRLEN];

	s->cnt.c[why]++;
	s->cnt.port_refused[pi]++;
	if (why == SC_syn_refused || why == SC_replay_refused)
		server_note_refusal(s, v->family, pkt_src(p->data, v));
	/* A flood passes here: format the address only when it will be shown. */
	if (log_getlevel() >= LOG_DEBUG) {
		addr_str(v, pkt_src(p->data, v), src, sizeof(src));
		log_peer_event_later(&s->later, &s->rl, s->mono, LOG_DEBUG,
				     &(struct log_event){ LOG_EV_KNOCK_REFUSED, src, v->dport, NULL },
				     "refused SYN from %s port %u to port %u: %s", src, v->sport,
				     v->dport, server_counter_name(why));
	}
	mimic_closed_port(s, out, p, v, s->conf->protect[pi].on_fail, false);
}

/*
 * The key of entry e this SYN's ISN is a knock for (an index into
 * conf.keys), or -1; the destination it was computed for in *ret_dialled.
 * The candidates are the SYN's own destination and e's public ones
 * (match_knock_dests), tried in that order.  Every key is tried for every
 * candidate, also after a match, so that the time taken says nothing about
 * which one matched.
 */
static int match_key(struct server *s, const struct conf_protect *e,
		     const struct pkt_view *v, const uint8_t *buf, struct isn_match *ret_match,
		     struct dest *ret_dialled)
{
	const struct conf *c = s->conf;
	struct dest d[MATCH_MAX_DESTS];
	size_t nd = match_knock_dests(e, v->family, pkt_dst(buf, v), v->dport, d);
	struct isn_params vp = { .mode = e->mode, .integrity_len = e->integrity_len,
				    .window = e->window, .no_ts = !v->has_ts };
	int matched = -1;

	unsigned macs = key_macs(e, !v->has_ts);

	for (size_t i = 0; i < nd; i++) {
		struct isn_input in = { .family = d[i].family, .dst = d[i].addr,
					.port = d[i].port, .tsval = v->has_ts ? v->tsval : 0 };

		for (size_t k = 0; k < e->nkeys; k++) {
			struct isn_match vm;

			s->isn_work += macs;
			s->isn_calls++;
			if (isn_verify_syn(&c->keyring.keys[e->keys[k]], &vp, &in, v->seq, s->wall,
					   &vm) == ISN_OK &&
			    matched < 0) {
				matched = e->keys[k];
				*ret_match = vm;
				*ret_dialled = d[i];
			}
		}
	}
	return matched;
}

/*
 * A full replay table made room for a fresh knock by forgetting another
 * early (replay.h): counted, and told to the operator even when accepted
 * knocks used up the peer messages (only valid knocks fill the table).
 */
static void note_displaced(struct server *s, const struct replay_room *room)
{
	char a[INET6_ADDRSTRLEN];

	if (room->how != REPLAY_ROOM_SOURCE && room->how != REPLAY_ROOM_KEY)
		return;
	s->cnt.c[room->how == REPLAY_ROOM_SOURCE ? SC_replay_displaced_source
						 : SC_replay_displaced_key]++;
	log_peer(&s->rl_full, s->mono, LOG_WARNING,
		 "replay table full (limits.replay %u): forgot a knock of source %s/%u with key "
		 "\"%s\" early, the oldest of the busiest %s; its replay protection ended",
		 (unsigned)s->conf->max_replay,
		 inet_ntop(room->family, room->prefix, a, sizeof(a)) ? a : "?", room->prefix_len,
		 room->key, room->how == REPLAY_ROOM_SOURCE ? "source" : "key");
}

/*
 * Verifications of the budget (server.h) that entry e's own (done[mode])
 * left undone, with keys and results that count for nothing.
 */
static void pad_verify(struct server *s, const struct pkt_view *v, const uint8_t *buf,
		       const unsigned done[static 2])
{
	struct isn_input in = { .family = v->family, .dst = pkt_dst(buf, v), .port = v->dport,
				.tsval = v->has_ts ? v->tsval : 0 };
	const unsigned *budget = s->budget.calls[!v->has_ts];

	for (int mode = KG_MODE_KNOCK; mode <= KG_MODE_NATIVE; mode++) {
		/* One MAC a call: one epoch (window 0), the classic form only. */
		const struct isn_params vp = { .mode = (enum kg_mode)mode };
		int k = s->budget.key[mode];

		for (unsigned i = done[mode]; k >= 0 && i < budget[mode]; i++) {
			struct isn_match vm;

			s->isn_work++;
			s->isn_calls++;
			s->pad_sink += (uint32_t)isn_verify_syn(&s->conf->keyring.keys[k], &vp, &in,
								v->seq + i, s->wall, &vm);
		}
	}
}

/*
 * Every SYN decided here (for entry e: a protected port's, or for a closed
 * port's probe the stand-in; none when no entry has a key) costs the
 * budget's verifications: e's own (match_key), then the padding.
 */
static int verify_work(struct server *s, const struct conf_protect *e, const struct pkt_view *v,
		       const uint8_t *buf, struct isn_match *ret_match, struct dest *ret_dialled)
{
	unsigned done[2] = { 0, 0 };
	int matched = -1;

	if (e) {
		matched = match_key(s, e, v, buf, ret_match, ret_dialled);
		if (e->mode == KG_MODE_KNOCK || e->mode == KG_MODE_NATIVE)
			done[e->mode] = entry_macs(e, !v->has_ts);
	}
	pad_verify(s, v, buf, done);
	return matched;
}

static void handle_syn(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		       const struct pkt_view *v, int pi)
{
	const struct conf *c = s->conf;
	const struct conf_protect *e = &c->protect[pi];
	const uint8_t *src = pkt_src(p->data, v);
	uint32_t tsval = v->has_ts ? v->tsval : 0;
	struct isn_match vm = { 0 };
	struct dest dialled;
	int matched;
	char a[INET6_ADDRSTRLEN];

	if (e->integrity_len > 0 && pending_requeued(&s->pending, p, v)) {
		/* The one copy our REPEAT sent back: its entry carries the bit now. */
		server_accept_syn(s, out, p);
		return;
	}
	if (guess_penalized(&s->guess, v->family, src, s->mono)) {
		/* Serving a guessing penalty: not even verified (guess.h). */
		s->cnt.c[SC_penalized]++;
		s->cnt.port_refused[pi]++;
		mimic_closed_port(s, out, p, v, e->on_fail, false);
		return;
	}
	matched = verify_work(s, e, v, p->data, &vm, &dialled);
	if (matched < 0) {
		refuse_knock(s, out, p, v, pi, SC_syn_refused);
		return;
	}
	/*
	 * timestamps "required": a SYN without one is refused, after the same
	 * verification as any other, so the time taken tells nothing.
	 */
	if (!v->has_ts && e->timestamps == TIMESTAMPS_REQUIRED) {
		refuse_knock(s, out, p, v, pi, SC_ts_missing);
		return;
	}
	/*
	 * Data in a SYN (TCP Fast Open) would reach the service with the
	 * handshake, before any check: in integrity mode it is not a knock.
	 */
	if (e->integrity_len > 0 && v->payload_len > 0) {
		refuse_knock(s, out, p, v, pi, SC_integ_syn_data);
		return;
	}

	/*
	 * Replays are keyed by the SYN itself (ISN, TSval, its own port), never
	 * by the destination its knock verified for: a captured knock is refused
	 * from another source whichever candidate it matches.
	 */
	if (e->replay && e->mode == KG_MODE_KNOCK && !v->has_ts) {
		/*
		 * A knock-mode knock without a timestamp is one fixed ISN per
		 * port and key (and bytes): every such client sends it, so a
		 * replay cannot be told from another client.  They get in; the
		 * table is not asked (knockgw.conf(5): timestamps).
		 */
		s->cnt.c[SC_replay_unchecked]++;
	} else if (e->replay) {
		struct replay_knock rk = { .isn = v->seq, .tsval = tsval, .port = v->dport,
					   .family = v->family, .src = src,
					   .key = c->keys[matched].name };
		struct replay_room room = { .how = REPLAY_ROOM_FREE };

		if (replay_check(s->replay, &rk, s->mono, e->replay_ttl, &room) ==
		    REPLAY_OTHER_SOURCE) {
			refuse_knock(s, out, p, v, pi, SC_replay_refused);
			return;
		}
		note_displaced(s, &room);
	}

	if (e->integrity_len == 0) {
		server_accept_syn(s, out, p);
	} else {
		switch (pending_start(&s->pending, out, p, v, pi, matched, vm.epoch, &dialled,
				      s->mono)) {
		case PENDING_STARTED:
			break;
		case PENDING_AGAIN:
			/* The same knock again: verdict given there, counted once. */
			return;
		case PENDING_LIVE:
			/* A copy of a live connection's SYN: dropped, counted there. */
			return;
		case PENDING_REFUSED:
			/* No room for its flow (counted there): refused like any other. */
			s->cnt.port_refused[pi]++;
			mimic_closed_port(s, out, p, v, e->on_fail, false);
			return;
		}
	}
	s->cnt.c[SC_syn_accepted]++;
	if (vm.nonce)
		s->cnt.c[SC_syn_nonce]++;
	s->cnt.port_accepted[pi]++;
	s->cnt.key_accepted[matched]++;
	addr_str(v, src, a, sizeof(a));
	/* Written once the batch's verdicts are out (log.h, log_later). */
	log_peer_event_later(&s->later, &s->rl, s->mono, LOG_INFO,
			     &(struct log_event){ LOG_EV_KNOCK_ACCEPTED, a, v->dport,
						  c->keys[matched].name },
			     "knock from %s port %u to port %u accepted with key \"%s\"", a, v->sport,
			     v->dport, c->keys[matched].name);
}

/*
 * closed_ports "daemon": a probe of a port nobody listens on (nftplan.h):
 * a new connection (SYN, ACK) from prerouting, which the rule coded
 * NEWSYN, or a FIN/NULL/Xmas probe from input.  It gets what the same
 * probe of a protected port gets, step by step: a SYN the guessing check
 * and the verifications of the budget's stand-in entry (server.h; their
 * results unused: the same code a refused knock runs, not only as many
 * MACs), then mimic_closed_port(): a new connection goes on, for the
 * kernel to answer as the closed port it is; a FIN/NULL/Xmas probe gets
 * our RST.
 */
static void answer_unlistened_port(struct server *s, struct verdicts *out,
				   const struct nfqueue_packet *p, const struct pkt_view *v)
{
	struct isn_match vm;
	struct dest dialled;

	if ((v->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN &&
	    !guess_penalized(&s->guess, v->family, pkt_src(p->data, v), s->mono)) {
		int si = s->budget.standin[!v->has_ts];

		(void)verify_work(s, si >= 0 ? &s->conf->protect[si] : NULL, v, p->data, &vm,
				  &dialled);
		/* A refusal's lookup in the guessing table, counting nothing. */
		s->pad_sink += guess_known(&s->guess, v->family, pkt_src(p->data, v));
	}
	mimic_closed_port(s, out, p, v, ON_FAIL_RESET, true);
}

bool server_is_reply(const struct server *s, const struct nfqueue_packet *p,
		     const struct pkt_view *v)
{
	return marks_code(&s->conf->marks, p->mark) == s->conf->marks.reply &&
	       match_reply(s->conf, v->family, pkt_src(p->data, v), v->sport) >= 0;
}

void server_malformed(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		      enum pkt_drop why)
{
	/* The kernel's TCP would discard it as well: drop, count. */
	s->cnt.pkt_drop[why]++;
	verdict_drop(out, p->id);
}

/*
 * A segment from the client of an integrity flow: pending.c decides; bytes
 * that failed their check are a refused knock, counted against the source.
 */
static void integrity_segment(struct server *s, struct verdicts *out,
			      const struct nfqueue_packet *p, const struct pkt_view *v)
{
	if (pending_client(&s->pending, out, p, v, s->mono) == PENDING_SEG_FAILED)
		server_note_refusal(s, v->family, pkt_src(p->data, v));
}

void server_packet(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		   const struct pkt_view *pv)
{
	const struct marks *m = &s->conf->marks;
	const struct pkt_view v = *pv;
	uint32_t code;
	int pi;

	pi = match_protect(s->conf, v.family, pkt_dst(p->data, &v), v.dport);
	if (pi < 0) {
		/*
		 * Only the closed_ports rules queue a packet for a port no
		 * entry protects (its hook, and what it carries, say which);
		 * one that comes here after a reload dropped the setting is
		 * answered the same.
		 */
		if (p->hook == NF_INET_LOCAL_IN ||
		    (p->hook == NF_INET_PRE_ROUTING && marks_code(m, p->mark) == m->newsyn &&
		     !(v.flags & TCP_RST))) {
			answer_unlistened_port(s, out, p, &v);
			return;
		}
		s->cnt.c[SC_no_entry]++;
		verdict_drop(out, p->id);
		return;
	}
	code = marks_code(m, p->mark);
	if ((v.flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
		handle_syn(s, out, p, &v, pi);
	} else if ((v.flags & (TCP_SYN | TCP_ACK | TCP_RST)) == 0) {
		/* FIN, NULL, Xmas probes: a listener ignores them, a closed port
		 * answers; answer like the closed port. */
		s->cnt.c[SC_stray]++;
		mimic_closed_port(s, out, p, &v, s->conf->protect[pi].on_fail, false);
	} else if ((code == m->noconn || code == m->newsyn) &&
		   (s->conf->protect[pi].integrity_len == 0 ||
		    !pending_knows(&s->pending, p, &v))) {
		/*
		 * Conntrack knows no connection for it (an ACK scan, an ACK with
		 * a guessed SYN cookie; a flow whose entry was lost): what a
		 * closed port gives, the nat rule's for a new entry (NEWSYN).
		 */
		s->cnt.c[SC_noconn]++;
		mimic_closed_port(s, out, p, &v, s->conf->protect[pi].on_fail, false);
	} else if (code == m->newsyn) {
		/* An integrity flow's segment that lost its conntrack entry. */
		struct nfqueue_packet lost = *p;

		lost.mark = marks_own(m, p->mark) | m->noconn;
		integrity_segment(s, out, &lost, &v);
	} else {
		integrity_segment(s, out, p, &v);
	}
}

void server_set_conf(struct server *s, struct verdicts *out, const struct conf *c, unsigned nqueues)
{
	/* Everything pending ends now, through the one fail-closed path. */
	struct guess_params gp;

	pending_reload(&s->pending, out, s->mono);
	server_counters_carry(&s->cnt, s->conf, c);
	s->conf = c;
	pending_set_conf(&s->pending, c, nqueues);
	server_budget_of(c, &s->budget);
	guess_params_of(c, &gp);
	guess_set_params(&s->guess, &gp);
}

void server_tick(struct server *s, struct verdicts *out)
{
	pending_expire(&s->pending, out, s->mono, SC_integ_timeout);
}
