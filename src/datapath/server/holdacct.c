/*
 * holdacct.c - see holdacct.h.
 */
#include <errno.h>
#include <string.h>

#include "datapath/server/holdacct.h"

struct usage {
	uint32_t pkts;
	uint32_t flows;
};

static const uint8_t no_addr[16];

static struct flow_entry *lookup(struct holdacct *h, int family, const uint8_t *src)
{
	struct flow_key k;

	flow_key_make(&k, family, src, no_addr, 0, 0);
	return flow_lookup(&h->sources, &k);
}

int holdacct_init(struct holdacct *h, size_t max_pkts, size_t max_src_pkts, size_t max_src_flows,
		  size_t max_sources)
{
	memset(h, 0, sizeof(*h));
	h->max_pkts = max_pkts;
	h->max_src_pkts = max_src_pkts;
	h->max_src_flows = max_src_flows;
	return flow_init(&h->sources, max_sources, sizeof(struct usage));
}

void holdacct_free(struct holdacct *h)
{
	flow_free(&h->sources);
}

bool holdacct_flow_ok(struct holdacct *h, int family, const uint8_t *src)
{
	struct flow_entry *e = lookup(h, family, src);

	return !e || ((struct usage *)e->value)->flows < h->max_src_flows;
}

int holdacct_flow_add(struct holdacct *h, int family, const uint8_t *src)
{
	struct flow_key k;
	struct flow_entry *e;
	bool created;

	flow_key_make(&k, family, src, no_addr, 0, 0);
	/* Entries never expire by time: they go with their source's last flow. */
	e = flow_insert(&h->sources, &k, UINT64_MAX, &created);
	if (!e)
		return -ENOSPC;
	((struct usage *)e->value)->flows++;
	return 0;
}

void holdacct_flow_del(struct holdacct *h, int family, const uint8_t *src, size_t npkts)
{
	struct flow_entry *e = lookup(h, family, src);
	struct usage *u;

	holdacct_pkt_del(h, family, src, npkts);
	if (!e)
		return;
	u = e->value;
	if (u->flows > 0)
		u->flows--;
	if (u->flows == 0)
		flow_remove(&h->sources, e);
}

enum hold_check holdacct_pkt_check(struct holdacct *h, int family, const uint8_t *src)
{
	struct flow_entry *e = lookup(h, family, src);

	if (e && ((struct usage *)e->value)->pkts >= h->max_src_pkts)
		return HOLD_SOURCE_FULL;
	if (h->pkts >= h->max_pkts)
		return HOLD_QUEUE_FULL;
	return HOLD_OK;
}

void holdacct_pkt_add(struct holdacct *h, int family, const uint8_t *src)
{
	struct flow_entry *e = lookup(h, family, src);

	h->pkts++;
	if (e)
		((struct usage *)e->value)->pkts++;
}

void holdacct_pkt_del(struct holdacct *h, int family, const uint8_t *src, size_t npkts)
{
	struct flow_entry *e = lookup(h, family, src);
	struct usage *u = e ? e->value : NULL;

	h->pkts -= npkts <= h->pkts ? npkts : h->pkts;
	if (u)
		u->pkts -= npkts <= u->pkts ? (uint32_t)npkts : u->pkts;
}
