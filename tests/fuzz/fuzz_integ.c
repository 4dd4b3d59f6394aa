/*
 * fuzz_integ - libFuzzer target: the server's integrity flows (pending.c,
 * pending_seg.c, integ.c, holdacct.c, strays.c, reached through server.c as
 * the queue would reach them) driven by arbitrary segment sequences, with
 * the kernel around them played by a model: conntrack, the queue's
 * verdicts, and the service's TCP.
 *
 * The input is a setup byte (family, integrity_len, timestamps) and then
 * operations: a client's SYN (one of its valid ISNs, or a wrong one), data
 * and bare segments at any offset, with any flags (FIN, RST, URG and its
 * pointer), the first bytes right or wrong, captured short, called invalid
 * by conntrack, or dropped by the service's TCP after the daemon let them
 * through (a stale timestamp: the attack the VERIFIED state is for); the
 * service's segments (acknowledging what it has, a banner, an RST); time
 * going on; a reload; conntrack dropping an unassured entry; faults of
 * the adapters (sock_diag, conntrack).
 * Two flows, from two sources, share one small queue.
 *
 * The adapters are fakes (the real nfq.c, ctnl.c, sockkill.c, rawsock.c
 * and isn.c are not linked).  Verdicts are delivered to the model in
 * the order given, when the daemon flushes them and at the end of each
 * packet (a batch); an accepted packet then reaches the service model, a
 * REPEAT'd SYN flags the conntrack entry and is queued again.  Conntrack
 * sees every packet on arrival, before the queue, as the kernel does.
 * Verification is exact: a flow's bytes verify when they are the client's
 * true first bytes (isn_verify_payload is a fake), so that "verified" is a fact
 * the model knows, not a 16-bit hash a fuzzer could collide.
 *
 * Invariants (any break aborts):
 *   1. the service's TCP never takes a byte of its stream, nor its FIN,
 *      before the range of its own connection (the ISN it accepted)
 *      verified, and every byte of the range it takes is the true one;
 *   2. no urgent pointer the service acts on designates a byte of the
 *      range (the service would read a byte from past the range in its
 *      place);
 *   3. nothing the service sends with data reaches the client before the
 *      range verified;
 *   4. a socket is aborted only after every verdict given was flushed;
 *   5. every queued packet gets exactly one verdict, nothing is held at
 *      the end, and a REPEAT never loops.
 *
 * tests/fuzz/regress/integ keeps the inputs that broke them on older code,
 * named by what broke: an urgent pointer on the handshake's ACK into the
 * range, a bare FIN before the bytes verify, the same SYN again after
 * conntrack dropped the unassured entry (let through as "already
 * flagged": the data bypassed the check), and a SYN with another valid
 * ISN after that drop restarting the check on a range the service did not
 * read.  What the model leaves out (an administrator's conntrack flush of
 * an established flow; a socket the daemon could not abort) is in
 * docs/DESIGN.md's limits.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/isn.h"
#include "common/log.h"
#include "common/marks.h"
#include "common/pkt.h"
#include "config/conf.h"
#include "datapath/client/client.h"
#include "datapath/client/clienticmp.h"
#include "datapath/door.h"
#include "datapath/server/integ.h"
#include "datapath/server/replay.h"
#include "datapath/server/server.h"
#include "harness.h"
#include "kernel/ctnl.h"
#include "kernel/nfq.h"
#include "kernel/rawsock.h"
#include "kernel/sockkill.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	PORT = 2200,
	NFLOWS = 2,
	NISN = 4,		/* valid ISNs per flow */
	MAX_PKTS = 1024,	/* packets per input, requeued SYNs included */
	MAX_PENDING = 256,	/* verdicts given and not yet delivered */
	STORE = 4096,		/* bytes past its ISN the service model keeps */
	WND = 65535,		/* the service's receive window */
	BUF = 2200,		/* one packet */
	MONO0 = 1000,
	WALL0 = 1700000000,
	FAR = 100000,		/* seconds: every flow is over */
	MAX_OPS = 128,
};

/* ------------------------------------------------------------------ */
/* The model */

enum svc_state { SVC_NONE, SVC_SYNRECV, SVC_EST };
enum code { CODE_NONE, CODE_NEWSYN, CODE_INVALID, CODE_NOCONN };

struct pkt_rec {
	int flow;
	bool reply;			/* the service's */
	uint32_t seq, ack;
	uint16_t len;
	uint8_t flags;
	uint16_t urg;
	uint32_t cbase;			/* the client's ISN + 1 when it sent it */
	uint8_t corrupt;		/* 0 right, 1 one byte wrong, 2 all wrong */
	uint16_t corrupt_at;
	bool svc_drop;			/* the service's TCP drops it (PAWS, MD5) */
	bool invalid;			/* conntrack called it invalid */
	bool newsyn;			/* a SYN the rule called new */
	uint8_t requeued;		/* a SYN queued again after a REPEAT */
	unsigned verdicts;
};

struct ct_model {
	bool present, confirmed, flag;
	uint8_t state;			/* enum tcp_conntrack */
};

struct svc_model {
	enum svc_state st;
	/*
	 * The daemon failed to abort it (a sock_diag fault): the socket
	 * outlives its failed flow, which the daemon forgets, and is no more
	 * the daemon's to guard (a documented limit: it cannot reset what it
	 * cannot abort).  No invariant holds for it; the model still plays it.
	 */
	bool orphan;
	uint32_t irs, rcv_nxt;		/* irs: the ISN the service took */
	uint8_t have[STORE / 8];	/* bytes from irs + 1 on, received */
};

struct flow_model {
	uint8_t src[16];
	uint16_t sport;
	uint32_t isn[NISN];		/* its valid ISNs */
	uint32_t cisn;			/* the client's current ISN */
	uint32_t tsval;
	bool verified[NISN];		/* its range verified since the service took that ISN */
	struct ct_model ct;
	struct svc_model svc;
};

struct given {
	uint32_t id;
	enum nfqueue_verdict v;
	uint32_t mark;
	bool marked;
};

static struct {
	struct conf conf;
	struct replay replay;
	struct server s;
	struct door door;		/* the packets' way in, and their verdicts' way out */
	bool ready;
	int family;
	uint16_t need;
	bool ts;
	uint8_t local[16];
	struct flow_model f[NFLOWS];
	struct pkt_rec pkts[MAX_PKTS];
	uint32_t npkts;
	struct given pend[MAX_PENDING];
	size_t npend;
	uint32_t work[MAX_PKTS];	/* packets the kernel sends on after a batch, by id */
	size_t nwork;
	int kill_fault, unflag_fault, get_fault;
	size_t held_told;
} z;

static char fake_q;
#define Q ((struct nfqueue *)&fake_q)

/* FUZZ_INTEG_TRACE=1: what happens, on stderr, to read a crash by. */
static int tracing = -1;

__attribute__((format(printf, 1, 2))) HARNESS static void trace(const char *fmt, ...)
{
	va_list ap;

	if (tracing < 0)
		tracing = getenv("FUZZ_INTEG_TRACE") != NULL;
	if (!tracing)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* The client's byte stream from its ISN + 1 on: the range is its first need bytes. */
HARNESS static uint8_t stream(int64_t off)
{
	uint64_t u = (uint64_t)off;

	return (uint8_t)(u * 151 + 29 + (u >> 8));
}

HARNESS static uint8_t byte_of(const struct pkt_rec *r, uint32_t seq)
{
	int64_t off = (int32_t)(seq - r->cbase);
	uint32_t i = seq - r->seq;
	uint8_t b = r->reply ? (uint8_t)(0x53 + i) : stream(off);

	if (r->corrupt == 2 || (r->corrupt == 1 && i == r->corrupt_at))
		b ^= 0x20;
	return b;
}

static bool after_eq(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

/* RFC 9293 3.10.7.4's acceptability test, as Linux's tcp_in_window. */
HARNESS static bool in_window(uint32_t seq, uint32_t end, uint32_t nxt)
{
	if (seq == nxt)
		return true;
	if ((int32_t)(end - nxt) > 0 && (int32_t)(seq - (nxt + WND)) < 0)
		return true;
	return seq == nxt + WND && seq == end;
}

static int flow_by_isn(uint32_t isn, int *k)
{
	for (int f = 0; f < NFLOWS; f++)
		for (int i = 0; i < NISN; i++)
			if (z.f[f].isn[i] == isn) {
				*k = i;
				return f;
			}
	return -1;
}

static int flow_by_src(int family, const uint8_t *src, uint16_t sport)
{
	size_t alen = family == AF_INET ? 4 : 16;

	for (int f = 0; f < NFLOWS; f++)
		if (family == z.family && memcmp(src, z.f[f].src, alen) == 0 &&
		    sport == z.f[f].sport)
			return f;
	return -1;
}

/* Has the range of the connection the service holds verified? */
HARNESS static bool svc_verified(const struct flow_model *m)
{
	for (int i = 0; i < NISN; i++)
		if (m->isn[i] == m->svc.irs)
			return m->verified[i];
	return false;
}

static uint32_t new_pkt(const struct pkt_rec *r);

/*
 * The service's connection ends.  With send, its TCP sends the client an
 * RST (an abort, an embryonic reset), which passes conntrack on the way
 * out and then, after this batch, the reply rule.
 */
static void svc_reset(struct flow_model *m, bool send)
{
	struct pkt_rec r = { .flow = (int)(m - z.f), .reply = true, .flags = TCP_RST | TCP_ACK,
			     .seq = 0x70000001, .ack = m->svc.rcv_nxt };
	uint32_t id;

	trace("    service: connection %#x ends%s\n", m->svc.irs, send ? ", RST sent" : "");
	m->svc.st = SVC_NONE;
	if (m->ct.present)
		m->ct.state = TCP_CONNTRACK_CLOSE;
	if (send && z.nwork < MAX_PKTS && (id = new_pkt(&r)))
		z.work[z.nwork++] = id;
}

static void svc_new(struct flow_model *m, uint32_t isn)
{
	trace("    service: new connection, ISN %#x\n", isn);
	memset(&m->svc, 0, sizeof(m->svc));
	m->svc.st = SVC_SYNRECV;
	m->svc.irs = isn;
	m->svc.rcv_nxt = isn + 1;
	/* The range of this connection is yet to verify. */
	for (int i = 0; i < NISN; i++)
		if (m->isn[i] == isn)
			m->verified[i] = false;
	/* Its SYN-ACK passes conntrack. */
	if (m->ct.present)
		m->ct.state = TCP_CONNTRACK_SYN_RECV;
}

/* A SYN the daemon let through reaches the service (Linux tcp_check_req for the second). */
static void svc_syn(struct flow_model *m, const struct pkt_rec *r)
{
	switch (m->svc.st) {
	case SVC_NONE:
		svc_new(m, r->seq);
		break;
	case SVC_SYNRECV:
		/* A retransmission gets the SYN-ACK again; another in the window resets. */
		if (r->seq != m->svc.irs && in_window(r->seq, r->seq + 1, m->svc.irs + 1))
			svc_reset(m, true);
		break;
	case SVC_EST:
		break;		/* a challenge ACK (RFC 5961 4.2) */
	}
}

/* Invariants 1 and 2, as the service's TCP takes segment r. */
HARNESS static void svc_segment(struct flow_model *m, const struct pkt_rec *r)
{
	struct svc_model *v = &m->svc;
	uint32_t end = r->seq + r->len;

	if (r->svc_drop || v->st == SVC_NONE)
		return;
	if (v->st == SVC_SYNRECV) {
		if (!in_window(r->seq, end, v->irs + 1))
			return;
		if (r->flags & TCP_RST) {
			svc_reset(m, false);
			return;
		}
		if (!(r->flags & TCP_ACK))
			return;
		v->st = SVC_EST;
	}
	if (r->flags & TCP_RST) {
		if (r->seq == v->rcv_nxt)
			svc_reset(m, false);
		return;
	}
	if ((r->flags & TCP_SYN) || !in_window(r->seq, end, v->rcv_nxt))
		return;
	if (r->flags & TCP_URG) {
		/* Linux: the byte before seq + urg (after seq for 0); with tcp_stdurg the byte at it. */
		uint32_t at[2] = { r->seq + r->urg - (r->urg ? 1 : 0), r->seq + r->urg };

		for (int i = 0; i < 2; i++) {
			uint32_t off = at[i] - (v->irs + 1);

			REQUIRE(v->orphan || !(after_eq(at[i], v->rcv_nxt) && off < z.need));
		}
	}
	for (uint32_t s = r->seq; s != end; s++) {
		uint32_t off = s - (v->irs + 1);

		if (!after_eq(s, v->rcv_nxt) || off >= STORE)
			continue;
		REQUIRE(v->orphan || svc_verified(m));
		REQUIRE(v->orphan || off >= z.need || byte_of(r, s) == stream(off));
		v->have[off / 8] |= (uint8_t)(1u << (off % 8));
	}
	if (r->flags & TCP_FIN)
		REQUIRE(v->orphan || !after_eq(end, v->rcv_nxt) || svc_verified(m));
	for (;;) {
		uint32_t off = v->rcv_nxt - (v->irs + 1);

		if (off >= STORE || !(v->have[off / 8] & (1u << (off % 8))))
			break;
		v->rcv_nxt++;
	}
}

/* A packet the daemon (or conntrack, bypassing it) let through. */
static void pass(const struct pkt_rec *r, const struct given *vd)
{
	struct flow_model *m = &z.f[r->flow];

	if (r->reply) {
		/* Invariant 3: the service's data reaches the client after the bytes verified. */
		REQUIRE(r->len == 0 || svc_verified(m) || m->svc.orphan);
		return;
	}
	if ((r->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
		/* Without ACCEPTED the nat rule sends it to a closed port. */
		if (vd && marks_code(&z.conf.marks, vd->mark) != z.conf.marks.accepted) {
			if (m->ct.present && !m->ct.confirmed)
				m->ct.present = false;
			return;
		}
		m->ct.confirmed = true;
		svc_syn(m, r);
		return;
	}
	svc_segment(m, r);
}

static void deliver(void)
{
	for (size_t i = 0; i < z.npend; i++) {
		const struct given *vd = &z.pend[i];
		struct pkt_rec *r = &z.pkts[vd->id];
		struct flow_model *m = &z.f[r->flow];

		switch (vd->v) {
		case NFQUEUE_ACCEPT:
			pass(r, vd);
			break;
		case NFQUEUE_REPEAT:
			/* Our chain again: the flag rule, then the knock rule queues it once more. */
			REQUIRE((r->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN);
			REQUIRE(marks_code(&z.conf.marks, vd->mark) == z.conf.marks.integ);
			/* One REPEAT per SYN: the one queued again is let through or refused. */
			REQUIRE(r->requeued == 0);
			if (m->ct.present)
				m->ct.flag = true;
			REQUIRE(z.nwork < MAX_PKTS);
			z.work[z.nwork++] = vd->id;
			break;
		case NFQUEUE_DROP:
			/* A new entry's SYN dropped: the entry is never confirmed. */
			if ((r->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN && m->ct.present &&
			    !m->ct.confirmed)
				m->ct.present = false;
			break;
		default:
			REQUIRE(0);
		}
	}
	z.npend = 0;
}

/* ------------------------------------------------------------------ */
/* Fakes of the adapters */

/* The client role: the door has none here, and never reaches it. */
void client_out(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
		const struct pkt_view *v, bool routed)
{
	(void)c, (void)out, (void)p, (void)v, (void)routed;
	REQUIRE(0);
}

void client_in(struct client *c, struct verdicts *out, const struct nfqueue_packet *p,
	       const struct pkt_view *v)
{
	(void)c, (void)out, (void)p, (void)v;
	REQUIRE(0);
}

void client_icmp(struct client *c, struct verdicts *out, const struct nfqueue_packet *p)
{
	(void)c, (void)out, (void)p;
	REQUIRE(0);
}

void client_malformed(struct client *c, struct verdicts *out, const struct nfqueue_packet *p)
{
	(void)c, (void)out, (void)p;
	REQUIRE(0);
}

void client_unqueued(struct client *c, struct verdicts *out, const struct nfqueue_packet *p)
{
	(void)c, (void)out, (void)p;
	REQUIRE(0);
}

void client_tick(struct client *c)
{
	(void)c;
	REQUIRE(0);
}

void client_set_conf(struct client *c, const struct conf *conf)
{
	(void)c, (void)conf;
	REQUIRE(0);
}

static void give(uint32_t id, enum nfqueue_verdict v, bool marked, uint32_t mark)
{
	REQUIRE(id > 0 && id < z.npkts);
	REQUIRE(z.npend < MAX_PENDING);
	z.pkts[id].verdicts++;
	REQUIRE(z.pkts[id].verdicts == 1);
	z.pend[z.npend++] = (struct given){ id, v, mark, marked };
	trace("    verdict %u: %s mark %#x\n", id,
	      v == NFQUEUE_ACCEPT ? "accept" : v == NFQUEUE_DROP ? "drop" : "repeat", mark);
}

void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v)
{
	REQUIRE(q == Q);
	give(id, v, false, 0);
}

void nfqueue_verdict_mark(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, uint32_t mark)
{
	REQUIRE(q == Q);
	give(id, v, true, mark);
}

/* The server role rewrites only IPv6 packets the kernel discards; none are sent here. */
void nfqueue_verdict_pkt(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v,
			 const uint8_t *pkt, size_t len, uint32_t mark)
{
	(void)q, (void)id, (void)v, (void)pkt, (void)len, (void)mark;
	REQUIRE(0);
}

int nfqueue_flush(struct nfqueue *q)
{
	REQUIRE(q == Q);
	deliver();
	return 0;
}

void nfqueue_set_held(struct nfqueue *q, size_t held)
{
	REQUIRE(q == Q);
	z.held_told = held;
}

int sockkill_destroy(struct sockkill *sk, int family, const uint8_t *local, uint16_t lport,
		     const uint8_t *remote, uint16_t rport)
{
	int f = flow_by_src(family, remote, rport);

	(void)sk;
	(void)local;
	/* Invariant 4: the aborted socket finds nothing of ours left to read. */
	REQUIRE(z.npend == 0);
	REQUIRE(lport == PORT);
	if (f < 0 || z.f[f].svc.st == SVC_NONE)
		return -ENOENT;
	if (z.kill_fault) {
		z.f[f].svc.orphan = true;
		return z.kill_fault;
	}
	svc_reset(&z.f[f], true);
	return 0;
}

int rawsock_answer_closed(struct rawsock *rs, const uint8_t *pkt, const struct pkt_view *v,
			  uint32_t indev, uint32_t skbinfo, uint64_t now)
{
	(void)rs, (void)pkt, (void)v, (void)indev, (void)skbinfo, (void)now;
	return 1;
}

int ctnl_set_mark(struct ctnl *c, const struct ct_flow *f, uint32_t mark, uint32_t mask)
{
	int i = flow_by_src(f->family, f->src, f->sport);

	(void)c;
	REQUIRE(mark == 0 && mask == z.conf.marks.ct_integ && f->dport == PORT);
	if (z.unflag_fault)
		return z.unflag_fault;
	if (i < 0 || !z.f[i].ct.present || !z.f[i].ct.confirmed)
		return -ENOENT;
	z.f[i].ct.flag = false;
	return 0;
}

int ctnl_get(struct ctnl *c, const struct ct_flow *f, struct ct_info *ret)
{
	int i = flow_by_src(f->family, f->src, f->sport);

	(void)c;
	if (z.get_fault) {
		int r = z.get_fault;

		z.get_fault = 0;
		return r;
	}
	/* A new entry is not confirmed while its SYN is queued: not found. */
	if (i < 0 || !z.f[i].ct.present || !z.f[i].ct.confirmed)
		return -ENOENT;
	*ret = (struct ct_info){ .tcp_state = z.f[i].ct.state,
				 .mark = z.f[i].ct.flag ? z.conf.marks.ct_integ : 0 };
	return 0;
}

/* A knock is one of the flows' valid ISNs, whatever the key and destination. */
enum isn_result isn_verify_syn(const struct kg_key *key, const struct isn_params *p,
			       const struct isn_input *in, uint32_t isn, uint64_t now,
			       struct isn_match *ret)
{
	int k;

	(void)key, (void)p, (void)in, (void)now;
	if (flow_by_isn(isn, &k) < 0)
		return ISN_BAD_AV;
	*ret = (struct isn_match){ 0 };
	return ISN_OK;
}

HARNESS static bool true_bytes(const uint8_t *payload)
{
	for (uint16_t i = 0; i < z.need; i++)
		if (payload[i] != stream(i))
			return false;
	return true;
}

/* The bytes verify when they are the client's true ones. */
enum isn_result isn_verify_payload(const struct kg_key *key, const struct isn_params *p,
				   const struct isn_input *in, uint32_t isn, uint64_t epoch,
				   const uint8_t *payload)
{
	int k, f = flow_by_isn(isn, &k);

	(void)key, (void)in, (void)epoch;
	REQUIRE(f >= 0 && p->integrity_len == z.need);
	if (!true_bytes(payload))
		return ISN_BAD_IH;
	z.f[f].verified[k] = true;
	trace("    verified ISN %#x\n", isn);
	return ISN_OK;
}

/* ------------------------------------------------------------------ */
/* Packets */

HARNESS static size_t build(uint8_t *buf, const struct pkt_rec *r)
{
	const struct flow_model *m = &z.f[r->flow];
	size_t ip = z.family == AF_INET ? 20 : 40, alen = z.family == AF_INET ? 4 : 16;
	size_t ol = z.ts ? 12 : 0, tcp = 20 + ol + r->len;
	const uint8_t *src = r->reply ? z.local : m->src, *dst = r->reply ? m->src : z.local;
	uint8_t *t = buf + ip;

	memset(buf, 0, ip + 20 + ol);
	if (z.family == AF_INET) {
		buf[0] = 0x45;
		buf[2] = (uint8_t)((ip + tcp) >> 8), buf[3] = (uint8_t)(ip + tcp);
		buf[6] = 0x40, buf[8] = 64, buf[9] = 6;
		memcpy(buf + 12, src, alen);
		memcpy(buf + 16, dst, alen);
	} else {
		buf[0] = 0x60;
		buf[4] = (uint8_t)(tcp >> 8), buf[5] = (uint8_t)tcp;
		buf[6] = 6, buf[7] = 64;
		memcpy(buf + 8, src, alen);
		memcpy(buf + 24, dst, alen);
	}
	uint16_t sp = r->reply ? PORT : m->sport, dp = r->reply ? m->sport : PORT;

	t[0] = (uint8_t)(sp >> 8), t[1] = (uint8_t)sp, t[2] = (uint8_t)(dp >> 8), t[3] = (uint8_t)dp;
	for (int i = 0; i < 4; i++) {
		t[4 + i] = (uint8_t)(r->seq >> (24 - 8 * i));
		t[8 + i] = (uint8_t)(r->ack >> (24 - 8 * i));
	}
	t[12] = (uint8_t)((20 + ol) / 4 << 4);
	t[13] = r->flags;
	t[14] = 0xff, t[15] = 0xff;
	t[18] = (uint8_t)(r->urg >> 8), t[19] = (uint8_t)r->urg;
	if (ol) {
		uint32_t tsval = m->tsval + (r->reply ? 0 : 1);

		t[20] = 1, t[21] = 1, t[22] = 8, t[23] = 10;
		for (int i = 0; i < 4; i++)
			t[24 + i] = (uint8_t)(tsval >> (24 - 8 * i));
	}
	for (uint16_t i = 0; i < r->len; i++)
		t[20 + ol + i] = byte_of(r, r->seq + i);
	return ip + tcp;
}

/* Queues packet id (built from its record) to the daemon; caplen_cut bytes short. */
static void queue(uint32_t id, enum code code, size_t cut)
{
	static uint8_t buf[BUF];
	const struct pkt_rec *r = &z.pkts[id];
	const struct marks *mk = &z.conf.marks;
	size_t len = build(buf, r);
	struct nfqueue_packet p = {
		.id = id, .hw_proto = z.family == AF_INET ? 0x0800 : 0x86dd,
		.hook = r->reply ? NF_INET_POST_ROUTING : NF_INET_PRE_ROUTING, .indev = 3,
		.data = buf, .caplen = len - (cut < r->len ? cut : r->len), .wirelen = len,
		.mark = r->reply ? mk->reply
			: code == CODE_NEWSYN ? mk->newsyn
			: code == CODE_INVALID ? mk->invalid
			: code == CODE_NOCONN ? mk->noconn : 0,
	};

	trace("  queue %u flow %d %s seq %+d len %u flags %#x urg %u code %d\n", id, r->flow,
	      r->reply ? "reply" : "client", (int)(r->seq - (r->reply ? r->seq : z.f[r->flow].svc.irs + 1)),
	      r->len, r->flags, r->urg, code);
	/* Through the door from the set its rule queues to: the server's way. */
	enum conf_qset set = r->reply ? QSET_DATA
			     : (r->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN ? QSET_SYN : QSET_DATA;
	enum door_way way = door_classify(&z.conf.marks, set, p.hook, p.mark);
	struct pkt_view v;

	REQUIRE(way == DOOR_SERVER ||
		(way == DOOR_SERVER_REPLY && pkt_parse(p.data, p.caplen, &v) == PKT_OK &&
		 server_is_reply(&z.s, &p, &v)));
	door_packet(&z.door, set, Q, &p);
}

static uint32_t new_pkt(const struct pkt_rec *r)
{
	if (z.npkts >= MAX_PKTS)
		return 0;
	z.pkts[z.npkts] = *r;
	z.pkts[z.npkts].verdicts = 0;
	return z.npkts++;
}

/* A client's segment arrives: conntrack sees it, then the rules queue it or not. */
static void client_arrives(uint32_t id, bool invalid, size_t cut)
{
	struct pkt_rec *r = &z.pkts[id];
	struct flow_model *m = &z.f[r->flow];
	struct ct_model *ct = &m->ct;
	enum code code = CODE_NONE;

	if ((r->flags & (TCP_SYN | TCP_ACK)) == TCP_SYN) {
		/* A SYN opens an entry where none is, or replaces one that is over. */
		if (!ct->present || ct->state == TCP_CONNTRACK_CLOSE ||
		    ct->state == TCP_CONNTRACK_TIME_WAIT)
			*ct = (struct ct_model){ .present = true, .state = TCP_CONNTRACK_SYN_SENT };
		/*
		 * Conntrack calls it new (the rule's NEWSYN, unless it came over
		 * loopback) until it has seen an answer.
		 */
		if (ct->state != TCP_CONNTRACK_SYN_SENT)
			r->newsyn = false;
		queue(id, r->newsyn ? CODE_NEWSYN : CODE_NONE, 0);
		return;
	}
	/*
	 * Conntrack takes the RST the service would take, and the ACK that
	 * completes the handshake; what it calls invalid, it does not track.
	 */
	if (!invalid && ct->present && (r->flags & TCP_RST)) {
		if (m->svc.st == SVC_NONE || r->seq == m->svc.rcv_nxt)
			ct->state = TCP_CONNTRACK_CLOSE;
	} else if (!invalid && ct->present && (r->flags & TCP_ACK) &&
		   ct->state == TCP_CONNTRACK_SYN_RECV) {
		ct->state = TCP_CONNTRACK_ESTABLISHED;
	}
	r->invalid = invalid;
	if (invalid)
		code = CODE_INVALID;
	else if (!ct->present)
		code = CODE_NOCONN;
	else if (!ct->flag) {
		/* Not flagged: the kernel passes it, the daemon never sees it. */
		trace("  bypass %u flow %d seq %+d len %u flags %#x\n", id, r->flow,
		      (int)(r->seq - (z.f[r->flow].svc.irs + 1)), r->len, r->flags);
		r->verdicts = 1;
		pass(r, NULL);
		return;
	}
	queue(id, code, cut);
}

/* The service sends: conntrack sees it; a flagged flow's goes to the daemon. */
static void service_sends(uint32_t id)
{
	struct pkt_rec *r = &z.pkts[id];
	struct flow_model *m = &z.f[r->flow];

	if (r->flags & TCP_RST)
		svc_reset(m, false);
	if (!m->ct.present || !m->ct.flag) {
		r->verdicts = 1;
		pass(r, NULL);
		return;
	}
	queue(id, CODE_NONE, 0);
}

/*
 * After a batch: the verdicts go out; REPEAT'd SYNs come back and the
 * service's RSTs go out, one by one, each a batch of its own.
 */
static void end_batch(void)
{
	deliver();
	REQUIRE(z.held_told == z.s.pending.acct.pkts);
	while (z.nwork > 0) {
		uint32_t from = z.work[--z.nwork], id;
		struct pkt_rec r = z.pkts[from];

		if (r.reply) {
			service_sends(from);
		} else {
			r.requeued++;
			id = new_pkt(&r);
			if (!id)
				return;
			/* The knock rule tells it new (NEWSYN) as it did the first time. */
			queue(id, r.newsyn ? CODE_NEWSYN : CODE_NONE, 0);
		}
		deliver();
		REQUIRE(z.held_told == z.s.pending.acct.pkts);
	}
}

/* ------------------------------------------------------------------ */
/* The input */

struct cursor {
	const uint8_t *p;
	size_t n;
};

static uint8_t take(struct cursor *c)
{
	if (c->n == 0)
		return 0;
	c->n--;
	return *c->p++;
}

static uint16_t take16(struct cursor *c)
{
	uint16_t hi = take(c);

	return (uint16_t)(hi << 8 | take(c));
}

static const uint16_t needs[8] = { 1, 3, 16, 20, 64, 200, 1400, INTEG_MAX_LEN };

static void setup_once(void)
{
	static struct kg_key keys[1];
	struct conf_protect *e = &z.conf.protect[0];

	log_init(1, LOG_EMERG, "fuzz_integ");
	memset(&z.conf, 0, sizeof(z.conf));
	z.conf.queue_count = 1;
	/* A small queue: its share, one source's and one flow's caps are in reach. */
	z.conf.queue_maxlen = 64;
	z.conf.max_flows = 64;
	z.conf.max_replay = 64;
	z.conf.hold_bytes = 16384;
	z.conf.hold_flow_bytes = 8192;
	z.conf.integrity_timeout = 10;
	REQUIRE(marks_make(MARKS_MARK_MASK_DEFAULT, MARKS_CTMARK_DEFAULT, &z.conf.marks) == 0);
	z.conf.nkeys = 1;
	z.conf.keyring.n = 1;
	z.conf.keyring.keys = keys;
	z.conf.nprotect = 1;
	e->port = PORT;
	e->mode = KG_MODE_KNOCK;
	e->nkeys = 1;
	e->keys[0] = 0;
	e->on_fail = ON_FAIL_RESET;
	e->replay = true;
	e->replay_ttl = 3600;
	e->integrity_len = 16;
	REQUIRE(replay_init(&z.replay, z.conf.max_replay) == 0);
	REQUIRE(server_init(&z.s, &z.conf, &z.replay, (struct sockkill *)&fake_q,
			    (struct rawsock *)&fake_q, (struct ctnl *)&fake_q, 1) == 0);
	REQUIRE(door_init(&z.door, &z.conf, &z.s, NULL) == 0);
	z.ready = true;
}

static void setup(uint8_t b)
{
	static const uint32_t isn0[NFLOWS] = { 0x10000000, 0xfffffff0 };
	static const int32_t isn_step[NISN] = { 0, 3, -2, 1000 };

	memset(z.f, 0, sizeof(z.f));
	z.family = b & 1 ? AF_INET6 : AF_INET;
	z.need = needs[(b >> 1) & 7];
	z.ts = b & 0x10;
	z.conf.protect[0].integrity_len = z.need;
	memset(z.local, 0, sizeof(z.local));
	for (int f = 0; f < NFLOWS; f++) {
		struct flow_model *m = &z.f[f];

		if (z.family == AF_INET) {
			m->src[0] = 198, m->src[1] = 51, m->src[2] = 100, m->src[3] = (uint8_t)(7 + f);
		} else {
			m->src[0] = 0x20, m->src[1] = 0x01, m->src[2] = 0x0d, m->src[3] = 0xb8;
			m->src[5] = (uint8_t)(1 + f), m->src[15] = 7;
		}
		m->sport = (uint16_t)(40000 + f);
		for (int i = 0; i < NISN; i++)
			m->isn[i] = isn0[f] + (uint32_t)isn_step[i];
		m->cisn = m->isn[0];
		m->tsval = 5000;
	}
	if (z.family == AF_INET) {
		z.local[0] = 192, z.local[1] = 0, z.local[2] = 2, z.local[3] = 1;
	} else {
		z.local[0] = 0x20, z.local[1] = 0x01, z.local[2] = 0x0d, z.local[3] = 0xb8;
		z.local[15] = 1;
	}
	z.npkts = 1;		/* ids start at 1 */
	z.npend = 0;
	z.nwork = 0;
	z.kill_fault = z.unflag_fault = z.get_fault = 0;
	z.held_told = 0;
	z.s.mono = MONO0;
	z.s.wall = WALL0;
}

enum op { OP_SYN, OP_DATA, OP_BARE, OP_REPLY, OP_TICK, OP_RELOAD, OP_CTLOSS, OP_FAULT, OP_MAX };

/* Flags of a client segment from a byte: ACK unless told not, and any of FIN, RST, PSH, URG. */
static uint8_t seg_flags(uint8_t b)
{
	uint8_t fl = (b & 1) ? 0 : TCP_ACK;

	if (b & 2)
		fl |= TCP_FIN;
	if (b & 4)
		fl |= TCP_RST;
	if (b & 8)
		fl |= TCP_URG;
	return fl | TCP_PSH;
}

static void op_syn(struct cursor *c, int f)
{
	struct flow_model *m = &z.f[f];
	uint8_t b = take(c);
	struct pkt_rec r = { .flow = f, .flags = TCP_SYN, .newsyn = b & 8 };
	uint32_t id;

	r.seq = (b & 3) == 3 ? m->isn[0] ^ 0x80000000u : m->isn[b & 3];
	if (b & 4)
		m->tsval += 1000;
	if (b & 0x10) {
		r.flags |= TCP_URG;
		r.urg = take16(c);
	}
	if (b & 0x20)
		r.len = 5;		/* TCP Fast Open */
	if ((b & 3) != 3)
		m->cisn = r.seq;
	r.cbase = m->cisn + 1;
	id = new_pkt(&r);
	if (id)
		client_arrives(id, false, 0);
}

static void op_segment(struct cursor *c, int f, bool data)
{
	struct flow_model *m = &z.f[f];
	uint8_t fb = take(c), how = take(c);
	int16_t off = (int16_t)take16(c);
	struct pkt_rec r = { .flow = f, .flags = seg_flags(fb), .cbase = m->cisn + 1 };
	size_t cut = 0;
	uint32_t id;

	if (!data)
		r.flags &= (uint8_t)~TCP_PSH;
	r.seq = m->cisn + 1 + (uint32_t)(int32_t)off;
	r.ack = 0x70000001;
	if (data) {
		uint8_t lb = take(c);

		r.len = (uint16_t)(how & 0x80 ? (lb + 1) * 8 : lb + 1);
		if (r.len > BUF - 100)
			r.len = BUF - 100;
		r.corrupt = (how >> 4) & 3;
		if (r.corrupt == 3)
			r.corrupt = 0;
		r.corrupt_at = (uint16_t)(take(c) % r.len);
		if (how & 4)
			cut = take(c);
	}
	if (r.flags & TCP_URG)
		r.urg = take16(c);
	r.svc_drop = how & 1;
	id = new_pkt(&r);
	if (id)
		client_arrives(id, how & 2, cut);
}

static void op_reply(struct cursor *c, int f)
{
	struct flow_model *m = &z.f[f];
	uint8_t b = take(c);
	struct pkt_rec r = { .flow = f, .reply = true, .flags = TCP_ACK, .seq = 0x70000001 };
	uint32_t id;

	/* Only a socket sends. */
	if (m->svc.st == SVC_NONE)
		return;
	/* What it has, truthfully; or an older ACK. */
	r.ack = m->svc.rcv_nxt - (b & 3 ? take(c) : 0);
	if ((b & 4) && m->svc.st == SVC_EST)
		r.len = 8;		/* a banner */
	/* Linux's RSTs carry no data. */
	if (b & 8) {
		r.flags |= TCP_RST;
		r.len = 0;
	}
	if (b & 0x10)
		r.flags |= TCP_FIN;
	r.cbase = r.seq;
	id = new_pkt(&r);
	if (id)
		service_sends(id);
}

static void op_fault(struct cursor *c)
{
	static const int errs[4] = { 0, -ENOENT, -EIO, -EPERM };
	uint8_t b = take(c);

	z.kill_fault = errs[b & 3] == -ENOENT ? 0 : errs[b & 3];
	z.unflag_fault = errs[(b >> 2) & 3];
	z.get_fault = errs[(b >> 4) & 3] == -ENOENT ? 0 : errs[(b >> 4) & 3];
}

/* Time runs far ahead: every flow ends; then invariant 5, and the server is empty again. */
static void finish(void)
{
	z.kill_fault = z.unflag_fault = z.get_fault = 0;
	/* Twice: what the first tick resets is remembered a while (strays.h). */
	for (int i = 0; i < 2; i++) {
		z.s.mono += FAR;
		z.s.wall += FAR;
		door_tick(&z.door, Q);
		end_batch();
	}
	for (uint32_t id = 1; id < z.npkts; id++)
		REQUIRE(z.pkts[id].verdicts == 1);
	REQUIRE(z.s.pending.acct.pkts == 0 && z.s.pending.held_bytes == 0 &&
		z.s.pending.table.count == 0);
	REQUIRE(z.s.pending.acct.sources.count == 0);
	replay_gc(&z.replay, z.s.mono);
	REQUIRE(replay_count(&z.replay) == 0);
	REQUIRE(z.s.pending.strays.flows.count == 0 && z.s.pending.strays.sources.count == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size };
	unsigned ops = 0;

	if (!z.ready)
		setup_once();
	setup(take(&c));
	while (c.n > 0 && ops++ < MAX_OPS && z.npkts < MAX_PKTS - 2) {
		uint8_t b = take(&c);
		int f = (b >> 4) & 1;

		trace("op %u flow %d (ct %s state %u flag %d; service %d)\n", b % OP_MAX, f,
		      z.f[f].ct.present ? "present" : "absent", z.f[f].ct.state, z.f[f].ct.flag,
		      z.f[f].svc.st);
		switch ((enum op)(b % OP_MAX)) {
		case OP_SYN:
			op_syn(&c, f);
			break;
		case OP_DATA:
			op_segment(&c, f, true);
			break;
		case OP_BARE:
			op_segment(&c, f, false);
			break;
		case OP_REPLY:
			op_reply(&c, f);
			break;
		case OP_TICK:
			z.s.mono += take(&c) % 16;
			z.s.wall = WALL0 + (z.s.mono - MONO0);
			door_tick(&z.door, Q);
			break;
		case OP_RELOAD:
			door_set_conf(&z.door, Q, &z.conf, 1);
			break;
		case OP_CTLOSS:
			/*
			 * Conntrack drops an entry the handshake has not
			 * assured when its table is full (early drop); the entry
			 * of a connection the service has established goes only
			 * by an administrator's flush, left out here (the
			 * service's segments could then leave unflagged until
			 * the client's next one shows the loss: a documented
			 * limit).
			 */
			if (z.f[f].ct.state != TCP_CONNTRACK_ESTABLISHED && z.f[f].svc.st != SVC_EST)
				z.f[f].ct.present = false;
			break;
		case OP_FAULT:
			op_fault(&c);
			break;
		case OP_MAX:
			break;
		}
		end_batch();
	}
	finish();
	return 0;
}
