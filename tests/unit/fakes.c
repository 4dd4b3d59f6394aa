/*
 * fakes.c - the adapters' fakes the data-path tests share (see fakes.h).
 */
#include <errno.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <string.h>
#include <sys/socket.h>

#include "common/rst.h"
#include "fakes.h"
#include "kernel/gwnat.h"

struct event events[FAKE_MAX_EVENTS];
size_t nevents;
unsigned fake_misuse;
uint8_t fake_verdict_pkt[FAKE_PKT_LEN];
size_t fake_held_last;
int fake_kill_ret, fake_raw_ret, fake_unflag_ret;
int fake_get_ret, fake_create_ret, fake_recreate_ret, fake_gwnat_ret;
struct fake_ct cts[FAKE_MAX_CT];
unsigned ncreates;
bool fake_ct_script, fake_ct_flagged;
uint8_t fake_ct_state;
uint32_t fake_ct_integ;
unsigned fake_ct_gets;
struct fake_intent fake_intent;
const uint8_t fake_router4[4] = { 203, 0, 113, 1 };
const uint8_t fake_router6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 5, [15] = 1 };
char fake_q, fake_pq, fake_dq, fake_sk, fake_rs, fake_ct, fake_it;

void fakes_reset(void)
{
	nevents = 0;
	fake_misuse = 0;
	fake_held_last = 0;
	fake_kill_ret = fake_raw_ret = fake_unflag_ret = 0;
	fake_get_ret = fake_create_ret = fake_recreate_ret = fake_gwnat_ret = 0;
	memset(cts, 0, sizeof(cts));
	ncreates = 0;
	fake_ct_script = fake_ct_flagged = false;
	fake_ct_state = 0;
	fake_ct_gets = 0;
	memset(&fake_intent, 0, sizeof(fake_intent));
}

struct event *fake_record(enum ev_kind kind)
{
	static struct event spare;

	if (nevents == FAKE_MAX_EVENTS) {
		fake_misuse++;
		return &spare;
	}
	memset(&events[nevents], 0, sizeof(events[0]));
	events[nevents].kind = kind;
	return &events[nevents++];
}

static bool fake_queue(const struct nfqueue *q)
{
	return q == FAKE_Q || q == FAKE_PQ || q == FAKE_DQ;
}

/* ------------------------------------------------------------- the queue */

static struct event *verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v)
{
	struct event *e = fake_record(EV_VERDICT);

	fake_misuse += !fake_queue(q);
	e->q = q;
	e->id = id;
	e->v = v;
	return e;
}

void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v)
{
	verdict(q, id, v);
}

void nfqueue_verdict_mark(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, uint32_t mark)
{
	struct event *e = verdict(q, id, v);

	e->has_mark = true;
	e->mark = mark;
}

void nfqueue_verdict_pkt(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v,
			 const uint8_t *pkt, size_t len, uint32_t mark)
{
	struct event *e = verdict(q, id, v);

	fake_misuse += len > sizeof(fake_verdict_pkt);
	e->has_pkt = true;
	e->has_mark = true;
	e->mark = mark;
	e->len = len;
	if (len <= sizeof(fake_verdict_pkt))
		memcpy(fake_verdict_pkt, pkt, len);
}

int nfqueue_flush(struct nfqueue *q)
{
	fake_misuse += !fake_queue(q);
	fake_record(EV_FLUSH)->q = q;
	return 0;
}

void nfqueue_set_held(struct nfqueue *q, size_t held)
{
	struct event *e = fake_record(EV_HELD);

	fake_misuse += !fake_queue(q);
	e->q = q;
	e->held = held;
	fake_held_last = held;
}

/* ------------------------------------------------ sockets: abort, answer */

int sockkill_destroy(struct sockkill *sk, int family, const uint8_t *local, uint16_t lport,
		     const uint8_t *remote, uint16_t rport)
{
	struct event *e = fake_record(EV_KILL);
	size_t alen = family == AF_INET6 ? 16 : 4;

	fake_misuse += sk != FAKE_SK;
	e->family = family;
	memcpy(e->local, local, alen);
	memcpy(e->remote, remote, alen);
	e->lport = lport;
	e->rport = rport;
	return fake_kill_ret;
}

/* Like the real one: no answer due (0) when rst_build has none. */
int rawsock_answer_closed(struct rawsock *rs, const uint8_t *pkt, const struct pkt_view *v,
			  uint32_t indev, uint32_t skbinfo, uint64_t now)
{
	struct event *e = fake_record(EV_ANSWER);
	struct rst_params rp = { .ttl = 64, .csum_unfinished = (skbinfo & 1) != 0 };
	uint8_t out[RST_MAX_LEN];

	fake_misuse += rs != FAKE_RS;
	e->family = v->family;
	memcpy(e->local, pkt_dst(pkt, v), v->addr_len);
	memcpy(e->remote, pkt_src(pkt, v), v->addr_len);
	e->lport = v->dport;
	e->rport = v->sport;
	e->seq = v->seq;
	e->indev = indev;
	e->now = now;
	e->f.family = v->family;
	memcpy(e->f.src, pkt_src(pkt, v), v->addr_len);
	memcpy(e->f.dst, pkt_dst(pkt, v), v->addr_len);
	e->f.sport = v->sport;
	e->f.dport = v->dport;
	if (fake_raw_ret)
		return fake_raw_ret;
	return rst_build(pkt, v, &rp, out) ? 1 : 0;
}

/* ------------------------------------------------------------- conntrack */

static struct fake_ct *ct_find(const struct ct_flow *f)
{
	size_t alen = f->family == AF_INET6 ? 16 : 4;

	for (size_t i = 0; i < FAKE_MAX_CT; i++)
		if (cts[i].used && cts[i].f.family == f->family && cts[i].f.sport == f->sport &&
		    cts[i].f.dport == f->dport && memcmp(cts[i].f.src, f->src, alen) == 0 &&
		    memcmp(cts[i].f.dst, f->dst, alen) == 0)
			return &cts[i];
	return NULL;
}

struct fake_ct *fake_ct_add(const struct ct_flow *f, const struct ct_info *info)
{
	for (size_t i = 0; i < FAKE_MAX_CT; i++) {
		if (!cts[i].used) {
			cts[i] = (struct fake_ct){ .used = true, .f = *f, .info = *info };
			return &cts[i];
		}
	}
	fake_misuse++;
	return NULL;
}

/* Like the kernel: -EEXIST when the tuple has an entry; else the injected result. */
int ctnl_create(struct ctnl *c, const struct ct_flow *f, bool seqadj, uint32_t kernel_isn,
		uint32_t delta, uint32_t timeout, const struct ct_labels *labels)
{
	struct event *e = fake_record(EV_CREATE);
	int ret = ncreates++ ? fake_recreate_ret : fake_create_ret;

	fake_misuse += c != FAKE_CT;
	e->f = *f;
	e->seqadj = seqadj;
	e->kernel_isn = kernel_isn;
	e->delta = delta;
	e->timeout = timeout;
	e->has_labels = labels != NULL;
	if (labels)
		e->labels = *labels;
	if (ct_find(f))
		return -EEXIST;
	if (ret < 0)
		return ret;
	struct ct_info ci = { .has_seqadj = seqadj, .pos = seqadj ? kernel_isn : 0,
			      .delta = seqadj ? delta : 0 };
	/* The kernel keeps the bits outside the mask: none, in a new entry. */
	for (size_t w = 0; labels && w < MARKS_LABEL_WORDS; w++)
		ci.labels[w] = labels->val[w] & labels->mask[w];
	fake_ct_add(f, &ci);
	return 0;
}

static int scripted_get(struct ct_info *ret)
{
	fake_ct_gets++;
	if (fake_get_ret < 0)
		return fake_get_ret;
	if (fake_ct_flagged) {
		*ret = (struct ct_info){ .tcp_state = TCP_CONNTRACK_ESTABLISHED,
					 .mark = fake_ct_integ };
		return 0;
	}
	if (fake_ct_state == 0)
		return -ENOENT;
	*ret = (struct ct_info){ .tcp_state = fake_ct_state };
	return 0;
}

int ctnl_get(struct ctnl *c, const struct ct_flow *f, struct ct_info *ret)
{
	struct fake_ct *ct;

	fake_misuse += c != FAKE_CT;
	fake_record(EV_GET)->f = *f;
	if (fake_ct_script)
		return scripted_get(ret);
	if (fake_get_ret)
		return fake_get_ret;
	ct = ct_find(f);
	if (!ct)
		return -ENOENT;
	*ret = ct->info;
	return 0;
}

int ctnl_delete(struct ctnl *c, const struct ct_flow *f)
{
	struct fake_ct *ct = ct_find(f);

	fake_misuse += c != FAKE_CT;
	fake_record(EV_DELETE)->f = *f;
	if (!ct)
		return -ENOENT;
	ct->used = false;
	return 0;
}

/* The flow's conntrack mark changed: the client's tuple, the mark and the mask. */
int ctnl_set_mark(struct ctnl *c, const struct ct_flow *f, uint32_t mark, uint32_t mask)
{
	struct event *e = fake_record(EV_UNFLAG);
	size_t alen = f->family == AF_INET6 ? 16 : 4;

	fake_misuse += c != FAKE_CT;
	e->family = f->family;
	memcpy(e->remote, f->src, alen);
	memcpy(e->local, f->dst, alen);
	e->rport = f->sport;
	e->lport = f->dport;
	e->mark = mark;
	e->mask = mask;
	e->f = *f;
	return fake_unflag_ret;
}

/* ------------------------------------------------------ gateway, intents */

/* This host's address toward dst: the router's, or the injected error. */
int gwnat_source(int family, const uint8_t *dst, uint8_t *ret)
{
	(void)dst;
	if (fake_gwnat_ret)
		return fake_gwnat_ret;
	memcpy(ret, family == AF_INET ? fake_router4 : fake_router6, family == AF_INET ? 4 : 16);
	return 0;
}

int intent_take(struct intent_table *it, int family, uint16_t sport, const uint8_t *dst,
		uint16_t dport, uint8_t *payload, size_t payload_size, size_t *ret_len,
		uint64_t now)
{
	size_t alen = family == AF_INET6 ? 16 : 4;

	(void)now;
	fake_misuse += it != FAKE_IT;
	fake_record(EV_INTENT);
	if (fake_intent.ret)
		return fake_intent.ret;
	if (!fake_intent.set || fake_intent.family != family || fake_intent.sport != sport ||
	    fake_intent.dport != dport || memcmp(fake_intent.dst, dst, alen) != 0)
		return -ENOENT;
	if (fake_intent.len > payload_size)
		return -ENOBUFS;
	memcpy(payload, fake_intent.payload, fake_intent.len);
	*ret_len = fake_intent.len;
	fake_intent.set = false;
	return 0;
}
