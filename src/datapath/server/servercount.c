/*
 * servercount.c - a server's counters across a reload (server.h:
 * server_counters_carry): the per-key and per-port counts follow their key
 * and their port, wherever the new configuration puts them.
 */
#include <stdbool.h>
#include <string.h>

#include "config/conf.h"
#include "datapath/server/server.h"

/* key_accepted[] from old's key indices to c's, by name. */
static void carry_key_counters(struct server_counters *cnt, const struct conf *old,
			       const struct conf *c)
{
	uint64_t was[CONF_MAX_KEYS];

	memcpy(was, cnt->key_accepted, sizeof(was));
	for (size_t j = 0; j < CONF_MAX_KEYS; j++) {
		uint64_t v = 0;

		for (size_t i = 0; old && j < c->nkeys && i < old->nkeys && i < CONF_MAX_KEYS; i++)
			if (strcmp(old->keys[i].name, c->keys[j].name) == 0)
				v = was[i];
		cnt->key_accepted[j] = v;
	}
}

/*
 * What names a protect entry's counts outside (knockgw_port_knocks_total's
 * labels): its port, mode and whether it checks integrity.
 */
static bool same_port_series(const struct conf_protect *a, const struct conf_protect *b)
{
	return a->port == b->port && a->mode == b->mode &&
	       (a->integrity_len > 0) == (b->integrity_len > 0);
}

/* How many entries before index i of c name the same series as entry i. */
static size_t series_rank(const struct conf *c, size_t i)
{
	size_t n = 0;

	for (size_t k = 0; k < i; k++)
		n += same_port_series(&c->protect[k], &c->protect[i]);
	return n;
}

/*
 * port_accepted[] and port_refused[] from old's entry indices to c's: an
 * entry keeps the counts of the old entry that names the same series (the
 * n-th such in c takes the n-th in old), wherever a reload moved it; an
 * entry new to c starts from zero.
 */
static void carry_port_counters(struct server_counters *cnt, const struct conf *old,
				const struct conf *c)
{
	uint64_t acc[CONF_MAX_PROTECT], ref[CONF_MAX_PROTECT];
	size_t nold = old ? (old->nprotect < CONF_MAX_PROTECT ? old->nprotect : CONF_MAX_PROTECT) : 0;

	memcpy(acc, cnt->port_accepted, sizeof(acc));
	memcpy(ref, cnt->port_refused, sizeof(ref));
	for (size_t j = 0; j < CONF_MAX_PROTECT; j++) {
		uint64_t a = 0, r = 0;

		if (j < c->nprotect) {
			size_t rank = series_rank(c, j);

			for (size_t i = 0; i < nold; i++) {
				if (same_port_series(&old->protect[i], &c->protect[j]) &&
				    series_rank(old, i) == rank) {
					a = acc[i];
					r = ref[i];
					break;
				}
			}
		}
		cnt->port_accepted[j] = a;
		cnt->port_refused[j] = r;
	}
}

void server_counters_carry(struct server_counters *cnt, const struct conf *old, const struct conf *c)
{
	carry_key_counters(cnt, old, c);
	carry_port_counters(cnt, old, c);
}
