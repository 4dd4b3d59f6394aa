/*
 * ctnl.c - see ctnl.h.  Messages built with libmnl; attribute layout as in
 * net/netfilter/nf_conntrack_netlink.c (ctnetlink_create_conntrack,
 * ctnetlink_change_seq_adj, ctnetlink_parse_tuple).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>

#include "kernel/ctnl.h"
#include "kernel/nl.h"

enum {
	CT_BUF_BYTES = 8192,
	TCP_CONNTRACK_SYN_SENT_STATE = 1,	/* enum tcp_conntrack: SYN_SENT */
};

/* The transport bounds every wait (nl.h): a lost answer cannot hang a worker. */
struct ctnl {
	struct nl *nl;
};

struct ctnl *ctnl_open(void)
{
	struct ctnl *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nl = nl_open(NETLINK_NETFILTER, 0);
	if (!c->nl) {
		int saved = errno;

		ctnl_close(c);
		errno = saved;
		return NULL;
	}
	return c;
}

void ctnl_close(struct ctnl *c)
{
	if (!c)
		return;
	nl_close(c->nl);
	free(c);
}

/* A request that asks for an acknowledgement; nl_talk() stamps its seq. */
static struct nlmsghdr *put_header(char *buf, int type, uint16_t flags, int family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = (uint8_t)family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	return nlh;
}

static void put_tuple(struct nlmsghdr *nlh, int type, int family, const uint8_t *src,
		      const uint8_t *dst, uint16_t sport, uint16_t dport)
{
	struct nlattr *tuple = mnl_attr_nest_start(nlh, (uint16_t)type);
	struct nlattr *ip = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);

	if (family == AF_INET) {
		mnl_attr_put(nlh, CTA_IP_V4_SRC, 4, src);
		mnl_attr_put(nlh, CTA_IP_V4_DST, 4, dst);
	} else {
		mnl_attr_put(nlh, CTA_IP_V6_SRC, 16, src);
		mnl_attr_put(nlh, CTA_IP_V6_DST, 16, dst);
	}
	mnl_attr_nest_end(nlh, ip);
	struct nlattr *proto = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, IPPROTO_TCP);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(dport));
	mnl_attr_nest_end(nlh, proto);
	mnl_attr_nest_end(nlh, tuple);
}

static void put_orig(struct nlmsghdr *nlh, const struct ct_flow *f)
{
	put_tuple(nlh, CTA_TUPLE_ORIG, f->family, f->src, f->dst, f->sport, f->dport);
}

int ctnl_create(struct ctnl *c, const struct ct_flow *f, bool seqadj, uint32_t kernel_isn,
		uint32_t delta, uint32_t timeout, const struct ct_labels *labels)
{
	char buf[CT_BUF_BYTES];
	struct nlmsghdr *nlh = put_header(buf, IPCTNL_MSG_CT_NEW, NLM_F_CREATE | NLM_F_EXCL,
					  f->family);

	put_orig(nlh, f);
	put_tuple(nlh, CTA_TUPLE_REPLY, f->family, f->dst, f->src, f->dport, f->sport);
	/* Mandatory for a new entry (EINVAL without it). */
	mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(timeout));
	if (labels) {
		/* The kernel writes (labels & ~mask) | (val & mask), word by word. */
		mnl_attr_put(nlh, CTA_LABELS, sizeof(labels->val), labels->val);
		mnl_attr_put(nlh, CTA_LABELS_MASK, sizeof(labels->mask), labels->mask);
	}
	if (f->snat) {
		/* A range of one address; the other manipulation gets a null binding. */
		struct nlattr *nat = mnl_attr_nest_start(nlh, CTA_NAT_SRC);

		if (f->family == AF_INET) {
			mnl_attr_put(nlh, CTA_NAT_V4_MINIP, 4, f->snat_addr);
			mnl_attr_put(nlh, CTA_NAT_V4_MAXIP, 4, f->snat_addr);
		} else {
			mnl_attr_put(nlh, CTA_NAT_V6_MINIP, 16, f->snat_addr);
			mnl_attr_put(nlh, CTA_NAT_V6_MAXIP, 16, f->snat_addr);
		}
		mnl_attr_nest_end(nlh, nat);
	}

	if (seqadj) {
		struct nlattr *adj = mnl_attr_nest_start(nlh, CTA_SEQ_ADJ_ORIG);

		mnl_attr_put_u32(nlh, CTA_SEQADJ_CORRECTION_POS, htonl(kernel_isn));
		mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_BEFORE, htonl(delta));
		mnl_attr_put_u32(nlh, CTA_SEQADJ_OFFSET_AFTER, htonl(delta));
		mnl_attr_nest_end(nlh, adj);
	}

	struct nlattr *pi = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
	struct nlattr *tcp = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
	mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, TCP_CONNTRACK_SYN_SENT_STATE);
	mnl_attr_nest_end(nlh, tcp);
	mnl_attr_nest_end(nlh, pi);
	return nl_talk(c->nl, nlh, NULL, NULL);
}

/*
 * One attribute table per nest, as large as that nest's own highest type:
 * a type above it (a newer kernel's, or a forged one) is skipped, never
 * written past the table.
 */
struct attr_table {
	const struct nlattr **tb;
	uint16_t max;
};

static int table_cb(const struct nlattr *attr, void *data)
{
	const struct attr_table *t = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (type <= t->max)
		t->tb[type] = attr;
	return MNL_CB_OK;
}

static void parse_nest(const struct nlattr *nest, const struct nlattr **tb, uint16_t max)
{
	struct attr_table t = { tb, max };

	mnl_attr_parse_nested(nest, table_cb, &t);
}

static bool get_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a || mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return false;
	*v = ntohl(mnl_attr_get_u32(a));
	return true;
}

/* The TCP state in CTA_PROTOINFO, or TCP_CONNTRACK_NONE. */
static uint8_t tcp_state(const struct nlattr *protoinfo)
{
	const struct nlattr *pi[CTA_PROTOINFO_MAX + 1] = { 0 };
	const struct nlattr *tcp[CTA_PROTOINFO_TCP_MAX + 1] = { 0 };

	parse_nest(protoinfo, pi, CTA_PROTOINFO_MAX);
	if (!pi[CTA_PROTOINFO_TCP])
		return TCP_CONNTRACK_NONE;
	parse_nest(pi[CTA_PROTOINFO_TCP], tcp, CTA_PROTOINFO_TCP_MAX);
	if (!tcp[CTA_PROTOINFO_TCP_STATE] ||
	    mnl_attr_validate(tcp[CTA_PROTOINFO_TCP_STATE], MNL_TYPE_U8) < 0)
		return TCP_CONNTRACK_NONE;
	return mnl_attr_get_u8(tcp[CTA_PROTOINFO_TCP_STATE]);
}

/* Label words as the kernel holds them (host order), whole words only. */
static void get_labels(const struct nlattr *a, uint32_t ret[static MARKS_LABEL_WORDS])
{
	uint16_t len = a ? mnl_attr_get_payload_len(a) : 0;

	if (len == 0 || len % sizeof(uint32_t) != 0)
		return;
	if (len > MARKS_LABEL_WORDS * sizeof(uint32_t))
		len = MARKS_LABEL_WORDS * sizeof(uint32_t);
	memcpy(ret, mnl_attr_get_payload(a), len);
}

int ctnl_parse_info(const struct nlmsghdr *nlh, struct ct_info *ret)
{
	const struct nlattr *tb[CTA_MAX + 1] = { 0 };
	const struct nlattr *adj[CTA_SEQADJ_MAX + 1] = { 0 };
	struct attr_table t = { tb, CTA_MAX };
	struct ct_info out = { 0 };
	uint32_t pos, delta;

	/*
	 * The kernel pads every message to NLMSG_ALIGNTO, and libmnl walks the
	 * attributes up to the aligned length: an unaligned one would have it
	 * read bytes past the message.
	 */
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct nfgenmsg)) ||
	    nlh->nlmsg_len % NLMSG_ALIGNTO)
		return -EBADMSG;
	mnl_attr_parse(nlh, sizeof(struct nfgenmsg), table_cb, &t);
	get_u32(tb[CTA_MARK], &out.mark);
	get_labels(tb[CTA_LABELS], out.labels);
	if (tb[CTA_PROTOINFO])
		out.tcp_state = tcp_state(tb[CTA_PROTOINFO]);
	if (tb[CTA_SEQ_ADJ_ORIG]) {
		parse_nest(tb[CTA_SEQ_ADJ_ORIG], adj, CTA_SEQADJ_MAX);
		if (get_u32(adj[CTA_SEQADJ_CORRECTION_POS], &pos) &&
		    get_u32(adj[CTA_SEQADJ_OFFSET_BEFORE], &delta)) {
			out.has_seqadj = true;
			out.pos = pos;
			out.delta = delta;
		}
	}
	*ret = out;
	return 0;
}

static int info_cb(const struct nlmsghdr *nlh, void *data)
{
	int r = ctnl_parse_info(nlh, data);

	if (r < 0) {
		errno = -r;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

int ctnl_get(struct ctnl *c, const struct ct_flow *f, struct ct_info *ret)
{
	char buf[CT_BUF_BYTES];
	struct nlmsghdr *nlh = put_header(buf, IPCTNL_MSG_CT_GET, 0, f->family);
	struct ct_info out = { 0 };
	int r;

	put_orig(nlh, f);
	r = nl_talk(c->nl, nlh, info_cb, &out);
	if (r < 0)
		return r;
	*ret = out;
	return 0;
}

int ctnl_set_mark(struct ctnl *c, const struct ct_flow *f, uint32_t mark, uint32_t mask)
{
	char buf[CT_BUF_BYTES];
	/* NEW without NLM_F_CREATE: change an entry that exists, make none. */
	struct nlmsghdr *nlh = put_header(buf, IPCTNL_MSG_CT_NEW, 0, f->family);

	put_orig(nlh, f);
	/* The kernel keeps the bits outside mask: mark = (mark & ~mask) ^ ours. */
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(mark & mask));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(mask));
	return nl_talk(c->nl, nlh, NULL, NULL);
}

int ctnl_delete(struct ctnl *c, const struct ct_flow *f)
{
	char buf[CT_BUF_BYTES];
	struct nlmsghdr *nlh = put_header(buf, IPCTNL_MSG_CT_DELETE, 0, f->family);

	put_orig(nlh, f);
	return nl_talk(c->nl, nlh, NULL, NULL);
}

struct count_ctx {
	long n;
	unsigned label_base;
};

/* Is an entry's original tuple TCP? */
static bool is_tcp(const struct nlattr *orig)
{
	const struct nlattr *t[CTA_TUPLE_MAX + 1] = { 0 }, *pr[CTA_PROTO_MAX + 1] = { 0 };

	parse_nest(orig, t, CTA_TUPLE_MAX);
	if (!t[CTA_TUPLE_PROTO])
		return false;
	parse_nest(t[CTA_TUPLE_PROTO], pr, CTA_PROTO_MAX);
	return pr[CTA_PROTO_NUM] && mnl_attr_validate(pr[CTA_PROTO_NUM], MNL_TYPE_U8) >= 0 &&
	       mnl_attr_get_u8(pr[CTA_PROTO_NUM]) == IPPROTO_TCP;
}

/* A connection that is over needs no translation any more. */
static bool is_over(const struct nlattr *protoinfo)
{
	uint8_t st = tcp_state(protoinfo);

	return st == TCP_CONNTRACK_TIME_WAIT || st == TCP_CONNTRACK_CLOSE;
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	struct count_ctx *cc = data;
	const struct nlattr *tb[CTA_MAX + 1] = { 0 };
	struct attr_table t = { tb, CTA_MAX };
	uint32_t labels[MARKS_LABEL_WORDS] = { 0 }, shift;

	mnl_attr_parse(nlh, sizeof(struct nfgenmsg), table_cb, &t);
	if (!tb[CTA_TUPLE_ORIG] || !is_tcp(tb[CTA_TUPLE_ORIG]))
		return MNL_CB_OK;
	if (tb[CTA_PROTOINFO] && is_over(tb[CTA_PROTOINFO]))
		return MNL_CB_OK;
	get_labels(tb[CTA_LABELS], labels);
	if (tb[CTA_SEQ_ADJ_ORIG] || marks_label_get(cc->label_base, labels, &shift))
		cc->n++;
	return MNL_CB_OK;
}

long ctnl_count_translated(struct ctnl *c, unsigned label_base)
{
	char buf[CT_BUF_BYTES];
	struct nlmsghdr *nlh = put_header(buf, IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	struct count_ctx cc = { 0, label_base };
	int r;

	/* A dump ends with NLMSG_DONE; it asks for no acknowledgement. */
	nlh->nlmsg_flags &= (uint16_t)~NLM_F_ACK;
	r = nl_talk(c->nl, nlh, count_cb, &cc);

	return r < 0 ? r : cc.n;
}
