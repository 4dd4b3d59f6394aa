/*
 * counterpub.h - a queue thread's counters, published for the main thread.
 *
 * A queue thread counts in memory of its own with plain increments (the
 * server's, the client's and each nfqueue's counters): no atomics, no locks,
 * no syscalls on the packet path.  The main thread reads counters for
 * `knockgw status`, the metrics, STATUS= and the log; reading the thread's
 * own memory would be a data race in C11 terms, and a 64-bit load could be
 * torn.  So between batches the thread copies its counters into its
 * struct counterpub with relaxed atomic stores (counterpub_publish), and
 * the main thread copies them out with relaxed atomic loads
 * (counterpub_read).
 *
 * Every counter is read whole.  A snapshot may hold some counters as they
 * stood after one batch and others after the next: no reader can tell that
 * from reading a moment later, and no counter guards other data, so
 * relaxed order is enough (WireGuard's u64_stats_sync makes the same trade
 * on 64-bit hosts).  Per-port and per-key counters change only for the
 * configuration's protect entries and keys, and all of them only when a
 * reload carries them over (server_counters_carry): a batch publishes the
 * first nports and nkeys of them, a switch of configuration all of them.
 */
#ifndef KNOCKGW_COUNTERPUB_H
#define KNOCKGW_COUNTERPUB_H

#include <stddef.h>
#include <stdint.h>

#include "datapath/client/client.h"
#include "datapath/server/server.h"
#include "kernel/nfq.h"

/* Written by one queue thread, read by the main thread: atomics only. */
struct counterpub {
	struct nfqueue_stats q;		/* the thread's queues of every set, summed */
	struct server_counters srv;
	uint64_t cli[CC_MAX];
};

/*
 * The queue thread: publishes q, srv and cli, of srv's per-port and per-key
 * counters the first nports and nkeys (clamped to what there is; SIZE_MAX:
 * all of them).
 */
void counterpub_publish(struct counterpub *pub, const struct nfqueue_stats *q,
			const struct server_counters *srv, const uint64_t cli[static CC_MAX],
			size_t nports, size_t nkeys);

/* Any thread: a copy of everything published so far. */
void counterpub_read(const struct counterpub *pub, struct counterpub *ret);

#endif
