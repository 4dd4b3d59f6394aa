/*
 * nftbatch.h - one nf_tables transaction: tables, chains and rules built
 * into a batch of any size, sent in one datagram over the netlink
 * transport (nl.h), and every message's acknowledgement awaited.
 *
 * Contract:
 *   - Every message asks for an acknowledgement and is named (what) for
 *     the error report; the kernel applies the batch all or nothing.
 *   - nftbatch_commit() returns 0 only when every message was answered
 *     within the deadline and none failed.  Else -errno with err naming the
 *     batch refused as a whole, the first message that failed (with the
 *     kernel's reason when it gives one), or the first one never answered:
 *     an answer that did not come reads as a failure, never as success.
 *   - The receive buffer is sized for the answers to the whole batch, the
 *     send buffer for the batch.
 * Part of the rules adapter, which alone includes libnftnl.
 */
#ifndef KNOCKGW_NFTBATCH_H
#define KNOCKGW_NFTBATCH_H

#include <stdint.h>

#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftrules.h"
#include "kernel/nl.h"

struct nftnl_batch;

struct nftbatch {
	struct nftnl_batch *b;
	struct nl_acks acks;	/* each message's name and answer */
	int failed;		/* -errno: the batch is incomplete, never sent */
	uint32_t sets;		/* anonymous sets made so far (their ids) */
};

/* Starts a batch (its BEGIN message); 0 or -ENOMEM. */
int nftbatch_init(struct nftbatch *bt);
void nftbatch_free(struct nftbatch *bt);

/* type NFT_MSG_NEWTABLE or NFT_MSG_DELTABLE, family inet. */
void nftbatch_table(struct nftbatch *bt, const char *name, uint16_t type, uint16_t flags,
		    const char *what);
void nftbatch_chain(struct nftbatch *bt, const char *table, enum nftplan_chain ch);
/* Every rule of an existing chain deleted (the chain, and its hook, stay). */
void nftbatch_flush_chain(struct nftbatch *bt, const char *table, enum nftplan_chain ch);
/* The chain deleted if it exists (NFT_MSG_DESTROYCHAIN, Linux 6.3 and later). */
void nftbatch_destroy_chain(struct nftbatch *bt, const char *table, enum nftplan_chain ch);
void nftbatch_rule(struct nftbatch *bt, const char *table, const struct nftplan_rule *ru,
		   const struct nftplan *p, enum nft_queue_kind kind);

/*
 * Ends the batch, sends it and waits for every answer (bt->acks holds
 * them afterwards, for a caller that reads single answers).  0 or -errno
 * with the reason in err.
 */
int nftbatch_commit(struct nftbatch *bt, char *err, size_t errlen);

#endif
