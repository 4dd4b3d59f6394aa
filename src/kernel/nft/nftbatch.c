/*
 * nftbatch.c - an nf_tables transaction over the netlink transport (see
 * nftbatch.h).
 *
 * A batch of any size: libnftnl's pages, each with room past its limit for
 * the one message that crosses it (a message is written out before the
 * batch can tell it did not fit, and is then moved to a fresh page).  The
 * kernel runs the whole batch inside sendmsg() and queues an answer to
 * every message that asks for one before it returns; the answers are
 * matched to the messages by sequence number (nl.h's ledger), so the
 * deadline only ends the wait for answers that were lost.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>

#include "kernel/nft/nftbatch.h"
#include "kernel/nft/nftexpr.h"
#include "kernel/nft/nftprint.h"
#include "kernel/nft/nftx.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

/* nft's datatype of a port: a set's key type, so that `nft list` shows ports. */
enum { NFTBATCH_TYPE_INET_SERVICE = 13 };

enum {
	BATCH_PAGE_BYTES = 1 << 20,
	/* Room past a page's limit for the message that crosses it: larger
	 * than any one message (a netlink attribute's length is 16 bits). */
	MSG_ROOM_BYTES = (1 << 16) + 4096,
	SNDBUF_SLACK = 4096,
	/*
	 * What one answer costs in the receive buffer, as the kernel counts it
	 * (the socket buffer's overhead with the capped nlmsgerr): an
	 * estimate, so sized twice over, as nftables sizes it (messages x
	 * answer x margin).  An answer that does not fit is dropped by the
	 * kernel, and the install then fails naming it.
	 */
	ACK_BYTES = 1024,
	ACK_MARGIN = 2,
	ACK_WAIT_MS = 5000,
};

static void batch_update(struct nftbatch *bt)
{
	if (nftnl_batch_update(bt->b) < 0 && !bt->failed)
		bt->failed = -ENOMEM;
}

int nftbatch_init(struct nftbatch *bt)
{
	uint32_t seq = (uint32_t)time(NULL);

	memset(bt, 0, sizeof(*bt));
	nl_acks_init(&bt->acks, seq);
	bt->b = nftnl_batch_alloc(BATCH_PAGE_BYTES, MSG_ROOM_BYTES);
	if (!bt->b)
		return -ENOMEM;
	nftnl_batch_begin(nftnl_batch_buffer(bt->b), seq);
	batch_update(bt);
	return bt->failed;
}

void nftbatch_free(struct nftbatch *bt)
{
	if (bt->b)
		nftnl_batch_free(bt->b);
	bt->b = NULL;
	nl_acks_free(&bt->acks);
}

/*
 * Starts one message, named what.  It is built (into the page's spare
 * room) even when it cannot be recorded and will never be sent.
 */
static struct nlmsghdr *batch_msg(struct nftbatch *bt, uint16_t type, uint16_t flags,
				  const char *what)
{
	uint32_t seq = nl_acks_add(&bt->acks, what);

	if (bt->acks.failed && !bt->failed)
		bt->failed = bt->acks.failed;
	return nftnl_nlmsg_build_hdr(nftnl_batch_buffer(bt->b), type, NFPROTO_INET,
				     flags | NLM_F_ACK, seq);
}

void nftbatch_table(struct nftbatch *bt, const char *name, uint16_t type, uint16_t flags,
		    const char *what)
{
	struct nftnl_table *t = nftnl_table_alloc();

	if (!t) {
		bt->failed = -ENOMEM;
		return;
	}
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, name);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	nftnl_table_nlmsg_build_payload(batch_msg(bt, type, flags, what), t);
	nftnl_table_free(t);
	batch_update(bt);
}

/*
 * NFT_MSG_DESTROYCHAIN (Linux 6.3): the build's headers may predate it;
 * its number is fixed by the kernel's ABI.  An older kernel refuses the
 * message, and with it the batch (nftrules.c then replaces the table).
 */
enum { NFTBATCH_MSG_DESTROYCHAIN = 27 };

void nftbatch_chain(struct nftbatch *bt, const char *table, enum nftplan_chain ch)
{
	const struct nftplan_chain_def *d = nftplan_chain_def(ch);
	struct nftnl_chain *c = nftnl_chain_alloc();
	char what[NL_WHAT_LEN];

	if (!c) {
		bt->failed = -ENOMEM;
		return;
	}
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, d->name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, d->hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, d->priority);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, d->type);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	snprintf(what, sizeof(what), "chain %s", d->name);
	nftnl_chain_nlmsg_build_payload(batch_msg(bt, NFT_MSG_NEWCHAIN, NLM_F_CREATE, what), c);
	nftnl_chain_free(c);
	batch_update(bt);
}

/* A message about chain ch alone: type and flags. */
static void chain_only(struct nftbatch *bt, const char *table, enum nftplan_chain ch, uint16_t type,
		       const char *verb)
{
	const struct nftplan_chain_def *d = nftplan_chain_def(ch);
	char what[NL_WHAT_LEN];

	snprintf(what, sizeof(what), "%s %s", verb, d->name);
	if (type == NFT_MSG_DELRULE) {
		struct nftnl_rule *r = nftnl_rule_alloc();

		if (!r) {
			bt->failed = -ENOMEM;
			return;
		}
		nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
		nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, d->name);
		nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
		nftnl_rule_nlmsg_build_payload(batch_msg(bt, type, 0, what), r);
		nftnl_rule_free(r);
	} else {
		struct nftnl_chain *c = nftnl_chain_alloc();

		if (!c) {
			bt->failed = -ENOMEM;
			return;
		}
		nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
		nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, d->name);
		nftnl_chain_nlmsg_build_payload(batch_msg(bt, type, 0, what), c);
		nftnl_chain_free(c);
	}
	batch_update(bt);
}

void nftbatch_flush_chain(struct nftbatch *bt, const char *table, enum nftplan_chain ch)
{
	chain_only(bt, table, ch, NFT_MSG_DELRULE, "flush chain");
}

void nftbatch_destroy_chain(struct nftbatch *bt, const char *table, enum nftplan_chain ch)
{
	chain_only(bt, table, ch, NFTBATCH_MSG_DESTROYCHAIN, "destroy chain");
}

/*
 * The anonymous set of rule ru's ports (constant: it lives and goes with
 * the rule), its elements, and its id in this batch; 0 when out of memory.
 */
static uint32_t port_set(struct nftbatch *bt, const char *table, const struct nftplan_rule *ru,
			 const char *what)
{
	struct nftnl_set *s = nftnl_set_alloc();
	uint32_t id = ++bt->sets;

	if (!s)
		return 0;
	nftnl_set_set_str(s, NFTNL_SET_TABLE, table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, NFTX_ANON_SET);
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(s, NFTNL_SET_ID, id);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, NFT_SET_ANONYMOUS | NFT_SET_CONSTANT);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, NFTBATCH_TYPE_INET_SERVICE);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, sizeof(uint16_t));
	for (uint16_t i = 0; i < ru->nports; i++) {
		struct nftnl_set_elem *e = nftnl_set_elem_alloc();
		uint16_t be = htons(ru->ports[i]);

		if (!e) {
			nftnl_set_free(s);
			return 0;
		}
		nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &be, sizeof(be));
		nftnl_set_elem_add(s, e);
	}
	nftnl_set_nlmsg_build_payload(batch_msg(bt, NFT_MSG_NEWSET, NLM_F_CREATE, what), s);
	batch_update(bt);
	nftnl_set_elems_nlmsg_build_payload(batch_msg(bt, NFT_MSG_NEWSETELEM, NLM_F_CREATE, what),
					    s);
	batch_update(bt);
	nftnl_set_free(s);
	return id;
}

void nftbatch_rule(struct nftbatch *bt, const char *table, const struct nftplan_rule *ru,
		   const struct nftplan *p, enum nft_queue_kind kind)
{
	char what[NL_WHAT_LEN];
	uint32_t set_id = 0;
	struct nftnl_rule *r;

	nftprint_rule_what(ru, what, sizeof(what));
	if (ru->nports > 1 && (set_id = port_set(bt, table, ru, what)) == 0) {
		bt->failed = -ENOMEM;
		return;
	}
	r = nftexpr_rule(table, ru, p, kind, set_id);
	if (!r) {
		bt->failed = -ENOMEM;
		return;
	}
	nftnl_rule_nlmsg_build_payload(
		batch_msg(bt, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND, what), r);
	nftnl_rule_free(r);
	batch_update(bt);
}

/* Opens the socket sized for this batch: total bytes, n answers. */
static struct nl *open_for(size_t total, size_t n)
{
	struct nl *nl = nl_open(NETLINK_NETFILTER, 0);

	if (!nl)
		return NULL;
	/* Extended ACKs carry the kernel's reason; capped ACKs stay small. */
	nl_set_flag(nl, NETLINK_EXT_ACK, true);
	nl_set_flag(nl, NETLINK_CAP_ACK, true);
	/*
	 * The kernel takes the batch in one datagram no larger than the send
	 * buffer, and drops answers that do not fit in the receive buffer:
	 * both must hold the whole batch and every answer to it.
	 */
	nl_raise_sndbuf(nl, total + SNDBUF_SLACK);
	nl_raise_rcvbuf(nl, (n + 2) * ACK_BYTES * ACK_MARGIN);
	return nl;
}

int nftbatch_commit(struct nftbatch *bt, char *err, size_t errlen)
{
	struct iovec *iov;
	struct nl *nl;
	size_t total = 0;
	int ret, niov;

	nftnl_batch_end(nftnl_batch_buffer(bt->b), bt->acks.begin_seq + 1 + (uint32_t)bt->acks.n);
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
	nl = open_for(total, bt->acks.n);
	if (!nl) {
		ret = -errno;
		snprintf(err, errlen, "cannot open a netfilter netlink socket: %s", strerror(errno));
		free(iov);
		return ret;
	}
	ret = nl_sendv(nl, iov, (size_t)niov);
	if (ret < 0) {
		snprintf(err, errlen, "cannot send the batch (%zu messages, %zu bytes): %s",
			 bt->acks.n, total, strerror(-ret));
	} else {
		/* The answers decide: a transport error leaves some missing. */
		nl_acks_wait(nl, &bt->acks, ACK_WAIT_MS);
		ret = nl_acks_result(&bt->acks, err, errlen);
	}
	nl_close(nl);
	free(iov);
	return ret;
}
