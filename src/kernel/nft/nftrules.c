/*
 * nftrules.c - the daemon's nftables table (see nftrules.h).
 *
 * The rules adapter in six files: nftplan (the ruleset planned from the
 * configuration), nftprint (print-rules' text form of it, and the names of
 * its rules in error reports), nftexpr (a planned rule as libnftnl
 * expressions) from nftx (one expression each), nftbatch (one transaction: the batch sent, every answer
 * awaited), and this one, which puts them together: install and update
 * (a reload), the keeper and the hiding tables, remove, the presence
 * check and the queue probe (print-rules' entry point is nftprint's).
 */
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/table.h>

#include "common/log.h"
#include "kernel/nft/nftbatch.h"
#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftrules.h"
#include "kernel/nl.h"

enum { GET_BUF_BYTES = 8192 };

enum table_kind { TABLE_RUNNING, TABLE_KEEPER, TABLE_HIDING };

static int make_plan(const struct conf *c, struct nftplan *p, enum table_kind tk)
{
	switch (tk) {
	case TABLE_KEEPER:
		return nftplan_make_keeper(c, p);
	case TABLE_HIDING:
		return nftplan_make_hiding(c, p);
	default:
		return nftplan_make(c, p);
	}
}

/*
 * One transaction for the plan of kind tk.  in_place false: create, then
 * delete, then create the table: whether or not an old table exists, the
 * result is exactly the new one, atomically.  in_place true: the new rules
 * in the table's existing base chains: each chain the plan uses is created
 * if missing (an existing one must have the same type, hook and priority,
 * or the kernel refuses the batch) and emptied, every other chain of ours
 * is destroyed where it exists, then the rules go in.  A chain that stays
 * keeps its hook, and the kernel drops every packet waiting in the
 * namespace's queues whenever a hook goes away: so a reload, or the switch
 * to the hiding table at a stop, loses no SYN being decided.  Any refusal
 * (chains of another shape, a kernel without DESTROYCHAIN) leaves the
 * table as it was.
 */
static int install(const struct conf *c, enum nft_queue_kind kind, enum table_kind tk,
		   bool in_place, char *err, size_t errlen)
{
	struct nftbatch *bt = calloc(1, sizeof(*bt));
	struct nftplan *p = calloc(1, sizeof(*p));
	int ret = -ENOMEM;

	snprintf(err, errlen, "out of memory");
	if (!bt || !p || nftbatch_init(bt) < 0)
		goto out;
	if (make_plan(c, p, tk) < 0)
		goto out;
	if (!in_place) {
		nftbatch_table(bt, c->table, NFT_MSG_NEWTABLE, NLM_F_CREATE, "table (create)");
		nftbatch_table(bt, c->table, NFT_MSG_DELTABLE, 0, "table (replace)");
	}
	nftbatch_table(bt, c->table, NFT_MSG_NEWTABLE, NLM_F_CREATE, "table");
	for (int ch = 0; ch < CH_MAX; ch++) {
		enum nftplan_chain chain = (enum nftplan_chain)ch;

		if (p->used[ch])
			nftbatch_chain(bt, c->table, chain);
		if (p->used[ch] && in_place)
			nftbatch_flush_chain(bt, c->table, chain);
		else if (in_place)
			nftbatch_destroy_chain(bt, c->table, chain);
	}
	for (size_t i = 0; i < p->n; i++)
		nftbatch_rule(bt, c->table, &p->r[i], p, kind);
	ret = nftbatch_commit(bt, err, errlen);
out:
	if (bt)
		nftbatch_free(bt);
	if (p)
		nftplan_free(p);
	free(bt);
	free(p);
	return ret;
}

/* In place where the table's chains allow it, else replaced whole. */
static int replace(const struct conf *c, enum nft_queue_kind kind, enum table_kind tk, char *err,
		   size_t errlen)
{
	if (install(c, kind, tk, true, err, errlen) == 0)
		return 0;
	log_debug("table inet %s: rules not replaced in place (%s); replacing the table", c->table,
		  err);
	return install(c, kind, tk, false, err, errlen);
}

int nftrules_install(const struct conf *c, enum nft_queue_kind kind, char *err, size_t errlen)
{
	return install(c, kind, TABLE_RUNNING, false, err, errlen);
}

int nftrules_update(const struct conf *c, enum nft_queue_kind kind, char *err, size_t errlen)
{
	return replace(c, kind, TABLE_RUNNING, err, errlen);
}

int nftrules_install_hiding(const struct conf *c, enum nft_queue_kind kind, char *err,
			    size_t errlen)
{
	return replace(c, kind, TABLE_HIDING, err, errlen);
}

int nftrules_install_keeper(const struct conf *c, enum nft_queue_kind kind, char *err,
			    size_t errlen)
{
	return install(c, kind, TABLE_KEEPER, false, err, errlen);
}

int nftrules_remove(const char *table)
{
	struct nftbatch *bt = calloc(1, sizeof(*bt));
	char err[256];
	int ret = -ENOMEM;

	if (!bt || nftbatch_init(bt) < 0)
		goto out;
	nftbatch_table(bt, table, NFT_MSG_DELTABLE, 0, "table (delete)");
	ret = nftbatch_commit(bt, err, sizeof(err));
	if (ret == -ENOENT)
		ret = 0;
out:
	if (bt)
		nftbatch_free(bt);
	free(bt);
	return ret;
}

int nftrules_present(const char *table)
{
	struct nl *nl = nl_open(NETLINK_NETFILTER, 0);
	char buf[GET_BUF_BYTES];
	struct nlmsghdr *nlh;
	struct nftnl_table *t;
	int ret;

	if (!nl)
		return -errno;
	t = nftnl_table_alloc();
	if (!t) {
		nl_close(nl);
		return -ENOMEM;
	}
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, table);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_INET, NLM_F_ACK, 0);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	ret = nl_talk(nl, nlh, NULL, NULL);
	nl_close(nl);
	/* Only "no such table" means it is gone; anything else is unknown. */
	if (ret == 0)
		return 1;
	return ret == -ENOENT ? 0 : ret;
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
	struct nftbatch *bt = calloc(1, sizeof(*bt));
	char table[48], err[256];
	struct nftplan p = { .qtotal = 1 };
	struct nftplan_rule ru = { .kind = RK_STRAY_QUEUE, .chain = CH_INPUT_CLOSED, .port = 9 };
	const struct nl_ack *m;
	int ret = -ENOMEM;

	if (!bt || nftbatch_init(bt) < 0)
		goto out;
	snprintf(table, sizeof(table), "knockgw_probe_%d", (int)getpid());
	nftbatch_table(bt, table, NFT_MSG_NEWTABLE, NLM_F_CREATE, "probe table");
	nftbatch_chain(bt, table, CH_INPUT_CLOSED);
	nftbatch_rule(bt, table, &ru, &p, kind);
	nftbatch_table(bt, "knockgw_probe_absent", NFT_MSG_DELTABLE, 0, "forced abort");
	nftbatch_commit(bt, err, sizeof(err));
	/* Messages: 0 table, 1 chain, 2 rule, 3 forced abort. */
	m = bt->acks.m;
	if (bt->failed || bt->acks.n != 4)
		ret = bt->failed ? bt->failed : -EIO;
	else if (bt->acks.refused)
		ret = bt->acks.refused;	/* no permission, say */
	else if (!m[2].done && !m[3].done)
		ret = -EIO;		/* no answers at all: no nf_tables */
	else if (m[2].done && m[2].err)
		ret = m[2].err;
	else if (m[0].done && m[0].err)
		ret = m[0].err;
	else
		ret = 0;
out:
	if (bt)
		nftbatch_free(bt);
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
