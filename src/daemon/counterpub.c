/*
 * counterpub.c - publishing a queue thread's counters (see counterpub.h).
 */
#include "daemon/counterpub.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A field added to either struct must be published here too. */
_Static_assert(sizeof(struct nfqueue_stats) == 7 * sizeof(uint64_t),
	       "store_q() and load_q() copy seven figures");
_Static_assert(sizeof(struct server_counters) ==
		       sizeof(uint64_t) * (SC_MAX + PKT_DROP_MAX + 2 * CONF_MAX_PROTECT +
					   CONF_MAX_KEYS),
	       "counterpub_publish() copies five arrays");

static void store(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

static void load(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static size_t clamp(size_t n, size_t max)
{
	return n < max ? n : max;
}

/* struct nfqueue_stats field by field: it is no array. */
static void store_q(struct nfqueue_stats *dst, const struct nfqueue_stats *src)
{
	__atomic_store_n(&dst->received, src->received, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->verdicts, src->verdicts, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->enobufs, src->enobufs, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->nl_errors, src->nl_errors, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->bad_msgs, src->bad_msgs, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->send_errors, src->send_errors, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->large_verdicts, src->large_verdicts, __ATOMIC_RELAXED);
}

static void load_q(struct nfqueue_stats *dst, const struct nfqueue_stats *src)
{
	dst->received = __atomic_load_n(&src->received, __ATOMIC_RELAXED);
	dst->verdicts = __atomic_load_n(&src->verdicts, __ATOMIC_RELAXED);
	dst->enobufs = __atomic_load_n(&src->enobufs, __ATOMIC_RELAXED);
	dst->nl_errors = __atomic_load_n(&src->nl_errors, __ATOMIC_RELAXED);
	dst->bad_msgs = __atomic_load_n(&src->bad_msgs, __ATOMIC_RELAXED);
	dst->send_errors = __atomic_load_n(&src->send_errors, __ATOMIC_RELAXED);
	dst->large_verdicts = __atomic_load_n(&src->large_verdicts, __ATOMIC_RELAXED);
}

void counterpub_publish(struct counterpub *pub, const struct nfqueue_stats *q,
			const struct server_counters *srv, const uint64_t cli[static CC_MAX],
			size_t nports, size_t nkeys)
{
	nports = clamp(nports, N(srv->port_accepted));
	nkeys = clamp(nkeys, N(srv->key_accepted));
	store_q(&pub->q, q);
	store(pub->srv.c, srv->c, N(srv->c));
	store(pub->srv.pkt_drop, srv->pkt_drop, N(srv->pkt_drop));
	store(pub->srv.port_accepted, srv->port_accepted, nports);
	store(pub->srv.port_refused, srv->port_refused, nports);
	store(pub->srv.key_accepted, srv->key_accepted, nkeys);
	store(pub->cli, cli, CC_MAX);
}

void counterpub_read(const struct counterpub *pub, struct counterpub *ret)
{
	load_q(&ret->q, &pub->q);
	load(ret->srv.c, pub->srv.c, N(pub->srv.c));
	load(ret->srv.pkt_drop, pub->srv.pkt_drop, N(pub->srv.pkt_drop));
	load(ret->srv.port_accepted, pub->srv.port_accepted, N(pub->srv.port_accepted));
	load(ret->srv.port_refused, pub->srv.port_refused, N(pub->srv.port_refused));
	load(ret->srv.key_accepted, pub->srv.key_accepted, N(pub->srv.key_accepted));
	load(ret->cli, pub->cli, N(pub->cli));
}
