/*
 * client.c - the client role's data path (see client.h).
 *
 * Reading order: client_out() takes a packet going out; a SYN leaving this
 * host goes to knock_syn() (find the knock entry, pin retransmissions,
 * compute the ISN, make the conntrack entry, let it go); on the user path,
 * every other packet of a knocked flow goes to translate(), which finds
 * the flow's shift with user_shift(): in the worker's table of shifts,
 * filled at the SYN, or else (a restarted daemon, a full table) in the
 * conntrack labels the SYN's entry was made with, read by tuple.  Nothing
 * about the packet's own conntrack state or marks is needed, so a packet
 * conntrack ties to no entry (a RST it calls invalid) leaves translated
 * too.
 *
 * Gateway client role (`from`): a SYN this host routes comes from the
 * prerouting_raw rule, at prerouting with our FWD code in its mark, and
 * takes the same path with three differences: its entry is the one whose
 * `from` holds the source; it never takes an integrity intent (those belong
 * to this host's sockets; conf_validate refuses integrity with `from`);
 * and its conntrack entry carries the source NAT a masquerade would give
 * (gwnat.h), since the kernel sets up none for an entry made before the
 * SYN.  Later packets of such a flow come from prerouting_raw going out
 * (FWD code again, before conntrack, like a local flow's from output_raw)
 * and from the forward hook coming back (like a local flow's from input).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "common/bytes.h"
#include "common/csum.h"
#include "common/isn.h"
#include "common/pkt.h"
#include "datapath/client/client.h"
#include "datapath/client/seqrewrite.h"
#include "kernel/gwnat.h"

enum {
	SYN_PIN_SECONDS = 120,		/* Linux gives up on a SYN well before this */
	CT_SYN_TIMEOUT = 120,		/* conntrack's own SYN_SENT timeout */
	MAX_PINNED = 65536,
	/*
	 * A flow idle this long has its shift read from conntrack again at its
	 * next packet (one request); its table slot goes to busier flows.
	 */
	SHIFT_IDLE_SECONDS = 300,
};

/* What a first SYN was given, so its retransmissions look the same. */
struct pinned {
	uint32_t kernel_isn, knock_isn;
	uint32_t tsval;
};

/* User path: what the worker knows of a flow's shift (table `shifts`). */
struct known_shift {
	bool translated;	/* false: conntrack says the flow is none of ours */
	uint32_t delta;
};

static const char *const counter_names[CC_MAX] = {
#define X(name, desc) #name,
	CLIENT_COUNTERS(X)
#undef X
};

const char *client_counter_name(enum client_counter cc)
{
	return cc < CC_MAX ? counter_names[cc] : "unknown";
}

int client_init(struct client *c, const struct conf *conf, struct ctnl *ct, struct rawsock *rs,
		struct intent_table *intents)
{
	memset(c, 0, sizeof(*c));
	c->conf = conf;
	c->ct = ct;
	c->rs = rs;
	c->intents = intents;
	c->rl = (struct log_ratelimit){ .interval = 10, .burst = 20 };
	int r = flow_init(&c->syns, conf->max_flows < MAX_PINNED ? conf->max_flows : MAX_PINNED,
			  sizeof(struct pinned));
	/* After flow_init, which made sure libsodium is initialised. */
	if (r == 0)
		randombytes_buf(c->nonce_key, sizeof(c->nonce_key));
	/* translate cannot change without a restart: only the user path needs it. */
	if (r == 0 && conf->translate == TRANSLATE_USER)
		r = flow_init(&c->shifts, conf->max_flows, sizeof(struct known_shift));
	return r;
}

void client_free(struct client *c)
{
	flow_free(&c->syns);
	if (c->shifts.cap)
		flow_free(&c->shifts);
	sodium_memzero(c->nonce_key, sizeof(c->nonce_key));
}

/*
 * Writes the checksum of a rewritten packet: in full when the kernel had not
 * finished it (offload; the field then holds only the pseudo-header sum),
 * else incrementally as seqrewrite already did.  The kernel trusts the field
 * as written after a verdict that replaces the packet.
 */
static bool finish_csum(uint8_t *buf, const struct pkt_view *v, uint32_t skbinfo)
{
	if (!(skbinfo & NFQA_SKB_CSUMNOTREADY))
		return true;
	if (v->payload_caplen != v->payload_len)
		return false;
	put_be16(buf + v->l4_off + TCP_CSUM_OFF, csum_tcp_full(buf, v));
	return true;
}

/* Refuses a transparent connection that only knock-connect can make. */
static void refuse_integrity(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
			     const struct pkt_view *v)
{
	char dst[INET6_ADDRSTRLEN];

	c->cnt[CC_integrity_refused]++;
	inet_ntop(v->family, pkt_dst(p->data, v), dst, sizeof(dst));
	log_peer(&c->rl, c->mono, LOG_NOTICE,
		 "connection to %s port %u refused: its knock uses integrity mode, which needs "
		 "the first bytes; connect with knock-connect (ssh -o ProxyCommand='knock-connect "
		 "%%h %%p')", dst, v->dport);
	verdict_drop(out, p->id);
	/* An RST to the local socket fails connect() now, not after minutes. */
	rawsock_answer_closed(c->rs, p->data, v, 0, p->skbinfo, c->mono);
}

/* User path: remembers what conntrack (or the SYN) said of a flow's shift. */
static void remember(struct client *c, const struct ct_flow *f, bool translated, uint32_t delta)
{
	struct flow_key k;
	bool created;
	struct flow_entry *e;

	if (c->shifts.cap == 0)
		return;
	flow_key_make(&k, f->family, f->src, f->dst, f->sport, f->dport);
	e = flow_insert(&c->shifts, &k, c->mono + SHIFT_IDLE_SECONDS, &created);
	if (!e)
		return;		/* full: conntrack is asked at each packet instead */
	e->expires = c->mono + SHIFT_IDLE_SECONDS;
	*(struct known_shift *)e->value = (struct known_shift){ translated, delta };
}

/*
 * User path: the shift of flow f (its original direction): the table's, or
 * else the one in the labels of its conntrack entry, which a restarted
 * daemon finds there as the SYN's left it.  0, -ENOENT when f is none of
 * ours (no entry, or no label of ours: a flow that predates the daemon, or
 * one the kernel path translates), or -errno when conntrack could not say.
 */
static int user_shift(struct client *c, const struct ct_flow *f, uint32_t *ret_delta)
{
	struct flow_key k;
	struct flow_entry *e = NULL;
	struct ct_info ci;
	uint32_t delta = 0;
	bool ours;
	int r;

	if (c->shifts.cap) {
		flow_key_make(&k, f->family, f->src, f->dst, f->sport, f->dport);
		e = flow_lookup(&c->shifts, &k);
	}
	if (e) {
		const struct known_shift *ks = e->value;

		e->expires = c->mono + SHIFT_IDLE_SECONDS;
		if (!ks->translated)
			return -ENOENT;
		*ret_delta = ks->delta;
		return 0;
	}
	c->cnt[CC_shift_lookups]++;
	r = ctnl_get(c->ct, f, &ci);
	if (r < 0 && r != -ENOENT)
		return r;
	ours = r == 0 && marks_label_get(c->conf->ct_label, ci.labels, &delta);
	remember(c, f, ours, delta);
	if (!ours)
		return -ENOENT;
	*ret_delta = delta;
	return 0;
}

/* Creates the conntrack entry; replaces a stale one left by an old flow. */
static int make_entry(struct client *c, const struct ct_flow *f, uint32_t kernel_isn,
		      uint32_t delta)
{
	bool user = c->conf->translate == TRANSLATE_USER;
	struct ct_labels lab;
	int r;

	/* The user path keeps the shift in the entry's labels (marks.h). */
	if (user)
		marks_label_put(c->conf->ct_label, delta, lab.val, lab.mask);
	r = ctnl_create(c->ct, f, !user, kernel_isn, delta, CT_SYN_TIMEOUT, user ? &lab : NULL);
	if (r != -EEXIST)
		return r;

	/*
	 * Ours for this very SYN (a retransmission) when it carries the same
	 * shift from the same kernel ISN; the user path keeps only the shift.
	 * The same kernel ISN with another shift is this connection knocked by
	 * a daemon that died since (for an older TSval): the shift must be ours.
	 */
	struct ct_info ci;
	uint32_t shift;
	r = ctnl_get(c->ct, f, &ci);
	bool same = r == 0 && (user ? marks_label_get(c->conf->ct_label, ci.labels, &shift) &&
			       shift == delta
				    : ci.has_seqadj && ci.pos == kernel_isn && ci.delta == delta);
	if (same)
		return 0;
	/* Left over from an earlier connection on the same 4-tuple. */
	c->cnt[CC_stale_replaced]++;
	ctnl_delete(c->ct, f);
	return ctnl_create(c->ct, f, !user, kernel_isn, delta, CT_SYN_TIMEOUT, user ? &lab : NULL);
}

/*
 * Addresses that cannot cross the Internet as they are (RFC 1918, RFC 6598
 * shared space, IPv6 unique local): a router sending such a source to a
 * destination outside them masquerades it.
 */
static bool is_private(int family, const uint8_t *a)
{
	if (family == AF_INET6)
		return (a[0] & 0xfe) == 0xfc;
	return a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
	       (a[0] == 192 && a[1] == 168) || (a[0] == 100 && (a[1] & 0xc0) == 64);
}

/*
 * A routed flow's entry: source NAT'ed as a masquerade would do it when a
 * private source goes to a public destination (gwnat.h); 0 or -errno.
 */
static int gateway_nat(struct ct_flow *f)
{
	if (!is_private(f->family, f->src) || is_private(f->family, f->dst))
		return 0;
	f->snat = true;
	return gwnat_source(f->family, f->dst, f->snat_addr);
}

/*
 * The nonce of a SYN without a timestamp (native auth-only knocks: isn.h):
 * a keyed hash of its flow and kernel ISN, so two connections get unrelated
 * nonces and a retransmission (same flow, same kernel ISN) the same one
 * even when no pin is left for it.
 */
static uint8_t syn_nonce(const struct client *c, const struct flow_key *fk, uint32_t kernel_isn)
{
	uint8_t m[sizeof(fk->b) + 4], h[crypto_shorthash_BYTES];

	memcpy(m, fk->b, sizeof(fk->b));
	put_be32(m + sizeof(fk->b), kernel_isn);
	crypto_shorthash(h, m, sizeof(m), c->nonce_key);
	return h[0];
}

/* A verdict without a new packet; a routed SYN goes on without our code. */
static void syn_verdict(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
			bool routed, enum nfqueue_verdict verdict)
{
	if (routed)
		verdict_give_mark(out, p->id, verdict, marks_own(&c->conf->marks, p->mark));
	else
		verdict_give(out, p->id, verdict);
}

static void knock_syn(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
		      const struct pkt_view *v, bool routed)
{
	const struct conf *conf = c->conf;
	const uint8_t *dst = pkt_dst(p->data, v), *src = pkt_src(p->data, v);
	const struct conf_knock *k =
		routed ? match_knock_from(conf, v->family, src, dst, v->dport)
		       : match_knock(conf, v->family, dst, v->dport);
	uint8_t payload[INTEG_MAX_LEN];
	size_t plen = 0;

	if (!k) {
		c->cnt[CC_no_entry]++;
		syn_verdict(c, out, p, routed, NFQUEUE_ACCEPT);
		return;
	}
	if (routed && k->integrity_len) {
		/* conf_validate refuses it; never take this host's intents. */
		c->cnt[CC_integrity_refused]++;
		syn_verdict(c, out, p, routed, NFQUEUE_DROP);
		return;
	}

	struct flow_key fk;
	bool created;
	flow_key_make(&fk, v->family, src, dst, v->sport, v->dport);
	struct flow_entry *fe = flow_lookup(&c->syns, &fk);
	struct pinned *pin = fe ? fe->value : NULL;
	bool retransmit = pin && pin->kernel_isn == v->seq;
	uint32_t tsval = v->has_ts ? v->tsval : 0;
	uint32_t knock_isn;

	if (retransmit) {
		c->cnt[CC_retransmits]++;
		tsval = pin->tsval;
		knock_isn = pin->knock_isn;
	} else {
		if (k->integrity_len) {
			if (intent_take(c->intents, v->family, v->sport, dst, v->dport, payload,
					sizeof(payload), &plen, c->mono) < 0 ||
			    plen != k->integrity_len) {
				refuse_integrity(c, out, p, v);
				return;
			}
			c->cnt[CC_intents_used]++;
		}
		struct isn_input in = { .family = v->family, .dst = dst, .port = v->dport,
					.tsval = tsval };
		const struct kg_key *key = &conf->keyring.keys[k->key];
		uint64_t epoch = isn_epoch(c->wall, k->window);

		/*
		 * Without a timestamp a native knock takes the nonce form: two
		 * such clients (or connections) are then two knocks, not one
		 * the server would take for a replay.
		 */
		if (k->mode == KG_MODE_NATIVE && !v->has_ts && !k->integrity_len)
			knock_isn = isn_native_nonce(key, &in, epoch, syn_nonce(c, &fk, v->seq));
		else
			knock_isn = isn_compute(key, k->mode, &in, epoch, payload, plen);
		sodium_memzero(payload, sizeof(payload));
	}

	uint32_t delta = knock_isn - v->seq;
	struct ct_flow f = { .family = v->family, .sport = v->sport, .dport = v->dport };
	memcpy(f.src, src, v->addr_len);
	memcpy(f.dst, dst, v->addr_len);
	int r = routed ? gateway_nat(&f) : 0;
	if (r == 0)
		r = make_entry(c, &f, v->seq, delta);
	if (r == 0 && conf->translate == TRANSLATE_USER)
		remember(c, &f, true, delta);
	if (r < 0) {
		char a[INET6_ADDRSTRLEN];

		c->cnt[CC_ct_errors]++;
		inet_ntop(v->family, dst, a, sizeof(a));
		log_peer(&c->rl, c->mono, LOG_WARNING,
			 "cannot create the conntrack entry for a connection to %s port %u: %s; "
			 "SYN dropped", a, v->dport, strerror(-r));
		syn_verdict(c, out, p, routed, NFQUEUE_DROP);
		return;
	}
	if (!retransmit) {
		fe = flow_insert(&c->syns, &fk, c->mono + SYN_PIN_SECONDS, &created);
		if (fe) {
			pin = fe->value;
			*pin = (struct pinned){ .kernel_isn = v->seq, .knock_isn = knock_isn,
						.tsval = tsval };
			fe->expires = c->mono + SYN_PIN_SECONDS;
		}
		c->cnt[CC_knocked]++;
	}

	/*
	 * The kernel path changes nothing here unless a retransmission's TSval
	 * must be pinned; the user path writes the knock ISN itself.
	 */
	bool user = conf->translate == TRANSLATE_USER;
	bool pin_ts = v->has_ts && v->tsval != tsval;
	uint32_t mark = routed ? marks_own(&conf->marks, p->mark) : p->mark;
	if (!user && !pin_ts) {
		syn_verdict(c, out, p, routed, NFQUEUE_ACCEPT);
		return;
	}
	if (p->caplen > sizeof(c->buf) || p->caplen != p->wirelen) {
		c->cnt[CC_untranslatable]++;
		syn_verdict(c, out, p, routed, NFQUEUE_DROP);
		return;
	}
	memcpy(c->buf, p->data, p->caplen);
	struct pkt_view nv = *v;

	/* The kernel path keeps the kernel's ISN: conntrack shifts the SYN. */
	seqrewrite_syn(c->buf, &nv, user ? knock_isn : v->seq, tsval);
	if (!finish_csum(c->buf, &nv, p->skbinfo)) {
		c->cnt[CC_untranslatable]++;
		syn_verdict(c, out, p, routed, NFQUEUE_DROP);
		return;
	}
	verdict_replace(out, p->id, c->buf, p->caplen, mark);
}

/* A flow's original direction from one of its packets going dir. */
static void flow_of(const uint8_t *pkt, const struct pkt_view *v, enum seq_dir dir,
		    struct ct_flow *ret)
{
	bool out = dir == SEQ_OUT;

	*ret = (struct ct_flow){ .family = v->family, .sport = out ? v->sport : v->dport,
				 .dport = out ? v->dport : v->sport };
	memcpy(ret->src, out ? pkt_src(pkt, v) : pkt_dst(pkt, v), v->addr_len);
	memcpy(ret->dst, out ? pkt_dst(pkt, v) : pkt_src(pkt, v), v->addr_len);
}

/*
 * User path: shifts one packet of a knocked flow, whatever conntrack made
 * of it.  Its mark goes on as it came but for our code (a routed packet's
 * FWD): other software's bits are theirs.
 */
static void translate(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
		      struct pkt_view *v, enum seq_dir dir)
{
	uint32_t mark = marks_own(&c->conf->marks, p->mark), delta;
	struct ct_flow f;
	int r;

	flow_of(p->data, v, dir, &f);
	r = user_shift(c, &f, &delta);
	if (r == -ENOENT || (r == 0 && delta == 0)) {
		/* A flow that predates knockgw, or one knocked with no shift. */
		c->cnt[CC_passed_as_is]++;
		if (mark != p->mark)
			verdict_give_mark(out, p->id, NFQUEUE_ACCEPT, mark);
		else
			verdict_accept(out, p->id);
		return;
	}
	if (r < 0) {
		/* Dropped, not sent unshifted: TCP sends it again. */
		c->cnt[CC_lookup_errors]++;
		verdict_drop(out, p->id);
		return;
	}
	if (p->caplen != p->wirelen) {
		c->cnt[CC_untranslatable]++;
		verdict_drop(out, p->id);
		return;
	}
	/* In place, in the receive buffer: the verdict copies it once. */
	seqrewrite_apply(p->data, v, dir, delta, true);
	if (!finish_csum(p->data, v, p->skbinfo)) {
		c->cnt[CC_untranslatable]++;
		verdict_drop(out, p->id);
		return;
	}
	c->cnt[dir == SEQ_OUT ? CC_translated_out : CC_translated_in]++;
	verdict_replace(out, p->id, p->data, p->caplen, mark);
}

int client_flow_shift(struct client *c, const struct ct_flow *f, uint32_t *ret_delta)
{
	struct ct_info ci;
	int r;

	if (c->conf->translate == TRANSLATE_USER)
		return user_shift(c, f, ret_delta);
	r = ctnl_get(c->ct, f, &ci);
	if (r < 0)
		return r;
	if (!ci.has_seqadj)
		return -ENOENT;
	*ret_delta = ci.delta;
	return 0;
}

void client_malformed(struct client *c, struct verdicts *out, const struct nfqueue_packet *p)
{
	c->cnt[CC_pkt_errors]++;
	verdict_drop(out, p->id);
}

void client_out(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
		const struct pkt_view *pv, bool routed)
{
	struct pkt_view v = *pv;

	if ((v.flags & (TCP_SYN | TCP_ACK)) == TCP_SYN)
		knock_syn(c, out, p, &v, routed);
	else
		translate(c, out, p, &v, SEQ_OUT);
}

void client_in(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
	       const struct pkt_view *pv)
{
	struct pkt_view v = *pv;

	translate(c, out, p, &v, SEQ_IN);
}

void client_unqueued(struct client *c, struct verdicts *out, const struct nfqueue_packet *p)
{
	c->cnt[CC_no_entry]++;
	verdict_accept(out, p->id);
}

void client_set_conf(struct client *c, const struct conf *conf)
{
	c->conf = conf;
}

void client_tick(struct client *c)
{
	flow_gc(&c->syns, c->mono, NULL, NULL);
	if (c->shifts.cap)
		flow_gc(&c->shifts, c->mono, NULL, NULL);
}
