/*
 * nfq.c - NFQUEUE adapter (see nfq.h for the contract).
 *
 * Receive side: one recvmmsg() takes up to `batch` datagrams (one queued
 * packet each); MSG_WAITFORONE makes it block for the first only, and the
 * 10 ms SO_RCVTIMEO bounds that block for a caller that did not poll first.
 * The daemon's queue threads poll the socket and call in on POLLIN and on
 * POLLERR: a receive-buffer overflow (ENOBUFS) raises the socket error, and
 * only a receive clears it and lets the reader see the queue again (a
 * socket left with its error pending was seen to stay stuck, the kernel
 * dropping every queued packet meanwhile).
 * Send side: verdicts are collected, then written as consecutive netlink
 * messages in one send().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "common/log.h"
#include "kernel/nfq.h"
#include "kernel/nl.h"

enum {
	BUSY_TRIES = 100,		/* a queue held by another socket: ... */
	BUSY_WAIT_US = 20000,		/* ... waited for, 2 s at most */
	RCVBUF_BYTES = 8 << 20,		/* room for bursts; also keeps the socket from wedging */
	RCV_TIMEOUT_MS = 10,
	MSG_OVERHEAD = 1024,		/* netlink + nfqueue attributes around the copy */
	SEND_BUF_BYTES = 256 << 10,
	SNDBUF_BYTES = 1 << 20,		/* > SEND_BUF_BYTES: netlink refuses bigger sends */
	VERDICT_MSG_BYTES = 128,	/* one verdict without a packet */
	PKT_REF_MIN = 4096,		/* from this size a packet verdict is not copied */
	CFG_BUF_BYTES = 8192,		/* one config message and its ACK */
	EARLY_MAX = 1024,		/* packets remembered during the setup exchange */
};

struct pending {
	uint32_t id;
	uint32_t mark;
	uint8_t verdict;
	bool has_mark;
};

struct nfqueue {
	struct nl *nl;
	uint16_t num;
	unsigned batch;
	size_t bufsize;
	uint8_t *rxbufs;		/* batch x bufsize */
	struct mmsghdr *msgs;
	struct iovec *iovs;
	struct sockaddr_nl *from;	/* each datagram's sender: only the kernel's count */
	struct pending *pend;		/* at most batch + held verdicts per flush */
	size_t npend, pendcap;
	uint32_t last_id;		/* of the latest verdict added */
	bool unordered;			/* verdicts added out of id order since the flush */
	size_t held;
	uint32_t early[EARLY_MAX];	/* ids of packets read by the setup exchange */
	size_t nearly, early_lost;
	uint8_t *txbuf;			/* verdict messages built, not yet sent */
	size_t txoff;
	struct nfqueue_stats st;
};

/*
 * A packet queued while the socket was being set up (our rules may be in
 * place already: a restart over the table a killed daemon left) is read by
 * the configuration exchange, which has no use for it: its id is kept, and
 * it goes round our chain again once the queue is set up (NF_REPEAT).
 */
static int early_packet(const struct nlmsghdr *nlh, void *data)
{
	struct nfqueue *q = data;
	struct nlattr *attr[NFQA_MAX + 1] = { 0 };
	const struct nfqnl_msg_packet_hdr *ph;

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_QUEUE ||
	    NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_PACKET || nfq_nlmsg_parse(nlh, attr) < 0 ||
	    !attr[NFQA_PACKET_HDR] || mnl_attr_get_payload_len(attr[NFQA_PACKET_HDR]) < sizeof(*ph))
		return MNL_CB_OK;
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	if (q->nearly < EARLY_MAX)
		q->early[q->nearly++] = ntohl(ph->packet_id);
	else
		q->early_lost++;
	return MNL_CB_OK;
}

/* A config command, answered by its acknowledgement. */
static int cfg_talk(struct nfqueue *q, struct nlmsghdr *nlh)
{
	nlh->nlmsg_flags |= NLM_F_ACK;
	return nl_talk(q->nl, nlh, NULL, NULL);
}

/*
 * Bind, copy mode, length and flags in one message, which the kernel applies
 * in that order in one call.  Never a bind on its own: the kernel drops,
 * bypass or not, every packet that meets a queue bound without a copy mode
 * (NFQNL_COPY_NONE), and our rules may be queueing already (start installs
 * the table first), so a SYN arriving between two messages went unanswered.
 */
static int configure(struct nfqueue *q, uint32_t copy_range, uint32_t maxlen, unsigned flags)
{
	char buf[CFG_BUF_BYTES];
	struct nlmsghdr *nlh;
	uint32_t f = 0;
	int r;

	nl_set_other(q->nl, early_packet, q);
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, (int)copy_range);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, maxlen);
	if (flags & NFQUEUE_F_GSO)
		f |= NFQA_CFG_F_GSO;
	/*
	 * The mask names every flag we own, so stale ones are cleared too.
	 * NFQA_CFG_F_FAIL_OPEN is named and never set: with it the kernel
	 * accepts whatever does not fit in a full queue while we are
	 * attached, so a daemon that falls behind (or is stopped) would let a
	 * SYN flood reach the service unchecked.  A full queue drops.
	 */
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(f));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO));
	/*
	 * EBUSY: another socket holds the queue.  A daemon killed with -9
	 * leaves it to its queue guard for the moment the guard takes to
	 * answer what waits and let it go (qguard.h): wait for that, bounded;
	 * a daemon that really runs keeps it, and this one fails.
	 */
	for (unsigned tries = 0; (r = cfg_talk(q, nlh)) == -EBUSY && tries < BUSY_TRIES; tries++)
		usleep(BUSY_WAIT_US);
	nl_set_other(q->nl, NULL, NULL);
	if (r < 0) {
		errno = -r;
		log_warn("cannot bind NFQUEUE %u%s", q->num,
			 r == -EBUSY ? " (another process holds it)" : "");
		return r;
	}
	for (size_t i = 0; i < q->nearly; i++)
		nfqueue_verdict(q, q->early[i], NFQUEUE_REPEAT);
	if (q->nearly > 0 && nfqueue_flush(q) < 0)
		log_warn("NFQUEUE %u: cannot send packets that came during setup round again",
			 q->num);
	if (q->nearly > 0 || q->early_lost > 0)
		log_info("NFQUEUE %u: %zu packet(s) queued during setup sent round again, "
			 "%zu lost", q->num, q->nearly, q->early_lost);
	return 0;
}

static void set_sockopts(struct nfqueue *q)
{
	int r;

	if ((r = nl_raise_rcvbuf(q->nl, RCVBUF_BYTES)) < 0) {
		errno = -r;
		log_warn("NFQUEUE %u: cannot size the receive buffer", q->num);
	}
	/*
	 * One send carries a whole batch of verdicts, rewritten packets
	 * included; netlink refuses a message larger than the send buffer
	 * (EMSGSIZE), which would lose every verdict in it.
	 */
	if ((r = nl_raise_sndbuf(q->nl, SNDBUF_BYTES)) < 0) {
		errno = -r;
		log_warn("NFQUEUE %u: cannot size the send buffer", q->num);
	}
	if ((r = nl_set_rcvtimeo(q->nl, RCV_TIMEOUT_MS)) < 0) {
		errno = -r;
		log_warn("NFQUEUE %u: cannot set a receive timeout", q->num);
	}
}

struct nfqueue *nfqueue_open(uint16_t num, uint32_t copy_range, uint32_t maxlen, unsigned flags,
		     unsigned batch)
{
	struct nfqueue *q = calloc(1, sizeof(*q));
	int saved;

	if (!q)
		return NULL;
	q->num = num;
	q->batch = batch ? batch : 1;
	/* Each buffer starts a netlink message: keep them NLMSG_ALIGNTO-aligned. */
	q->bufsize = NLMSG_ALIGN(copy_range + MSG_OVERHEAD);
	q->pendcap = 2 * (size_t)q->batch;
	q->rxbufs = malloc(q->batch * q->bufsize);
	q->msgs = calloc(q->batch, sizeof(*q->msgs));
	q->iovs = calloc(q->batch, sizeof(*q->iovs));
	q->from = calloc(q->batch, sizeof(*q->from));
	q->pend = calloc(q->pendcap, sizeof(*q->pend));
	q->txbuf = malloc(SEND_BUF_BYTES);
	if (!q->rxbufs || !q->msgs || !q->iovs || !q->from || !q->pend || !q->txbuf) {
		errno = ENOMEM;
		goto fail;
	}
	q->nl = nl_open(NETLINK_NETFILTER, 0);
	if (!q->nl) {
		log_warn("NFQUEUE %u: cannot open a netlink socket", num);
		goto fail;
	}
	set_sockopts(q);
	if (configure(q, copy_range, maxlen, flags) < 0)
		goto fail;
	for (unsigned i = 0; i < q->batch; i++) {
		q->iovs[i].iov_base = q->rxbufs + i * q->bufsize;
		q->iovs[i].iov_len = q->bufsize;
		q->msgs[i].msg_hdr.msg_iov = &q->iovs[i];
		q->msgs[i].msg_hdr.msg_iovlen = 1;
		q->msgs[i].msg_hdr.msg_name = &q->from[i];
	}
	return q;
fail:
	saved = errno;
	nfqueue_close(q);
	errno = saved;
	return NULL;
}

void nfqueue_close(struct nfqueue *q)
{
	if (!q)
		return;
	if (q->nl) {
		/* Unbinding drops whatever is still queued: fail closed. */
		char buf[CFG_BUF_BYTES];
		struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);

		nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_UNBIND);
		nl_send(q->nl, nlh, nlh->nlmsg_len);
		nl_close(q->nl);
	}
	free(q->rxbufs);
	free(q->msgs);
	free(q->iovs);
	free(q->from);
	free(q->pend);
	free(q->txbuf);
	free(q);
}

static struct pending *pend_add(struct nfqueue *q, uint32_t id)
{
	if (q->npend == q->pendcap)
		nfqueue_flush(q);
	/*
	 * Released held packets come in sequence order, not id order; a batch
	 * verdict would then answer them in id order, or skip some.
	 */
	if (q->npend > 0 && (int32_t)(id - q->last_id) <= 0)
		q->unordered = true;
	q->last_id = id;
	return &q->pend[q->npend++];
}

void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v)
{
	*pend_add(q, id) = (struct pending){ .id = id, .verdict = (uint8_t)v };
}

void nfqueue_verdict_mark(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, uint32_t mark)
{
	*pend_add(q, id) = (struct pending){ .id = id, .verdict = (uint8_t)v, .mark = mark,
					     .has_mark = true };
}

static void build_pending(struct nfqueue *q);
static struct nlmsghdr *tx_room(struct nfqueue *q, size_t need, int type);

static int tx_send(struct nfqueue *q, size_t len);

/*
 * A large packet (GSO, up to 64 KB, on the client's user path) is not
 * copied into the send buffer: what is batched goes first, then the
 * packet's verdict in one sendmsg() whose iovec points at the caller's
 * bytes.  That saves a copy of the whole packet per packet; the extra
 * system call is small beside the kernel's own copies of such a packet.
 */
static void send_with_pkt(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v,
			  const uint8_t *pkt, size_t len, uint32_t mark)
{
	static const uint8_t zeros[NLA_ALIGNTO];
	char hdr[VERDICT_MSG_BYTES + NLA_HDRLEN];
	struct nlmsghdr *nlh;
	struct nlattr *a;
	struct iovec iov[3];
	size_t head, pad = NLA_ALIGN(NLA_HDRLEN + len) - (NLA_HDRLEN + len);

	tx_send(q, q->txoff);
	q->txoff = 0;
	nlh = nfq_nlmsg_put(hdr, NFQNL_MSG_VERDICT, q->num);
	nfq_nlmsg_verdict_put(nlh, (int)id, (int)v);
	nfq_nlmsg_verdict_put_mark(nlh, mark);
	/* The NFQA_PAYLOAD attribute's header here, its bytes in iov[1]. */
	head = NLMSG_ALIGN(nlh->nlmsg_len);
	a = (struct nlattr *)(hdr + head);
	a->nla_type = NFQA_PAYLOAD;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	head += NLA_HDRLEN;
	nlh->nlmsg_len = (uint32_t)(head + len + pad);
	iov[0] = (struct iovec){ .iov_base = hdr, .iov_len = head };
	iov[1] = (struct iovec){ .iov_base = (void *)(uintptr_t)pkt, .iov_len = len };
	iov[2] = (struct iovec){ .iov_base = (void *)(uintptr_t)zeros, .iov_len = pad };
	if (nl_sendv(q->nl, iov, 3) < 0)
		q->st.send_errors++;
	q->st.verdicts++;
	q->st.large_verdicts++;
	q->last_id = id;
}

void nfqueue_verdict_pkt(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v,
			 const uint8_t *pkt, size_t len, uint32_t mark)
{
	struct nlmsghdr *nlh;

	if (len > SEND_BUF_BYTES - VERDICT_MSG_BYTES) {
		/* Larger than anything the queue copies to us: cannot be ours. */
		q->st.send_errors++;
		nfqueue_verdict(q, id, NFQUEUE_DROP);
		return;
	}
	/*
	 * Verdicts go out in the order given: what is pending is built first.
	 * A small packet is copied once, straight into the message that
	 * carries it, and goes out with the batch.
	 */
	build_pending(q);
	if (len >= PKT_REF_MIN) {
		send_with_pkt(q, id, v, pkt, len, mark);
		return;
	}
	nlh = tx_room(q, VERDICT_MSG_BYTES + len, NFQNL_MSG_VERDICT);
	nfq_nlmsg_verdict_put(nlh, (int)id, (int)v);
	nfq_nlmsg_verdict_put_mark(nlh, mark);
	nfq_nlmsg_verdict_put_pkt(nlh, pkt, (uint32_t)len);
	q->txoff += NLMSG_ALIGN(nlh->nlmsg_len);
	q->st.verdicts++;
	q->last_id = id;
}

void nfqueue_set_held(struct nfqueue *q, size_t held)
{
	q->held = held;
}

static bool same_run(const struct pending *a, const struct pending *b)
{
	return a->verdict == b->verdict && a->has_mark == b->has_mark &&
	       a->mark == b->mark;
}

static int tx_send(struct nfqueue *q, size_t len)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)q->txbuf;
	int left = (int)len, ret = 0;

	if (len == 0 || nl_send(q->nl, q->txbuf, len) == 0)
		return 0;
	/*
	 * A lost verdict would leave its packet queued for good: retry the
	 * messages one by one, so one refused message costs only itself.
	 */
	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		int r = nl_send(q->nl, nlh, nlh->nlmsg_len);

		if (r < 0) {
			q->st.send_errors++;
			ret = r;
		}
	}
	return ret;
}

/* A message header at the end of the send buffer, sending it first if full. */
static struct nlmsghdr *tx_room(struct nfqueue *q, size_t need, int type)
{
	if (q->txoff + need > SEND_BUF_BYTES) {
		tx_send(q, q->txoff);
		q->txoff = 0;
	}
	return nfq_nlmsg_put((char *)q->txbuf + q->txoff, type, q->num);
}

/* Turns the pending verdicts into messages at the end of the send buffer. */
static void build_pending(struct nfqueue *q)
{
	for (size_t i = 0; i < q->npend; i++) {
		struct pending *p = &q->pend[i];
		bool batch = false;

		/*
		 * A batch verdict covers every queued id up to p->id, in id
		 * order, so it is only right when nothing older is held back
		 * and the verdicts were given in id order.
		 */
		if (q->held == 0 && !q->unordered) {
			while (i + 1 < q->npend && same_run(p, &q->pend[i + 1])) {
				q->st.verdicts++;
				p = &q->pend[++i];
				batch = true;
			}
		}
		struct nlmsghdr *nlh = tx_room(q, VERDICT_MSG_BYTES,
					       batch ? NFQNL_MSG_VERDICT_BATCH : NFQNL_MSG_VERDICT);
		nfq_nlmsg_verdict_put(nlh, (int)p->id, p->verdict);
		if (p->has_mark)
			nfq_nlmsg_verdict_put_mark(nlh, p->mark);
		q->txoff += NLMSG_ALIGN(nlh->nlmsg_len);
		q->st.verdicts++;
	}
	q->npend = 0;
	q->unordered = false;
}

int nfqueue_flush(struct nfqueue *q)
{
	int ret;

	build_pending(q);
	ret = tx_send(q, q->txoff) < 0 ? -EIO : 0;
	q->txoff = 0;
	return ret;
}

static void handle_msg(struct nfqueue *q, const struct nlmsghdr *nlh, nfqueue_handler handler, void *arg)
{
	struct nlattr *attr[NFQA_MAX + 1] = { 0 };
	struct nfqnl_msg_packet_hdr *ph;
	struct nfqueue_packet p = { 0 };

	if (nlh->nlmsg_type == NLMSG_ERROR) {
		/* A verdict the kernel refused (e.g. an id it no longer has). */
		q->st.nl_errors++;
		return;
	}
	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_QUEUE ||
	    NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_PACKET ||
	    nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR] ||
	    mnl_attr_get_payload_len(attr[NFQA_PACKET_HDR]) < sizeof(*ph)) {
		q->st.bad_msgs++;
		return;
	}
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	p.id = ntohl(ph->packet_id);
	p.hw_proto = ntohs(ph->hw_protocol);
	p.hook = ph->hook;
	if (attr[NFQA_MARK])
		p.mark = ntohl(mnl_attr_get_u32(attr[NFQA_MARK]));
	if (attr[NFQA_IFINDEX_INDEV])
		p.indev = ntohl(mnl_attr_get_u32(attr[NFQA_IFINDEX_INDEV]));
	if (attr[NFQA_SKB_INFO])
		p.skbinfo = ntohl(mnl_attr_get_u32(attr[NFQA_SKB_INFO]));
	if (attr[NFQA_PAYLOAD]) {
		p.data = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
		p.caplen = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
	} else {
		/*
		 * Queued before the copy mode was set (between the bind and
		 * the parameters of the setup): round again, now copied.
		 */
		nfqueue_verdict(q, p.id, NFQUEUE_REPEAT);
		return;
	}
	p.wirelen = attr[NFQA_CAP_LEN] ? ntohl(mnl_attr_get_u32(attr[NFQA_CAP_LEN])) : p.caplen;
	q->st.received++;
	handler(q, &p, arg);
}

int nfqueue_recv(struct nfqueue *q, nfqueue_handler handler, void *arg)
{
	int n;

	/* The kernel writes each sender's address length back. */
	for (unsigned i = 0; i < q->batch; i++)
		q->msgs[i].msg_hdr.msg_namelen = sizeof(q->from[i]);
	n = recvmmsg(nl_fd(q->nl), q->msgs, q->batch, MSG_WAITFORONE, NULL);
	if (n < 0) {
		switch (errno) {
		case EAGAIN:
		case EINTR:
			return 0;
		case ENOBUFS:
			/* The kernel dropped what did not fit; they got no verdict
			 * from us and need none.  Count it and read on. */
			q->st.enobufs++;
			return 0;
		default:
			return -errno;
		}
	}
	for (int i = 0; i < n; i++) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)q->iovs[i].iov_base;
		int len = (int)q->msgs[i].msg_len;

		/*
		 * Any local process may send to our port id; a packet message
		 * it forged could name a queued packet's id and get it our
		 * verdict.  Only the kernel's messages are read.
		 */
		if ((q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ||
		    q->msgs[i].msg_hdr.msg_namelen != sizeof(q->from[i]) ||
		    q->from[i].nl_pid != 0) {
			q->st.bad_msgs++;
			continue;
		}
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
			handle_msg(q, nlh, handler, arg);
	}
	nfqueue_flush(q);
	return n;
}

const struct nfqueue_stats *nfqueue_get_stats(const struct nfqueue *q)
{
	return &q->st;
}

int nfqueue_fd(const struct nfqueue *q)
{
	return nl_fd(q->nl);
}

uint16_t nfqueue_num(const struct nfqueue *q)
{
	return q->num;
}
