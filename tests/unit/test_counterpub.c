/*
 * test_counterpub.c - a queue thread's counters, published (counterpub.[ch]).
 *
 * Rows: numbered publications of a private block whose every counter holds
 * a value of its own, each with the per-port and per-key counts it covers;
 * after each, what a reader gets: every counter published so far, the
 * per-port and per-key ones past the count as the last publication that
 * covered them left them.  Then one writer thread that counts and publishes
 * while the main thread reads: every counter read is one the writer
 * published (both 32-bit halves of each value agree, so a torn load shows),
 * and none goes back.  Built with ThreadSanitizer (make check-tsan), that
 * part also shows any access outside the atomics.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon/counterpub.h"
#include "unit.h"

/* Counter values of round r: distinct per field and index. */
static uint64_t val(unsigned r, unsigned field, size_t i)
{
	return (uint64_t)r << 40 | (uint64_t)field << 32 | (uint64_t)i;
}

enum { F_C, F_DROP, F_PORT_A, F_PORT_R, F_KEY, F_CLI, F_Q };

struct priv {
	struct nfqueue_stats q;
	struct server_counters srv;
	uint64_t cli[CC_MAX];
};

static void fill(struct priv *p, unsigned r)
{
	p->q = (struct nfqueue_stats){ val(r, F_Q, 0), val(r, F_Q, 1), val(r, F_Q, 2),
				       val(r, F_Q, 3), val(r, F_Q, 4), val(r, F_Q, 5),
				       val(r, F_Q, 6) };
	for (size_t i = 0; i < SC_MAX; i++)
		p->srv.c[i] = val(r, F_C, i);
	for (size_t i = 0; i < PKT_DROP_MAX; i++)
		p->srv.pkt_drop[i] = val(r, F_DROP, i);
	for (size_t i = 0; i < CONF_MAX_PROTECT; i++) {
		p->srv.port_accepted[i] = val(r, F_PORT_A, i);
		p->srv.port_refused[i] = val(r, F_PORT_R, i);
	}
	for (size_t i = 0; i < CONF_MAX_KEYS; i++)
		p->srv.key_accepted[i] = val(r, F_KEY, i);
	for (size_t i = 0; i < CC_MAX; i++)
		p->cli[i] = val(r, F_CLI, i);
}

struct row {
	size_t nports, nkeys;	/* what this round publishes of them */
};

/* Row i publishes round i + 1's values. */
static const struct row rows[] = {
	/* 1 */ { SIZE_MAX, SIZE_MAX },	/* everything */
	/* 2 */ { 3, 2 },		/* the configuration's few */
	/* 3 */ { 0, 0 },		/* none: what rows 1 and 2 left stays */
	/* 4 */ { 100000, 100000 },	/* clamped: everything */
	/* 5 */ { 5, 4 },
};

/*
 * The reference: the round each per-port and per-key counter was last
 * published in; the others must all be round r's.
 */
struct model {
	unsigned port[CONF_MAX_PROTECT], key[CONF_MAX_KEYS];
};

static void check_round(const struct counterpub *got, unsigned r, const struct model *m,
			unsigned row_no)
{
	bool ok = true;

	ok &= got->q.received == val(r, F_Q, 0) && got->q.verdicts == val(r, F_Q, 1) &&
	      got->q.enobufs == val(r, F_Q, 2) && got->q.nl_errors == val(r, F_Q, 3) &&
	      got->q.bad_msgs == val(r, F_Q, 4) && got->q.send_errors == val(r, F_Q, 5) &&
	      got->q.large_verdicts == val(r, F_Q, 6);
	for (size_t i = 0; i < SC_MAX; i++)
		ok &= got->srv.c[i] == val(r, F_C, i);
	for (size_t i = 0; i < PKT_DROP_MAX; i++)
		ok &= got->srv.pkt_drop[i] == val(r, F_DROP, i);
	for (size_t i = 0; i < CC_MAX; i++)
		ok &= got->cli[i] == val(r, F_CLI, i);
	CHECK(ok, "row %u: every other counter is round %u's\n", row_no, r);
	for (size_t i = 0; i < CONF_MAX_PROTECT; i++) {
		if (got->srv.port_accepted[i] != val(m->port[i], F_PORT_A, i) ||
		    got->srv.port_refused[i] != val(m->port[i], F_PORT_R, i)) {
			CHECK(false, "row %u: port %zu is round %u's\n", row_no, i, m->port[i]);
			return;
		}
	}
	for (size_t i = 0; i < CONF_MAX_KEYS; i++) {
		if (got->srv.key_accepted[i] != val(m->key[i], F_KEY, i)) {
			CHECK(false, "row %u: key %zu is round %u's\n", row_no, i, m->key[i]);
			return;
		}
	}
	CHECK(true, "row %u\n", row_no);
}

static void rows_test(void)
{
	struct counterpub *pub = calloc(1, sizeof(*pub)), *got = calloc(1, sizeof(*got));
	struct priv *p = calloc(1, sizeof(*p));
	struct model *m = calloc(1, sizeof(*m));

	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned r = i + 1;

		fill(p, r);
		counterpub_publish(pub, &p->q, &p->srv, p->cli, rows[i].nports, rows[i].nkeys);
		for (size_t k = 0; k < CONF_MAX_PROTECT && k < rows[i].nports; k++)
			m->port[k] = r;
		for (size_t k = 0; k < CONF_MAX_KEYS && k < rows[i].nkeys; k++)
			m->key[k] = r;
		counterpub_read(pub, got);
		check_round(got, r, m, r);
	}
	free(pub);
	free(got);
	free(p);
	free(m);
}

/* ------------------------------------------------ one writer, one reader */

enum { ROUNDS = 20000 };

struct race {
	struct counterpub pub;
	bool done;		/* atomic */
};

/* Both halves the same: a load torn between two publications shows. */
static uint64_t twin(uint32_t n)
{
	return (uint64_t)n << 32 | n;
}

static void *writer(void *arg)
{
	struct race *rc = arg;
	struct priv *p = calloc(1, sizeof(*p));

	for (uint32_t n = 1; p && n <= ROUNDS; n++) {
		p->q.received = twin(n);
		p->srv.c[SC_syn_accepted] = twin(n);
		p->srv.port_accepted[1] = twin(n);
		p->srv.key_accepted[0] = twin(n);
		p->cli[CC_MAX - 1] = twin(n);
		counterpub_publish(&rc->pub, &p->q, &p->srv, p->cli, 2, 1);
	}
	free(p);
	__atomic_store_n(&rc->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static bool whole(uint64_t v, uint64_t *last)
{
	bool ok = (v >> 32) == (v & 0xffffffff) && v >= *last;

	*last = v;
	return ok;
}

static void race_test(void)
{
	struct race *rc = calloc(1, sizeof(*rc));
	struct counterpub *got = calloc(1, sizeof(*got));
	uint64_t last[5] = { 0 };
	unsigned bad = 0, reads = 0;
	pthread_t t;
	bool done;

	CHECK(pthread_create(&t, NULL, writer, rc) == 0, "the writer starts\n");
	do {
		done = __atomic_load_n(&rc->done, __ATOMIC_ACQUIRE);
		counterpub_read(&rc->pub, got);
		reads++;
		bad += !whole(got->q.received, &last[0]);
		bad += !whole(got->srv.c[SC_syn_accepted], &last[1]);
		bad += !whole(got->srv.port_accepted[1], &last[2]);
		bad += !whole(got->srv.key_accepted[0], &last[3]);
		bad += !whole(got->cli[CC_MAX - 1], &last[4]);
	} while (!done);
	pthread_join(t, NULL);
	CHECK_EQ_U(bad, 0, "counters read whole and never going back, over %u reads", reads);
	/* After the join (and the last read after done): the last round. */
	CHECK_EQ_U(got->srv.c[SC_syn_accepted], twin(ROUNDS), "the last publication is read");
	free(rc);
	free(got);
}

int main(void)
{
	rows_test();
	race_test();
	return unit_done("counterpub");
}
