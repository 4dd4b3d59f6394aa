/*
 * workers.h - the queue threads: queue.count of them, each with one queue
 * of every set (conf.h: SYNs, probes, data) and its own server and client
 * state.
 *
 * Worker i reads queue i of each set: the kernel spreads every set over its
 * queues with the same hash of the addresses, so a connection's SYN, its
 * probes and its data all meet the same worker and its state (an integrity
 * flow's held segments, say).  A worker sleeps in poll() on its queues'
 * descriptors, its wake eventfd and its next tick (server_tick/client_tick
 * once a second), and reads one batch at a time from the first readable
 * queue in the order SYNs, data, probes, polling again after each: a knock
 * waits for at most one batch of anything else, and a flood of probes or
 * of integrity segments fills its own queue, never the SYNs'.  It never waits for the
 * main thread, and the main thread never waits for it except to join it:
 *   - workers_publish() hands a configuration over: stored, its generation
 *     bumped, every worker woken; each takes it between batches, never
 *     inside one, and then writes the main thread's notify eventfd.
 *     workers_reached() says when all of them hold that generation (or a
 *     later one), i.e. none holds a configuration replaced before it.
 *   - A worker whose queue fails (nfqueue_recv() < 0) logs it, records the
 *     error (workers_error()) and ends, after writing the notify eventfd.
 *   - workers_stop() wakes every worker through its eventfd and joins it.
 * The replay and intent tables are shared (their own locking); the main
 * thread collects them (daemon.c).  Everything else a worker touches is its
 * own; its counters it publishes for the main thread (counterpub.h) after
 * each batch, tick and switch, before it sleeps.
 */
#ifndef KNOCKGW_WORKERS_H
#define KNOCKGW_WORKERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/conf.h"
#include "daemon/counterpub.h"
#include "daemon/stats.h"
#include "datapath/client/client.h"
#include "datapath/client/intent.h"
#include "datapath/door.h"
#include "datapath/server/replay.h"
#include "datapath/server/server.h"
#include "kernel/ctnl.h"
#include "kernel/nfq.h"
#include "kernel/rawsock.h"
#include "kernel/sockkill.h"

enum {
	WORKERS_MAX = 16,
	WORKER_TICK_MS = 1000,		/* server_tick/client_tick */
};

struct workers;

struct worker {
	pthread_t thread;
	struct workers *ws;
	unsigned index;
	int wake_fd;			/* eventfd: stop, or a new configuration */
	struct nfqueue *q[QSET_MAX];	/* queue index of each set */
	struct sockkill *sk;
	struct rawsock *rs;
	struct ctnl *ct;
	struct server srv;
	struct client cli;
	struct door door;		/* every queued packet's way to srv or cli */
	bool started;
	int error;			/* atomic: -errno of the queue that failed */
	unsigned gen;			/* atomic: configuration generation in use */
	uint64_t heartbeat;		/* atomic: monotonic ms of the last round */
	struct counterpub pub;		/* atomic: the counters, for the main thread */
};

struct workers {
	const struct conf *conf;	/* atomic: the published configuration */
	unsigned gen;			/* atomic: its generation */
	bool stop;			/* atomic */
	int notify_fd;			/* the main thread's eventfd */
	struct replay *replay;
	struct intent_table *intents;
	unsigned n;
	struct worker w[WORKERS_MAX];
};

/*
 * Opens min(queue_count, WORKERS_MAX) workers' queues (one of each set) and
 * each one's sockets and state for configuration c (generation 0).  notify_fd is written (an
 * eventfd add) whenever the main thread should look at the workers.
 * 0 or -errno, logged; workers_close() cleans up either way.
 */
int workers_open(struct workers *ws, const struct conf *c, struct replay *replay,
		 struct intent_table *intents, int notify_fd);

/* Starts the threads (which inherit the caller's signal mask). 0 or -errno. */
int workers_start(struct workers *ws);

/* Asks every worker to stop, wakes it, joins it.  Idempotent. */
void workers_stop(struct workers *ws);

/* Closes queues and sockets and frees the state; after workers_stop(). */
void workers_close(struct workers *ws);

/* Publishes c; returns its generation. */
unsigned workers_publish(struct workers *ws, const struct conf *c);

/* Has every worker taken generation gen, or a later one? */
bool workers_reached(const struct workers *ws, unsigned gen);

/* The first failed worker's -errno, or 0. */
int workers_error(const struct workers *ws);

/*
 * Has every worker made a round within the last max_age_ms (beyond its
 * tick, which it sleeps until when nothing comes)?  For the watchdog.
 */
bool workers_alive(const struct workers *ws, uint64_t now_ms, uint64_t max_age_ms);

/*
 * Adds every worker's published counters to s (stats_add_queue): as of each
 * worker's last batch.
 */
void workers_stats(const struct workers *ws, struct stats *s);

#endif
