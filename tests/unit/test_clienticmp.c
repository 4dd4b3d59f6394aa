/*
 * test_clienticmp.c - client_icmp() (clienticmp.[ch]) against fakes of the
 * queue adapter and of the client's client_flow_shift().
 *
 * The fakes below replace nfq.o and client.o (never linked): a verdict,
 * with its packet if it has one, and a lookup of the flow's shift are
 * recorded, and the lookup answers from one conntrack entry a row sets up
 * (or an injected error) as client_flow_shift() reads one (test_client
 * checks that it does): the kernel path's sequence adjustment, the user
 * path's labels.
 * Each numbered row builds an ICMP/ICMPv6 error quoting a segment that left
 * shifted (pktbuild.h: checksums that share no code with the daemon),
 * queues it as the rules would (hook, mark, capture, the kernel's checksum
 * flag) to a client on one translation path, and checks the one verdict:
 * P (the packet replaced, which must be byte for byte the error about the
 * unshifted segment, mark kept) or A (accepted as it came); the lookup it
 * made (the quoted tuple, or none); and the counter that moved.
 */
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "config/conf.h"
#include "datapath/client/client.h"
#include "datapath/client/clienticmp.h"
#include "datapath/verdict.h"
#include "kernel/ctnl.h"
#include "kernel/nfq.h"
#include "pktbuild.h"
#include "unit.h"

enum { BUF_LEN = 2048, KERNEL_SEQ = 0x11110000, SHIFT = 0x89abcdef, MARK = 0x00000042 };

/* ------------------------------------------------------------------ fakes */

static struct {
	int n;
	bool pkt;
	enum nfqueue_verdict v;
	uint32_t id, mark;
	size_t len;
	uint8_t data[BUF_LEN];
} verdict;
static struct {
	int n;
	struct ct_flow f;
} lookup;
static int fake_get_ret;
static struct ct_info fake_info;
static char fake_q, fake_ct;
static unsigned fake_misuse;

#define FAKE_Q ((struct nfqueue *)&fake_q)
#define FAKE_CT ((struct ctnl *)&fake_ct)

void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v)
{
	fake_misuse += q != FAKE_Q;
	verdict.n++;
	verdict.id = id;
	verdict.v = v;
	verdict.pkt = false;
}

void nfqueue_verdict_pkt(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v,
			 const uint8_t *pkt, size_t len, uint32_t mark)
{
	nfqueue_verdict(q, id, v);
	verdict.pkt = true;
	verdict.mark = mark;
	verdict.len = len;
	if (len <= sizeof(verdict.data))
		memcpy(verdict.data, pkt, len);
	else
		fake_misuse++;
}

/* The decisions client_icmp() returns, given to the queue fake as the door gives them. */
static struct verdict slots[4];
static struct verdicts out = { .v = slots, .cap = sizeof(slots) / sizeof(slots[0]) };

static void give(struct verdicts *o)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct verdict *e = &o->v[i];

		fake_misuse += e->what != VD_PACKET || (e->has_mark && !e->pkt);
		if (e->pkt)
			nfqueue_verdict_pkt(FAKE_Q, e->id, (enum nfqueue_verdict)e->v, e->pkt, e->len,
					    e->mark);
		else
			nfqueue_verdict(FAKE_Q, e->id, (enum nfqueue_verdict)e->v);
	}
	verdicts_clear(o);
}

int client_flow_shift(struct client *c, const struct ct_flow *f, uint32_t *ret_delta)
{
	bool user = c->conf->translate == TRANSLATE_USER;
	uint32_t shift;

	fake_misuse += c->ct != FAKE_CT;
	lookup.n++;
	lookup.f = *f;
	if (fake_get_ret)
		return fake_get_ret;
	if (user ? !marks_label_get(c->conf->ct_label, fake_info.labels, &shift)
	    : !fake_info.has_seqadj)
		return -ENOENT;
	*ret_delta = user ? shift : fake_info.delta;
	return 0;
}

/* ------------------------------------------------------------------- rows */

static const uint8_t host4[4] = { 198, 51, 100, 1 }, lan4[4] = { 10, 0, 0, 2 };
static const uint8_t srv4[4] = { 203, 0, 113, 2 }, rtr4[4] = { 192, 0, 2, 1 };
static const uint8_t host6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1 };
static const uint8_t lan6[16] = { 0xfd, [15] = 2 };
static const uint8_t srv6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 5, [15] = 2 };
static const uint8_t rtr6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2, [15] = 1 };

enum entry { E_SEQADJ, E_LABEL, E_PLAIN, E_NONE, E_ERROR };
enum want { W_REPLACED, W_AS_IS };

struct row {
	int line;
	int family;
	bool user;		/* translate = "user" */
	bool routed;		/* at forward, a LAN host's flow */
	enum entry entry;	/* what conntrack holds for the quoted tuple */
	uint8_t type, code;
	size_t quote;		/* TCP bytes quoted (0: the whole segment) */
	bool cut;		/* the capture ends before the packet does */
	bool csum_not_ready;	/* the kernel left the ICMP checksum to us */
	enum want want;
	bool looked_up;
	enum client_counter counter;
};

#define ROW(...) { __LINE__, __VA_ARGS__ }
static const struct row rows[] = {
	/* Fragmentation needed / packet too big about the flow: translated. */
	ROW(AF_INET, false, false, E_SEQADJ, 3, 4, 0, false, false, W_REPLACED, true, CC_icmp_translated),
	ROW(AF_INET6, false, false, E_SEQADJ, 2, 0, 0, false, false, W_REPLACED, true, CC_icmp_translated),
	ROW(AF_INET, true, false, E_LABEL, 3, 4, 0, false, false, W_REPLACED, true, CC_icmp_translated),
	ROW(AF_INET6, true, false, E_LABEL, 2, 0, 0, false, false, W_REPLACED, true, CC_icmp_translated),
	/* The routed flows: the quote holds the LAN host's tuple, un-NAT'ed. */
	ROW(AF_INET, false, true, E_SEQADJ, 3, 3, 0, false, false, W_REPLACED, true, CC_icmp_translated),
	ROW(AF_INET6, true, true, E_LABEL, 1, 4, 0, false, false, W_REPLACED, true, CC_icmp_translated),
	/* A quote of 8 TCP bytes (RFC 792): the sequence number, no checksum. */
	ROW(AF_INET, false, false, E_SEQADJ, 3, 3, 8, false, false, W_REPLACED, true, CC_icmp_translated),
	ROW(AF_INET6, false, false, E_SEQADJ, 1, 4, 8, false, false, W_REPLACED, true, CC_icmp_translated),
	/* Checksum not finished by the kernel: computed in full. */
	ROW(AF_INET, false, false, E_SEQADJ, 3, 4, 0, false, true, W_REPLACED, true, CC_icmp_translated),
	ROW(AF_INET6, true, false, E_LABEL, 2, 0, 0, false, true, W_REPLACED, true, CC_icmp_translated),
	/* No shift for the flow: the error goes on as it came. */
	ROW(AF_INET, false, false, E_PLAIN, 3, 4, 0, false, false, W_AS_IS, true, CC_icmp_passed),
	ROW(AF_INET, true, false, E_PLAIN, 3, 4, 0, false, false, W_AS_IS, true, CC_icmp_passed),
	ROW(AF_INET6, false, false, E_LABEL, 2, 0, 0, false, false, W_AS_IS, true, CC_icmp_passed),
	ROW(AF_INET6, true, false, E_SEQADJ, 2, 0, 0, false, false, W_AS_IS, true, CC_icmp_passed),
	ROW(AF_INET, false, false, E_NONE, 3, 4, 0, false, false, W_AS_IS, true, CC_icmp_passed),
	ROW(AF_INET6, false, true, E_ERROR, 2, 0, 0, false, false, W_AS_IS, true, CC_icmp_passed),
	/* Unreadable, or not all here: as it came, no lookup for the former. */
	ROW(AF_INET, false, false, E_SEQADJ, 3, 7, 7, false, false, W_AS_IS, false, CC_icmp_unread),
	ROW(AF_INET6, false, false, E_SEQADJ, 128, 0, 0, false, false, W_AS_IS, false, CC_icmp_unread),
	ROW(AF_INET, false, false, E_SEQADJ, 3, 4, 0, true, false, W_AS_IS, true, CC_icmp_unread),
};

/* A segment SRC -> server with seq and its checksum right; returns its length. */
static size_t segment(uint8_t *p, const struct row *r, uint32_t seq)
{
	static const uint8_t payload[1000] = { 1, 2, 3 };
	const uint8_t *src = r->family == AF_INET ? (r->routed ? lan4 : host4)
						  : (r->routed ? lan6 : host6);

	return pb_build(p, &(struct pb_spec){
		.family = r->family, .src = src, .dst = r->family == AF_INET ? srv4 : srv6,
		.sport = 40022, .dport = 22, .seq = seq, .ack = 7, .flags = 0x18,
		.window = 500, .payload = payload, .plen = sizeof(payload) }, NULL);
}

static size_t error_about(uint8_t *p, const struct row *r, uint32_t seq)
{
	uint8_t seg[BUF_LEN];
	size_t len = segment(seg, r, seq), ipl = r->family == AF_INET ? 20 : 40;

	return pb_build_icmp(p, &(struct pb_icmp_spec){
		.family = r->family, .src = r->family == AF_INET ? rtr4 : rtr6,
		.dst = r->family == AF_INET ? (r->routed ? lan4 : host4) : (r->routed ? lan6 : host6),
		.type = r->type, .code = r->code, .rest = 1280, .quote = seg,
		.quote_len = r->quote ? ipl + r->quote : len });
}

static void run(const struct row *r)
{
	static struct conf conf;
	static struct client c;
	uint8_t pkt[BUF_LEN], want[BUF_LEN];
	size_t len = error_about(pkt, r, KERNEL_SEQ + SHIFT);
	size_t wlen = error_about(want, r, KERNEL_SEQ);
	size_t ipl = r->family == AF_INET ? 20 : 40;
	struct nfqueue_packet p = {
		.id = 77, .hw_proto = r->family == AF_INET ? 0x0800 : 0x86dd,
		.hook = r->routed ? NF_INET_FORWARD : NF_INET_LOCAL_IN, .mark = MARK,
		.data = pkt, .caplen = len, .wirelen = len,
	};
	uint64_t before[CC_MAX];

	memset(&conf, 0, sizeof(conf));
	conf.translate = r->user ? TRANSLATE_USER : TRANSLATE_KERNEL;
	conf.ct_label = MARKS_CTLABEL_DEFAULT;
	memset(&c, 0, sizeof(c));
	c.conf = &conf;
	c.ct = FAKE_CT;
	memset(&verdict, 0, sizeof(verdict));
	memset(&lookup, 0, sizeof(lookup));
	fake_get_ret = r->entry == E_NONE ? -ENOENT : r->entry == E_ERROR ? -ETIMEDOUT : 0;
	fake_info = (struct ct_info){ 0 };
	if (r->entry == E_SEQADJ)
		fake_info = (struct ct_info){ .has_seqadj = true, .pos = KERNEL_SEQ - 1000,
					      .delta = SHIFT };
	else if (r->entry == E_LABEL)
		marks_label_put(conf.ct_label, SHIFT, fake_info.labels,
				(uint32_t[MARKS_LABEL_WORDS]){ 0 });
	if (r->cut)
		p.caplen = len - 100;
	if (r->csum_not_ready) {
		p.skbinfo = NFQA_SKB_CSUMNOTREADY;
		pb_put16(pkt + ipl + 2, 0x1234);	/* not the checksum */
	}
	memcpy(before, c.cnt, sizeof(before));

	client_icmp(&c, &out, &p);
	give(&out);

	CHECK_EQ_U(verdict.n, 1, "row %d: one verdict", r->line);
	CHECK_EQ_U(verdict.id, 77, "row %d: for the packet", r->line);
	CHECK_EQ_U(verdict.v, NFQUEUE_ACCEPT, "row %d: accepted", r->line);
	CHECK_EQ_U(verdict.pkt, r->want == W_REPLACED, "row %d: packet replaced", r->line);
	if (r->want == W_REPLACED && verdict.pkt) {
		CHECK_EQ_U(verdict.mark, MARK, "row %d: mark kept", r->line);
		CHECK(verdict.len == wlen && memcmp(verdict.data, want, wlen) == 0,
		      "row %d: the error about the unshifted segment, byte for byte", r->line);
	}
	CHECK_EQ_U(lookup.n, r->looked_up, "row %d: conntrack lookups", r->line);
	if (r->looked_up && lookup.n) {
		const uint8_t *src = r->family == AF_INET ? (r->routed ? lan4 : host4)
							  : (r->routed ? lan6 : host6);
		size_t alen = r->family == AF_INET ? 4 : 16;

		CHECK(lookup.f.family == r->family && lookup.f.sport == 40022 &&
		      lookup.f.dport == 22 && memcmp(lookup.f.src, src, alen) == 0 &&
		      memcmp(lookup.f.dst, r->family == AF_INET ? srv4 : srv6, alen) == 0,
		      "row %d: the quoted tuple looked up", r->line);
	}
	for (int i = 0; i < CC_MAX; i++)
		CHECK_EQ_U(c.cnt[i] - before[i], i == (int)r->counter, "row %d: counter %d",
			   r->line, i);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run(&rows[i]);
	CHECK_EQ_U(fake_misuse, 0, "fakes used as the adapters are");
	return unit_done("test_clienticmp");
}
