/*
 * nftrules.c - the daemon's nftables table (see nftrules.h).
 *
 * The ruleset is first planned as a list of plain rule descriptions, then
 * rendered twice from that one plan: as libnftnl messages for the kernel and
 * as nft syntax for `knockgw print-rules`, so the two cannot drift apart.
 *
 *   table inet knockgw {
 *     chain input {
 *       type filter hook input priority -10; policy accept;
 *       tcp flags & (syn|ack) == syn meta mark & MASK == INTEG
 *                     ct mark set ct mark | CT_INTEG, clear our bits, go on
 *                     (the daemon's REPEAT of a valid integrity SYN: the SYN
 *                     rule below queues it again and the daemon lets it pass)
 *       per protected port (and address, when limited):
 *         tcp dport P tcp flags & (syn|ack) == syn              queue  (knocks)
 *         tcp dport P tcp flags & (syn|ack|rst) == 0            queue  (FIN/NULL/Xmas:
 *                                     the daemon answers like a closed port)
 *           or, with on_fail "drop":  ct state new,invalid, not a SYN   drop
 *         on_fail "reset": tcp dport P ct state new,untracked, not a SYN
 *                     meta mark set mark & ~MASK | NOCONN       queue  (no connection
 *                                     conntrack knows: a guessed SYN cookie, a lost flow)
 *         tcp dport P ct mark & CT_INTEG ct direction original
 *                     meta mark set mark & ~MASK                queue  (integrity)
 *         integrity: tcp dport P ct state invalid, not a SYN
 *                     meta mark set mark & ~MASK | INVALID      queue  (no entry, so
 *                                     no flag: checked if its flow is being checked)
 *     }
 *     with an integrity entry: the service's side of those flows (pending.h)
 *     chain output_integ {  type filter hook output priority -10;
 *       per integrity entry (and address):
 *         tcp sport P ct mark & CT_INTEG ct direction reply
 *                     meta mark set mark & ~MASK | REPLY  queue
 *     }
 *     (The daemon clears a flow's CT_INTEG over ctnetlink once the service
 *     acknowledged its bytes; no rule acts on a mark to do that.)
 *     chain output_raw {                          client role, before conntrack
 *       type filter hook output priority -300; policy accept;
 *       per knock entry:  ip daddr D tcp dport P tcp flags & (syn|ack) == syn  queue
 *     }
 *     with closed_ports = "daemon" (and a protect entry):
 *     chain input_closed {  type filter hook input priority 10;
 *       per protected port (and address), as in chain input:
 *         tcp dport P  return   (decided there: never queued twice; a valid
 *                                knock to a port nobody listens on gets the
 *                                kernel's RST)
 *       tcp flags & (ack|rst) == 0  socket transparent 0  accept  (someone listens,
 *       tcp flags & (ack|rst) == 0  socket transparent 1  accept   or the flow exists)
 *       tcp flags & (ack|rst) == 0  queue bypass   (a closed port: answered like a
 *                                                    refused knock) }
 *     with translate = "user" only (the delta rides in the conntrack mark):
 *     chain output {  type filter hook output priority -150;
 *       ip daddr D tcp dport P tcp flags & (syn|ack) != syn  meta mark set ct mark  queue }
 *     chain prerouting {  type filter hook prerouting priority -150;
 *       ip saddr D tcp sport P  meta mark set ct mark  queue }
 *   }
 *
 * Input priority -10: after conntrack (-200) so ct state and mark are known,
 * and before the usual filter chains at 0.  The client's SYN chain runs
 * before conntrack, so the daemon can create the flow's entry first.
 * input_closed runs at 10, after the usual filter chains: a port another
 * firewall drops is never answered by us; bypass, since without the daemon
 * the kernel's own answer is the right one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>

#include "marks.h"
#include "nftrules.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

enum {
	CHAIN_PRIORITY = -10,
	CLOSED_PRIORITY = 10,
	RAW_PRIORITY = -300,
	USER_PRIORITY = -150,
	PLAN_FIRST = 64,
	MSG_WHAT_LEN = 96,
	BATCH_PAGE_BYTES = 1 << 20,
	/* Room past a page's limit for the message that crosses it: larger
	 * than any one message (a netlink attribute's length is 16 bits). */
	MSG_ROOM_BYTES = (1 << 16) + 4096,
	SNDBUF_SLACK = 4096,
	/* What one answer costs in the receive buffer, as the kernel counts it
	 * (the socket buffer's overhead with the capped nlmsgerr): an
	 * estimate, so sized twice over. */
	ACK_BYTES = 1024,
	ACK_MARGIN = 2,
	ACK_READ_BYTES = 1 << 16,
	ACK_WAIT_MS = 5000,
	TCP_FLAGS_OFF = 13,
	TCP_DPORT_OFF = 2,
	TCP_SYN_BIT = 0x02,
	TCP_RST_BIT = 0x04,
	TCP_ACK_BIT = 0x10,
	CT_STATE_NEW_OR_INVALID = NF_CT_STATE_INVALID_BIT | NF_CT_STATE_BIT(IP_CT_NEW),
	CT_STATE_NEW_OR_UNTRACKED = NF_CT_STATE_BIT(IP_CT_NEW) | NF_CT_STATE_UNTRACKED_BIT,
};

enum chain_id {
	CH_INPUT, CH_INPUT_CLOSED, CH_OUTPUT_INTEG, CH_OUTPUT_RAW, CH_OUTPUT, CH_PREROUTING, CH_MAX
};

static const struct {
	const char *name;
	uint32_t hook;
	int priority;
} chains[CH_MAX] = {
	[CH_INPUT] = { "input", NF_INET_LOCAL_IN, CHAIN_PRIORITY },
	[CH_INPUT_CLOSED] = { "input_closed", NF_INET_LOCAL_IN, CLOSED_PRIORITY },
	[CH_OUTPUT_INTEG] = { "output_integ", NF_INET_LOCAL_OUT, CHAIN_PRIORITY },
	[CH_OUTPUT_RAW] = { "output_raw", NF_INET_LOCAL_OUT, RAW_PRIORITY },
	[CH_OUTPUT] = { "output", NF_INET_LOCAL_OUT, USER_PRIORITY },
	[CH_PREROUTING] = { "prerouting", NF_INET_PRE_ROUTING, USER_PRIORITY },
};

/* ------------------------------------------------------------------ plan */

enum rule_kind {
	RK_MARK_INTEG,		/* our REPEAT verdict for a valid integrity SYN */
	RK_SYN,			/* new SYNs to a protected port: queue */
	RK_STRAY_QUEUE,		/* FIN/NULL/Xmas: queue, answered like a closed port */
	RK_STRAY_DROP,		/* on_fail "drop": anything not a SYN, untracked: drop */
	RK_NOCONN,		/* reset: not a SYN, no connection conntrack knows: queue */
	RK_INVALID_INTEG,	/* integrity: not a SYN, conntrack says invalid: mark, queue */
	RK_INTEG,		/* flows awaiting integrity bytes: queue */
	RK_INTEG_REPLY,		/* the service's side of those flows: mark, queue */
	RK_CLIENT_SYN,		/* this host's SYNs to a knock destination: queue */
	RK_CLIENT_OUT,		/* user path: later outgoing packets of such flows */
	RK_CLIENT_IN,		/* user path: their incoming packets */
	RK_CT_KEEP,		/* after a stop: keeps conntrack (and so seqadj) running */
	RK_CLOSED_SKIP,		/* closed_ports "daemon": a protected port, the input chain's */
	RK_CLOSED_SOCKET,	/* ... a socket answers (value = transparent) */
	RK_CLOSED,		/* ... none does: queue, bypass */
};

struct rule {
	enum rule_kind kind;
	enum chain_id chain;
	uint16_t port;
	const struct prefix *addr;	/* NULL: any local address */
	bool addr_is_src;		/* match addr as source (incoming client flows) */
	int entry_line;
	uint8_t value;			/* RK_CLOSED_SOCKET: the socket's transparent flag */
};

/*
 * The plan grows as it is made: its size follows the configuration (up to
 * CONF_MAX_PROTECT entries of CONF_MAX_ADDRS addresses each, and the knock
 * entries), and a rule that did not fit must never be dropped silently, which
 * would leave a port unprotected: out of memory fails the whole plan.
 */
struct plan {
	size_t n, cap;
	struct rule *r;
	bool failed;
	bool used[CH_MAX];
	uint16_t qnum, qtotal;
	bool bypass;
	struct kgw_marks m;		/* rules.mark_mask, rules.ct_mark_bit */
};

static void plan_push(struct plan *p, struct rule ru)
{
	if (p->failed)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : PLAN_FIRST;
		struct rule *r = reallocarray(p->r, cap, sizeof(*r));

		if (!r) {
			p->failed = true;
			return;
		}
		p->r = r;
		p->cap = cap;
	}
	p->r[p->n++] = ru;
	p->used[ru.chain] = true;
}

static void plan_free(struct plan *p)
{
	free(p->r);
	p->r = NULL;
	p->n = p->cap = 0;
}

static void plan_add(struct plan *p, enum rule_kind k, const struct conf_protect *e,
		     const struct prefix *a)
{
	enum chain_id ch = k == RK_CLOSED_SKIP	   ? CH_INPUT_CLOSED
			   : k == RK_INTEG_REPLY ? CH_OUTPUT_INTEG
						 : CH_INPUT;

	plan_push(p, (struct rule){ .kind = k, .chain = ch, .port = e ? e->port : 0, .addr = a,
				    .addr_is_src = k == RK_INTEG_REPLY,
				    .entry_line = e ? e->line : 0 });
}

static void plan_client(struct plan *p, enum rule_kind k, enum chain_id ch,
			const struct conf_knock *e, bool src)
{
	plan_push(p, (struct rule){ .kind = k, .chain = ch, .port = e->port, .addr = &e->dst,
				    .addr_is_src = src, .entry_line = e->line });
}

static void plan_entry(struct plan *p, const struct conf_protect *e, const struct prefix *a)
{
	plan_add(p, RK_SYN, e, a);
	plan_add(p, e->on_fail == ON_FAIL_RESET ? RK_STRAY_QUEUE : RK_STRAY_DROP, e, a);
	/*
	 * A segment that opens no connection conntrack knows (an ACK with a
	 * guessed SYN cookie; a flow whose entry was lost) never reaches the
	 * socket unseen.  An invalid one carries no conntrack entry, so the
	 * integrity rule cannot see it: for those flows it comes to the daemon
	 * too, marked, and passes unless it belongs to a flow being checked.
	 */
	if (e->on_fail == ON_FAIL_RESET)
		plan_add(p, RK_NOCONN, e, a);
	if (e->integrity_len) {
		plan_add(p, RK_INTEG, e, a);
		plan_add(p, RK_INVALID_INTEG, e, a);
	}
}

static void plan_start(const struct conf *c, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->qnum = c->queue_num;
	p->qtotal = c->queue_count;
	p->bypass = c->fail_open;
	p->m = c->marks;
}

/*
 * What stays after a stop while translated client flows are open: conntrack
 * only runs in a namespace while some rule uses it, and seqadj with it; the
 * user path's packets keep going to the queue, where they wait (and drop,
 * to be retransmitted) until a daemon is back.  No knock, no server rule.
 * 0 or -ENOMEM (then nothing is planned).
 */
static int make_keeper_plan(const struct conf *c, struct plan *p)
{
	plan_start(c, p);
	plan_push(p, (struct rule){ .kind = RK_CT_KEEP, .chain = CH_OUTPUT_RAW });
	for (size_t i = 0; c->translate == TRANSLATE_USER && i < c->nknock; i++) {
		plan_client(p, RK_CLIENT_OUT, CH_OUTPUT, &c->knock[i], false);
		plan_client(p, RK_CLIENT_IN, CH_PREROUTING, &c->knock[i], true);
	}
	if (p->failed) {
		plan_free(p);
		return -ENOMEM;
	}
	return 0;
}

/* 0 or -ENOMEM (then nothing is planned). */
static int make_plan(const struct conf *c, struct plan *p)
{
	bool integ = false;

	plan_start(c, p);
	plan_add(p, RK_MARK_INTEG, NULL, NULL);
	for (size_t i = 0; i < c->nprotect; i++) {
		const struct conf_protect *e = &c->protect[i];

		if (e->naddrs == 0)
			plan_entry(p, e, NULL);
		for (size_t a = 0; a < e->naddrs; a++)
			plan_entry(p, e, &e->addrs[a]);
		integ = integ || e->integrity_len > 0;
	}
	if (integ) {
		/*
		 * The service's side of integrity flows: its data waits until
		 * the client's bytes verify, and its acknowledgement of them
		 * ends the checking (pending.h).
		 */
		for (size_t i = 0; i < c->nprotect; i++) {
			const struct conf_protect *e = &c->protect[i];

			if (e->integrity_len == 0)
				continue;
			if (e->naddrs == 0)
				plan_add(p, RK_INTEG_REPLY, e, NULL);
			for (size_t a = 0; a < e->naddrs; a++)
				plan_add(p, RK_INTEG_REPLY, e, &e->addrs[a]);
		}
	}
	if (c->closed_ports == CLOSED_DAEMON && c->nprotect > 0) {
		/*
		 * What the input chain decided is never queued again: a knock it
		 * let through to a port nobody listens on gets the kernel's RST,
		 * and an integrity SYN, which comes back through this hook after
		 * every REPEAT, cannot loop between the kernel and the daemon.
		 * The same port and address match as the input chain's rules, not
		 * our mark: the mark rule clears it, and a mark alone says nothing
		 * about the packet.
		 */
		for (size_t i = 0; i < c->nprotect; i++) {
			const struct conf_protect *e = &c->protect[i];

			if (e->naddrs == 0)
				plan_add(p, RK_CLOSED_SKIP, e, NULL);
			for (size_t a = 0; a < e->naddrs; a++)
				plan_add(p, RK_CLOSED_SKIP, e, &e->addrs[a]);
		}
		for (uint8_t t = 0; t <= 1; t++)
			plan_push(p, (struct rule){ .kind = RK_CLOSED_SOCKET,
						    .chain = CH_INPUT_CLOSED, .value = t });
		plan_push(p, (struct rule){ .kind = RK_CLOSED, .chain = CH_INPUT_CLOSED });
	}
	for (size_t i = 0; i < c->nknock; i++) {
		const struct conf_knock *k = &c->knock[i];

		plan_client(p, RK_CLIENT_SYN, CH_OUTPUT_RAW, k, false);
		if (c->translate == TRANSLATE_USER) {
			plan_client(p, RK_CLIENT_OUT, CH_OUTPUT, k, false);
			plan_client(p, RK_CLIENT_IN, CH_PREROUTING, k, true);
		}
	}
	if (p->failed) {
		plan_free(p);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ text form */

static void print_addr(FILE *f, const struct prefix *a, bool src)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned full = a->family == AF_INET ? 32 : 128;

	inet_ntop(a->family, a->addr, buf, sizeof(buf));
	fprintf(f, "%s %s %s", a->family == AF_INET ? "ip" : "ip6", src ? "saddr" : "daddr", buf);
	if (a->len != full)
		fprintf(f, "/%u", a->len);
	fputc(' ', f);
}

static void print_queue(FILE *f, const struct plan *p, bool bypass)
{
	bypass = bypass || p->bypass;
	if (p->qtotal > 1)
		fprintf(f, "queue num %u-%u%s", p->qnum, p->qnum + p->qtotal - 1,
			bypass ? " bypass" : "");
	else
		fprintf(f, "queue num %u%s", p->qnum, bypass ? " bypass" : "");
}

static void print_rule(FILE *f, const struct plan *p, const struct rule *r)
{
	const struct kgw_marks *m = &p->m;
	unsigned keep = ~m->mask, ct = m->ct_integ;

	fputs("\t\t", f);
	switch (r->kind) {
	case RK_MARK_INTEG:
		fprintf(f, "tcp flags & (syn | ack) == syn meta mark & 0x%08x == 0x%08x "
			   "ct mark set ct mark | 0x%08x meta mark set meta mark & 0x%08x counter\n",
			m->mask, m->integ, ct, keep);
		return;
	case RK_CT_KEEP:
		fputs("ct state established counter\n", f);
		return;
	case RK_CLOSED_SOCKET:
		fprintf(f, "tcp flags & (ack | rst) == 0x0 socket transparent %u accept\n", r->value);
		return;
	case RK_CLOSED:
		fputs("tcp flags & (ack | rst) == 0x0 counter ", f);
		print_queue(f, p, true);
		fputc('\n', f);
		return;
	default:
		break;
	}
	if (r->addr)
		print_addr(f, r->addr, r->addr_is_src);
	fprintf(f, "tcp %s %u ", r->addr_is_src ? "sport" : "dport", r->port);
	switch (r->kind) {
	case RK_SYN:
		fputs("tcp flags & (syn | ack) == syn counter ", f);
		print_queue(f, p, false);
		break;
	case RK_STRAY_QUEUE:
		fputs("tcp flags & (syn | ack | rst) == 0x0 counter ", f);
		print_queue(f, p, false);
		break;
	case RK_STRAY_DROP:
		fputs("ct state new,invalid tcp flags & (syn | ack) != syn counter drop", f);
		break;
	case RK_NOCONN:
		fprintf(f, "ct state new,untracked tcp flags & (syn | ack) != syn "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ",
			keep, m->noconn);
		print_queue(f, p, false);
		break;
	case RK_INVALID_INTEG:
		fprintf(f, "ct state invalid tcp flags & (syn | ack) != syn "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ",
			keep, m->invalid);
		print_queue(f, p, false);
		break;
	case RK_INTEG:
		fprintf(f, "ct mark & 0x%08x == 0x%08x ct direction original "
			   "meta mark set meta mark & 0x%08x counter ",
			ct, ct, keep);
		print_queue(f, p, false);
		break;
	case RK_INTEG_REPLY:
		fprintf(f, "ct mark & 0x%08x == 0x%08x ct direction reply "
			   "meta mark set meta mark & 0x%08x | 0x%08x counter ",
			ct, ct, keep, m->reply);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_SYN:
		fputs("tcp flags & (syn | ack) == syn counter ", f);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_OUT:
		fputs("tcp flags & (syn | ack) != syn meta mark set ct mark counter ", f);
		print_queue(f, p, false);
		break;
	case RK_CLIENT_IN:
		fputs("meta mark set ct mark counter ", f);
		print_queue(f, p, false);
		break;
	case RK_CLOSED_SKIP:
		fputs("return", f);
		break;
	default:
		break;
	}
	fputc('\n', f);
}

void nftrules_print(const struct conf *c, enum nft_queue_kind kind, FILE *f)
{
	struct plan *p = malloc(sizeof(*p));

	if (!p || make_plan(c, p) < 0) {
		fprintf(f, "# knockgw: out of memory planning the ruleset\n");
		free(p);
		return;
	}
	fprintf(f, "# knockgw ruleset for %s (knockgw print-rules)\n", c->path);
	if (kind == NFT_QUEUE_COMPAT)
		fprintf(f, "# This kernel lacks nft's queue expression: knockgw installs the\n"
			   "# xtables NFQUEUE target (nft compat) where this shows \"queue\".\n");
	fprintf(f, "table inet %s {\n", c->table);
	for (int ch = 0; ch < CH_MAX; ch++) {
		static const char *const hook_names[] = {
			[NF_INET_PRE_ROUTING] = "prerouting", [NF_INET_LOCAL_IN] = "input",
			[NF_INET_FORWARD] = "forward", [NF_INET_LOCAL_OUT] = "output",
			[NF_INET_POST_ROUTING] = "postrouting",
		};

		if (!p->used[ch])
			continue;
		fprintf(f, "\tchain %s {\n", chains[ch].name);
		fprintf(f, "\t\ttype filter hook %s priority %d; policy accept;\n",
			hook_names[chains[ch].hook], chains[ch].priority);
		for (size_t i = 0; i < p->n; i++)
			if (p->r[i].chain == (enum chain_id)ch)
				print_rule(f, p, &p->r[i]);
		fprintf(f, "\t}\n");
	}
	fprintf(f, "}\n");
	plan_free(p);
	free(p);
}

/* ------------------------------------------------------- netlink form */

/*
 * A batch of any size: libnftnl's pages, each with room past its limit for
 * the one message that crosses it (a message is written out before the batch
 * can tell it did not fit, and is then moved to a fresh page).  One record
 * per message that asks for an answer, found again by its sequence number:
 * the kernel answers each of them, since each carries NLM_F_ACK.
 */
struct batch_msg {
	int err;
	bool done;
	char what[MSG_WHAT_LEN];
};

struct batch {
	struct nftnl_batch *b;
	uint32_t begin_seq;		/* BATCH_BEGIN; the messages follow it, in order */
	uint32_t seq;
	size_t n, cap, answered;
	struct batch_msg *m;
	int failed;			/* -errno: the batch is incomplete, never sent */
	int batch_err;			/* the kernel refused the batch as a whole */
	char extmsg[128];
};

static void batch_update(struct batch *bt)
{
	if (nftnl_batch_update(bt->b) < 0 && !bt->failed)
		bt->failed = -ENOMEM;
}

static int batch_init(struct batch *bt)
{
	memset(bt, 0, sizeof(*bt));
	bt->b = nftnl_batch_alloc(BATCH_PAGE_BYTES, MSG_ROOM_BYTES);
	if (!bt->b)
		return -ENOMEM;
	bt->seq = (uint32_t)time(NULL);
	bt->begin_seq = bt->seq;
	nftnl_batch_begin(nftnl_batch_buffer(bt->b), bt->seq++);
	batch_update(bt);
	return bt->failed;
}

static void batch_free(struct batch *bt)
{
	if (bt->b)
		nftnl_batch_free(bt->b);
	free(bt->m);
}

/* Starts one message; what names it in error reports. */
static struct nlmsghdr *batch_msg(struct batch *bt, uint16_t type, uint16_t flags, const char *what)
{
	if (bt->n == bt->cap && !bt->failed) {
		size_t cap = bt->cap ? 2 * bt->cap : PLAN_FIRST;
		struct batch_msg *m = reallocarray(bt->m, cap, sizeof(*m));

		if (m) {
			bt->m = m;
			bt->cap = cap;
		} else {
			bt->failed = -ENOMEM;
		}
	}
	if (!bt->failed) {
		bt->m[bt->n] = (struct batch_msg){ 0 };
		snprintf(bt->m[bt->n].what, sizeof(bt->m[bt->n].what), "%s", what);
		bt->n++;
	}
	/* The message is built (into the page's spare room) even when it will
	 * never be sent, so that the seq of message i stays begin_seq + 1 + i. */
	return nftnl_nlmsg_build_hdr(nftnl_batch_buffer(bt->b), type, NFPROTO_INET,
				     flags | NLM_F_ACK, bt->seq++);
}

static int cb_err(const struct nlmsghdr *nlh, void *data)
{
	struct batch *bt = data;
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	uint32_t i = nlh->nlmsg_seq - bt->begin_seq - 1;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
		return MNL_CB_OK;
	if (nlh->nlmsg_seq == bt->begin_seq) {
		/* Refused as a whole, pointing at its first message: permission,
		 * or no memory to record the answers. */
		if (e->error)
			bt->batch_err = -e->error;
	} else if (i < bt->n && !bt->m[i].done) {
		bt->m[i].done = true;
		bt->m[i].err = -e->error;
		bt->answered++;
	}
	if (e->error && !bt->extmsg[0] && (nlh->nlmsg_flags & NLM_F_ACK_TLVS)) {
		const struct nlattr *a;
		size_t off = sizeof(*e);

		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		mnl_attr_for_each(a, nlh, off)
			if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				snprintf(bt->extmsg, sizeof(bt->extmsg), "%s", mnl_attr_get_str(a));
	}
	return MNL_CB_OK;
}

static struct mnl_socket *nl_open(void)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	int one = 1;

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(nl);
		return NULL;
	}
	/* Extended ACKs carry the kernel's reason; capped ACKs stay small. */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	return nl;
}

/*
 * Raises a socket buffer to at least bytes: the FORCE option goes past the
 * system's maximum (rmem_max, wmem_max) with CAP_NET_ADMIN, which the daemon
 * has; without it, as far as that maximum allows.
 */
static void raise_buffer(int fd, int opt, int force_opt, size_t bytes)
{
	int have = 0, want = bytes > INT_MAX / 2 ? INT_MAX / 2 : (int)bytes;
	socklen_t len = sizeof(have);

	if (getsockopt(fd, SOL_SOCKET, opt, &have, &len) == 0 && have >= want)
		return;
	if (setsockopt(fd, SOL_SOCKET, force_opt, &want, sizeof(want)) < 0)
		setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want));
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Reads answers until every message has one, the kernel refused the batch
 * as a whole, or the deadline passes.  The kernel runs the whole batch
 * inside sendmsg and queues every answer before it returns, so the deadline
 * only ends the wait for answers that were lost.  0, or -ENOBUFS when the
 * kernel dropped answers (the receive buffer overran).
 */
static int read_answers(struct batch *bt, struct mnl_socket *nl)
{
	char rbuf[ACK_READ_BYTES];
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = cb_err };
	int fd = mnl_socket_get_fd(nl);
	int64_t deadline = now_ms() + ACK_WAIT_MS;

	/* Bounded: each pass reads one answer or ends; the deadline ends the rest. */
	for (size_t pass = 0; pass <= 2 * bt->n + 16; pass++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (bt->answered == bt->n || bt->batch_err || left <= 0)
			break;
		if (poll(&pfd, 1, (int)left) == 0)
			break;
		n = recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS)
			return -ENOBUFS;
		if (n <= 0)
			continue;
		mnl_cb_run2(rbuf, (size_t)n, 0, mnl_socket_get_portid(nl), NULL, bt, ctl,
			    NLMSG_MIN_TYPE);
	}
	return 0;
}

/*
 * Sends the batch and maps every answer back to its message by sequence
 * number.  Returns 0 only when every message was answered and none failed;
 * else the first failure's -errno with the failing message named in err,
 * or the first unanswered message named.
 */
static int batch_talk(struct batch *bt, char *err, size_t errlen)
{
	struct mnl_socket *nl;
	struct sockaddr_nl snl = { .nl_family = AF_NETLINK };
	struct iovec *iov = NULL;
	struct msghdr msg = { .msg_name = &snl, .msg_namelen = sizeof(snl) };
	size_t total = 0;
	int ret = 0, niov;

	nftnl_batch_end(nftnl_batch_buffer(bt->b), bt->seq++);
	batch_update(bt);
	if (bt->failed) {
		snprintf(err, errlen, "cannot build the ruleset's batch: %s", strerror(-bt->failed));
		return bt->failed;
	}
	niov = nftnl_batch_iovec_len(bt->b);
	iov = calloc((size_t)niov, sizeof(*iov));
	if (!iov) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	nftnl_batch_iovec(bt->b, iov, (uint32_t)niov);
	for (int i = 0; i < niov; i++)
		total += iov[i].iov_len;
	msg.msg_iov = iov;
	msg.msg_iovlen = (size_t)niov;

	nl = nl_open();
	if (!nl) {
		ret = -errno;
		snprintf(err, errlen, "cannot open a netfilter netlink socket: %s", strerror(errno));
		free(iov);
		return ret;
	}
	/*
	 * The kernel takes the batch in one datagram no larger than the send
	 * buffer, and drops answers that do not fit in the receive buffer:
	 * both must hold the whole batch and every answer to it.
	 */
	raise_buffer(mnl_socket_get_fd(nl), SO_SNDBUF, SO_SNDBUFFORCE, total + SNDBUF_SLACK);
	raise_buffer(mnl_socket_get_fd(nl), SO_RCVBUF, SO_RCVBUFFORCE,
		     (bt->n + 2) * ACK_BYTES * ACK_MARGIN);
	if (sendmsg(mnl_socket_get_fd(nl), &msg, 0) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot send the batch (%zu messages, %zu bytes): %s", bt->n,
			 total, strerror(errno));
		goto out;
	}
	ret = read_answers(bt, nl);
	if (bt->batch_err) {
		ret = -bt->batch_err;
		snprintf(err, errlen, "the kernel refused the batch: %s%s%s", strerror(bt->batch_err),
			 bt->extmsg[0] ? ": " : "", bt->extmsg);
		goto out;
	}
	for (size_t i = 0; i < bt->n; i++) {
		if (bt->m[i].done && bt->m[i].err) {
			ret = -bt->m[i].err;
			snprintf(err, errlen, "%s: %s%s%s", bt->m[i].what, strerror(bt->m[i].err),
				 bt->extmsg[0] ? ": " : "", bt->extmsg);
			goto out;
		}
	}
	for (size_t i = 0; i < bt->n; i++) {
		if (!bt->m[i].done) {
			snprintf(err, errlen, "%s: %s (%zu of %zu messages unanswered)",
				 bt->m[i].what,
				 ret == -ENOBUFS ? "the kernel's answer was lost (receive buffer overrun)"
						 : "no answer from the kernel",
				 bt->n - bt->answered, bt->n);
			ret = ret ? ret : -ETIMEDOUT;
			goto out;
		}
	}
	ret = 0;
out:
	mnl_socket_close(nl);
	free(iov);
	return ret;
}

static void put_table(struct batch *bt, const char *name, uint16_t type, uint16_t flags,
		      const char *what)
{
	struct nftnl_table *t = nftnl_table_alloc();

	nftnl_table_set_str(t, NFTNL_TABLE_NAME, name);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	nftnl_table_nlmsg_build_payload(batch_msg(bt, type, flags, what), t);
	nftnl_table_free(t);
	batch_update(bt);
}

static void put_chain(struct batch *bt, const char *table, enum chain_id ch)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	char what[MSG_WHAT_LEN];

	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, chains[ch].name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, chains[ch].hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, chains[ch].priority);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	snprintf(what, sizeof(what), "chain %s", chains[ch].name);
	nftnl_chain_nlmsg_build_payload(batch_msg(bt, NFT_MSG_NEWCHAIN, NLM_F_CREATE, what), c);
	nftnl_chain_free(c);
	batch_update(bt);
}

/* Expression helpers: each loads into or tests register 1. */
static void x_meta(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = nftnl_expr_alloc("meta");

	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

static void x_meta_set(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = nftnl_expr_alloc("meta");

	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

static void x_ct(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = nftnl_expr_alloc("ct");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

static void x_ct_set(struct nftnl_rule *r, uint32_t key)
{
	struct nftnl_expr *e = nftnl_expr_alloc("ct");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

static void x_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("payload");

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

/* reg1 = (reg1 & mask) ^ xor */
static void x_bitwise(struct nftnl_rule *r, const void *mask, const void *xor, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("bitwise");

	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, xor, len);
	nftnl_rule_add_expr(r, e);
}

static void x_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("cmp");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	nftnl_rule_add_expr(r, e);
}

/* reg1 & mask == value, on a 32-bit host-order key (marks, ct state). */
static void x_masked_eq32(struct nftnl_rule *r, uint32_t mask, uint32_t value, uint32_t op)
{
	uint32_t zero = 0;

	x_bitwise(r, &mask, &zero, sizeof(mask));
	x_cmp(r, op, &value, sizeof(value));
}

static void x_verdict(struct nftnl_rule *r, int verdict)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	nftnl_rule_add_expr(r, e);
}

static void x_counter(struct nftnl_rule *r)
{
	nftnl_rule_add_expr(r, nftnl_expr_alloc("counter"));
}

static void x_queue(struct nftnl_rule *r, const struct plan *p, enum nft_queue_kind kind,
		    bool bypass)
{
	struct nftnl_expr *e;

	bypass = bypass || p->bypass;
	if (kind == NFT_QUEUE_NATIVE) {
		e = nftnl_expr_alloc("queue");
		nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_NUM, p->qnum);
		nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_TOTAL, p->qtotal);
		nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_FLAGS, bypass ? NFT_QUEUE_FLAG_BYPASS : 0);
	} else {
		/* libnftnl owns (frees) the info blob; xtables blobs are host order. */
		struct xt_NFQ_info_v3 *info = calloc(1, XT_ALIGN(sizeof(*info)));

		e = nftnl_expr_alloc("target");
		if (info) {
			info->queuenum = p->qnum;
			info->queues_total = p->qtotal;
			info->flags = bypass ? NFQ_FLAG_BYPASS : 0;
		}
		nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME, "NFQUEUE");
		nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 3);
		nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, info, XT_ALIGN(sizeof(*info)));
	}
	nftnl_rule_add_expr(r, e);
}

static void x_addr(struct nftnl_rule *r, const struct prefix *a, bool src)
{
	uint8_t nfproto = a->family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	uint32_t len = a->family == AF_INET ? 4 : 16;
	uint8_t mask[16] = { 0 }, zero[16] = { 0 }, want[16];

	x_meta(r, NFT_META_NFPROTO);
	x_cmp(r, NFT_CMP_EQ, &nfproto, 1);
	/* Source at IPv4 offset 12 / IPv6 8, destination at 16 / 24. */
	x_payload(r, NFT_PAYLOAD_NETWORK_HEADER,
		  a->family == AF_INET ? (src ? 12 : 16) : (src ? 8 : 24), len);
	for (unsigned bit = 0; bit < a->len; bit++)
		mask[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
	for (unsigned i = 0; i < len; i++)
		want[i] = a->addr[i] & mask[i];
	if (a->len != len * 8)
		x_bitwise(r, mask, zero, len);
	x_cmp(r, NFT_CMP_EQ, want, len);
}

static void x_l4_tcp(struct nftnl_rule *r)
{
	uint8_t tcp = IPPROTO_TCP;

	x_meta(r, NFT_META_L4PROTO);
	x_cmp(r, NFT_CMP_EQ, &tcp, 1);
}

/* socket transparent == value: no match at all when no socket is found. */
static void x_socket_transparent(struct nftnl_rule *r, uint8_t value)
{
	struct nftnl_expr *e = nftnl_expr_alloc("socket");

	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_TRANSPARENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	x_cmp(r, NFT_CMP_EQ, &value, 1);
}

static void x_tcp_port(struct nftnl_rule *r, uint16_t port, bool src)
{
	uint16_t be = htons(port);

	x_l4_tcp(r);
	x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, src ? 0 : TCP_DPORT_OFF, 2);
	x_cmp(r, NFT_CMP_EQ, &be, 2);
}

static void x_tcp_flags(struct nftnl_rule *r, uint8_t mask, uint8_t value, uint32_t op)
{
	uint8_t zero = 0;

	x_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, TCP_FLAGS_OFF, 1);
	x_bitwise(r, &mask, &zero, 1);
	x_cmp(r, op, &value, 1);
}

/*
 * Our INTEG code in the mark of a SYN: set the ct bit, clear our bits, and
 * go on through the chain.  No verdict: a mark alone, which some other
 * software might set, never lets a packet skip the knock rule.
 */
static void build_mark_rule(struct nftnl_rule *r, const struct kgw_marks *m)
{
	uint32_t ct_mask = ~m->ct_integ, ct_xor = m->ct_integ;
	uint32_t keep = ~m->mask, zero = 0;

	x_l4_tcp(r);
	x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
	x_meta(r, NFT_META_MARK);
	x_masked_eq32(r, m->mask, m->integ, NFT_CMP_EQ);
	/* ct mark = (ct mark & ~BIT) ^ BIT: sets the one bit. */
	x_ct(r, NFT_CT_MARK);
	x_bitwise(r, &ct_mask, &ct_xor, sizeof(ct_mask));
	x_ct_set(r, NFT_CT_MARK);
	x_meta(r, NFT_META_MARK);
	x_bitwise(r, &keep, &zero, sizeof(keep));
	x_meta_set(r, NFT_META_MARK);
	x_counter(r);
}

static void build_rule(struct nftnl_rule *r, const struct rule *ru, const struct plan *p,
		       enum nft_queue_kind kind)
{
	uint8_t dir_original = 0, dir_reply = 1;	/* IP_CT_DIR_ORIGINAL, _REPLY */
	const struct kgw_marks *m = &p->m;
	uint32_t keep = ~m->mask, zero = 0;

	switch (ru->kind) {
	case RK_MARK_INTEG:
		build_mark_rule(r, m);
		return;
	case RK_CT_KEEP:
		x_ct(r, NFT_CT_STATE);
		x_masked_eq32(r, NF_CT_STATE_BIT(IP_CT_ESTABLISHED), 0, NFT_CMP_NEQ);
		x_counter(r);
		return;
	case RK_CLOSED_SOCKET:
		x_l4_tcp(r);
		x_tcp_flags(r, TCP_ACK_BIT | TCP_RST_BIT, 0, NFT_CMP_EQ);
		x_socket_transparent(r, ru->value);
		x_verdict(r, NF_ACCEPT);
		return;
	case RK_CLOSED:
		x_l4_tcp(r);
		x_tcp_flags(r, TCP_ACK_BIT | TCP_RST_BIT, 0, NFT_CMP_EQ);
		x_counter(r);
		x_queue(r, p, kind, true);
		return;
	default:
		break;
	}
	if (ru->addr)
		x_addr(r, ru->addr, ru->addr_is_src);
	x_tcp_port(r, ru->port, ru->addr_is_src);
	switch (ru->kind) {
	case RK_SYN:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
		x_counter(r);
		x_queue(r, p, kind, false);
		break;
	case RK_STRAY_QUEUE:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT | TCP_RST_BIT, 0, NFT_CMP_EQ);
		x_counter(r);
		x_queue(r, p, kind, false);
		break;
	case RK_STRAY_DROP:
		x_ct(r, NFT_CT_STATE);
		x_masked_eq32(r, CT_STATE_NEW_OR_INVALID, 0, NFT_CMP_NEQ);
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_NEQ);
		x_counter(r);
		x_verdict(r, NF_DROP);
		break;
	case RK_NOCONN:
	case RK_INVALID_INTEG: {
		/* The mark tells the daemon which of the two queued it. */
		uint32_t why = ru->kind == RK_NOCONN ? m->noconn : m->invalid;

		x_ct(r, NFT_CT_STATE);
		x_masked_eq32(r, ru->kind == RK_NOCONN ? CT_STATE_NEW_OR_UNTRACKED
						      : NF_CT_STATE_INVALID_BIT,
			      0, NFT_CMP_NEQ);
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_NEQ);
		x_meta(r, NFT_META_MARK);
		x_bitwise(r, &keep, &why, sizeof(keep));
		x_meta_set(r, NFT_META_MARK);
		x_counter(r);
		x_queue(r, p, kind, false);
		break;
	}
	case RK_INTEG:
	case RK_INTEG_REPLY: {
		bool reply = ru->kind == RK_INTEG_REPLY;
		/*
		 * The daemon reads why a packet came from our bits: the service's
		 * side gets the reply code, the client's none, whatever it had.
		 */
		uint32_t code = reply ? m->reply : 0;

		x_ct(r, NFT_CT_MARK);
		x_masked_eq32(r, m->ct_integ, m->ct_integ, NFT_CMP_EQ);
		x_ct(r, NFT_CT_DIRECTION);
		x_cmp(r, NFT_CMP_EQ, reply ? &dir_reply : &dir_original, 1);
		x_meta(r, NFT_META_MARK);
		x_bitwise(r, &keep, reply ? &code : &zero, sizeof(keep));
		x_meta_set(r, NFT_META_MARK);
		x_counter(r);
		x_queue(r, p, kind, false);
		break;
	}
	case RK_CLIENT_SYN:
		x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_EQ);
		x_counter(r);
		x_queue(r, p, kind, false);
		break;
	case RK_CLIENT_OUT:
	case RK_CLIENT_IN:
		if (ru->kind == RK_CLIENT_OUT)
			x_tcp_flags(r, TCP_SYN_BIT | TCP_ACK_BIT, TCP_SYN_BIT, NFT_CMP_NEQ);
		/* The flow's shift, kept in its conntrack mark, rides to us in
		 * the packet mark (NFQA_MARK comes with every queued packet). */
		x_ct(r, NFT_CT_MARK);
		x_meta_set(r, NFT_META_MARK);
		x_counter(r);
		x_queue(r, p, kind, false);
		break;
	case RK_CLOSED_SKIP:
		x_verdict(r, NFT_RETURN);
		break;
	default:
		break;
	}
}

static const char *kind_name(enum rule_kind k)
{
	switch (k) {
	case RK_MARK_INTEG:
		return "integrity flag rule";
	case RK_SYN:
		return "knock rule";
	case RK_STRAY_QUEUE:
	case RK_STRAY_DROP:
	case RK_NOCONN:
		return "closed-port rule";
	case RK_INVALID_INTEG:
		return "integrity invalid-segment rule";
	case RK_INTEG:
		return "integrity rule";
	case RK_INTEG_REPLY:
		return "integrity reply rule";
	case RK_CLIENT_SYN:
		return "client knock rule";
	case RK_CLIENT_OUT:
	case RK_CLIENT_IN:
		return "client translation rule";
	case RK_CT_KEEP:
		return "conntrack keeper rule";
	case RK_CLOSED_SKIP:
		return "closed_ports rule";
	case RK_CLOSED_SOCKET:
		return "closed_ports listener rule (closed_ports \"daemon\"; needs nft_socket)";
	case RK_CLOSED:
		return "closed_ports rule";
	}
	return "rule";
}

static void put_rule(struct batch *bt, const char *table, const struct rule *ru,
		     const struct plan *p, enum nft_queue_kind kind)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	char what[MSG_WHAT_LEN];

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chains[ru->chain].name);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	build_rule(r, ru, p, kind);
	if (ru->port)
		snprintf(what, sizeof(what), "%s for port %u (%s entry at line %d)",
			 kind_name(ru->kind), ru->port,
			 ru->chain == CH_INPUT || ru->chain == CH_INPUT_CLOSED ||
					 ru->chain == CH_OUTPUT_INTEG
				 ? "protect"
				 : "knock",
			 ru->entry_line);
	else
		snprintf(what, sizeof(what), "%s", kind_name(ru->kind));
	nftnl_rule_nlmsg_build_payload(batch_msg(bt, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
						 what),
				       r);
	nftnl_rule_free(r);
	batch_update(bt);
}

static int install(const struct conf *c, enum nft_queue_kind kind, bool keeper, char *err,
		   size_t errlen)
{
	struct batch *bt = calloc(1, sizeof(*bt));
	struct plan *p = calloc(1, sizeof(*p));
	int ret = -ENOMEM;

	snprintf(err, errlen, "out of memory");
	if (!bt || !p || batch_init(bt) < 0)
		goto out;
	if ((keeper ? make_keeper_plan(c, p) : make_plan(c, p)) < 0)
		goto out;
	/*
	 * Create-then-delete-then-create in one transaction: whether or not an
	 * old table exists, the result is exactly the new one, atomically.
	 */
	put_table(bt, c->table, NFT_MSG_NEWTABLE, NLM_F_CREATE, "table (create)");
	put_table(bt, c->table, NFT_MSG_DELTABLE, 0, "table (replace)");
	put_table(bt, c->table, NFT_MSG_NEWTABLE, NLM_F_CREATE, "table");
	for (int ch = 0; ch < CH_MAX; ch++)
		if (p->used[ch])
			put_chain(bt, c->table, (enum chain_id)ch);
	for (size_t i = 0; i < p->n; i++)
		put_rule(bt, c->table, &p->r[i], p, kind);
	ret = batch_talk(bt, err, errlen);
out:
	if (bt)
		batch_free(bt);
	if (p)
		plan_free(p);
	free(bt);
	free(p);
	return ret;
}

int nftrules_install(const struct conf *c, enum nft_queue_kind kind, char *err, size_t errlen)
{
	return install(c, kind, false, err, errlen);
}

int nftrules_install_keeper(const struct conf *c, enum nft_queue_kind kind, char *err,
			    size_t errlen)
{
	return install(c, kind, true, err, errlen);
}

int nftrules_remove(const char *table)
{
	struct batch *bt = calloc(1, sizeof(*bt));
	char err[256];
	int ret = -ENOMEM;

	if (!bt || batch_init(bt) < 0)
		goto out;
	put_table(bt, table, NFT_MSG_DELTABLE, 0, "table (delete)");
	ret = batch_talk(bt, err, sizeof(err));
	if (ret == -ENOENT)
		ret = 0;
out:
	if (bt)
		batch_free(bt);
	free(bt);
	return ret;
}

int nftrules_present(const char *table)
{
	struct mnl_socket *nl = nl_open();
	char buf[8192];
	struct nlmsghdr *nlh;
	struct nftnl_table *t;
	uint32_t seq = (uint32_t)time(NULL);
	int ret, n;

	if (!nl)
		return -errno;
	t = nftnl_table_alloc();
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, table);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_INET, NLM_F_ACK, seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
	} else if ((n = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf))) <= 0) {
		ret = n < 0 ? -errno : -EIO;
	} else if (mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(nl), NULL, NULL) >= 0) {
		ret = 1;
	} else {
		/* Only "no such table" means it is gone; anything else is unknown. */
		ret = errno == ENOENT ? 0 : -errno;
	}
	mnl_socket_close(nl);
	return ret;
}

/*
 * Asks the kernel to take a rule with the native queue expression in a
 * throwaway table, inside a batch that ends with a command that must fail
 * (deleting a table that does not exist): the kernel then aborts the whole
 * transaction, so nothing is ever committed, and the rule's own answer says
 * whether the expression exists.  The same for the compat target.
 */
static int probe_kind(enum nft_queue_kind kind)
{
	struct batch *bt = calloc(1, sizeof(*bt));
	char table[48], err[256];
	struct plan p = { .qnum = 0, .qtotal = 1 };
	struct rule ru = { .kind = RK_SYN, .port = 9 };
	int ret = -ENOMEM;

	if (!bt || batch_init(bt) < 0)
		goto out;
	snprintf(table, sizeof(table), "knockgw_probe_%d", (int)getpid());
	put_table(bt, table, NFT_MSG_NEWTABLE, NLM_F_CREATE, "probe table");
	put_chain(bt, table, CH_INPUT);
	put_rule(bt, table, &ru, &p, kind);
	put_table(bt, "knockgw_probe_absent", NFT_MSG_DELTABLE, 0, "forced abort");
	batch_talk(bt, err, sizeof(err));
	/* Messages: 0 table, 1 chain, 2 rule, 3 forced abort. */
	if (bt->n != 4)
		ret = bt->failed ? bt->failed : -EIO;
	else if (bt->batch_err)
		ret = -bt->batch_err;	/* no permission, say */
	else if (!bt->m[2].done && !bt->m[3].done)
		ret = -EIO;		/* no answers at all: no nf_tables */
	else if (bt->m[2].done && bt->m[2].err)
		ret = -bt->m[2].err;
	else if (bt->m[0].done && bt->m[0].err)
		ret = -bt->m[0].err;
	else
		ret = 0;
out:
	if (bt)
		batch_free(bt);
	free(bt);
	return ret;
}

int nftrules_probe(enum nft_queue_kind *ret_kind)
{
	int r = probe_kind(NFT_QUEUE_NATIVE);

	if (r == 0) {
		*ret_kind = NFT_QUEUE_NATIVE;
		return 0;
	}
	r = probe_kind(NFT_QUEUE_COMPAT);
	if (r == 0) {
		*ret_kind = NFT_QUEUE_COMPAT;
		return 0;
	}
	return r;
}
