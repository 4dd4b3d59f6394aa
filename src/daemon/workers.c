/*
 * workers.c - the queue threads (see workers.h for the contract).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "daemon/workers.h"

enum {
	QUEUE_BATCH = 64,		/* packets per recvmmsg */
	COPY_HEADERS = 512,		/* IP + extension headers + TCP with options */
	STOP_DRAIN_ROUNDS = 16,		/* batches read at a stop, at most */
};

static uint64_t now_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* An eventfd add: never blocks (a counter that would overflow is awake anyway). */
static void poke(int fd)
{
	uint64_t one = 1;

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("cannot wake a thread");
}

static void drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("cannot read an eventfd");
}

/* What a batch's packets come with: their worker and the set they were queued to. */
struct batch {
	struct worker *w;
	enum conf_qset set;
};

/* Every queued packet goes through the door (door.h), which tells the roles apart. */
static void on_packet(struct nfqueue *q, const struct nfqueue_packet *p, void *arg)
{
	struct batch *b = arg;

	door_packet(&b->w->door, b->set, q, p);
}

/*
 * A reloaded configuration: taken between batches, never inside one.
 * True when the worker switched.
 */
static bool take_conf(struct worker *w)
{
	struct workers *ws = w->ws;
	unsigned gen = __atomic_load_n(&ws->gen, __ATOMIC_ACQUIRE);

	if (gen == w->gen)
		return false;
	const struct conf *c = __atomic_load_n(&ws->conf, __ATOMIC_ACQUIRE);

	door_set_conf(&w->door, w->q[QSET_DATA], c, ws->n);
	__atomic_store_n(&w->gen, gen, __ATOMIC_RELEASE);
	poke(ws->notify_fd);
	return true;
}

static void tick(struct worker *w)
{
	door_tick(&w->door, w->q[QSET_DATA]);
}

/*
 * The counters, for the main thread (counterpub.h): after every batch, tick
 * and switch, before the thread sleeps.  all: every per-port and per-key
 * counter, after a switch moved them (else the configuration's only).
 */
static void publish(struct worker *w, bool all)
{
	struct nfqueue_stats sum = { 0 };
	const struct conf *c = w->srv.conf;

	/* The thread's queues of every set, as one. */
	for (int set = 0; set < QSET_MAX; set++) {
		const struct nfqueue_stats *q = nfqueue_get_stats(w->q[set]);

		sum.received += q->received;
		sum.verdicts += q->verdicts;
		sum.enobufs += q->enobufs;
		sum.nl_errors += q->nl_errors;
		sum.bad_msgs += q->bad_msgs;
		sum.send_errors += q->send_errors;
		sum.large_verdicts += q->large_verdicts;
	}
	counterpub_publish(&w->pub, &sum, &w->srv.cnt, w->cli.cnt,
			   all ? SIZE_MAX : c->nprotect, all ? SIZE_MAX : c->nkeys);
}

/* Which set a worker reads first, when several are readable. */
static const enum conf_qset read_order[QSET_MAX] = { QSET_SYN, QSET_DATA, QSET_PROBE };

/*
 * One batch from queue set: its verdicts go out with it (nfqueue_recv),
 * and so does what it decided for the others (held integrity segments wait
 * in the data queue whichever packet ends their flow) and its closed-port
 * answers; its log lines after all of those.  Packets handled, or -errno.
 */
static int read_batch(struct worker *w, enum conf_qset set)
{
	struct batch b = { w, set };
	int n = nfqueue_recv(w->q[set], on_packet, &b);

	for (int i = 0; i < QSET_MAX; i++)
		if (i != (int)set)
			nfqueue_flush(w->q[i]);
	w->srv.cnt.c[SC_rst_send_error] += (uint64_t)rawsock_flush(w->rs);
	/* The knocks' log lines, now that no packet waits for them. */
	log_later_flush(&w->srv.later);
	return n;
}

/*
 * At a stop: what the kernel queued before the table stopped queueing gets
 * its verdict now, rather than be dropped with the socket.  Bounded: the
 * rules queue nothing new by then (on_stop "hide"), and a flood that still
 * comes must not hold the stop up.
 */
static void drain_queues(struct worker *w, struct pollfd *pfd)
{
	for (int set = 0; set < QSET_MAX; set++) {
		for (int round = 0; round < STOP_DRAIN_ROUNDS; round++) {
			if (poll(&pfd[set], 1, 0) <= 0 || !(pfd[set].revents & POLLIN))
				break;
			if (read_batch(w, (enum conf_qset)set) <= 0)
				break;
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct workers *ws = w->ws;
	uint64_t next_tick = 0;
	bool all = true;	/* the first round publishes everything */
	struct pollfd pfd[QSET_MAX + 1];

	for (int set = 0; set < QSET_MAX; set++)
		pfd[set] = (struct pollfd){ .fd = nfqueue_fd(w->q[set]), .events = POLLIN };
	pfd[QSET_MAX] = (struct pollfd){ .fd = w->wake_fd, .events = POLLIN };
	for (;;) {
		uint64_t mono = now_ms(CLOCK_MONOTONIC);

		if (__atomic_load_n(&ws->stop, __ATOMIC_ACQUIRE)) {
			drain_queues(w, pfd);
			break;
		}
		if (take_conf(w))
			all = true;
		__atomic_store_n(&w->heartbeat, mono, __ATOMIC_RELAXED);
		w->srv.mono = w->cli.mono = mono / 1000;
		w->srv.wall = w->cli.wall = now_ms(CLOCK_REALTIME) / 1000;
		if (mono >= next_tick) {
			tick(w);
			/* On the second boundary, as the tables count in seconds. */
			next_tick = (mono / WORKER_TICK_MS + 1) * WORKER_TICK_MS;
		}
		/* The last batch's verdicts are out: its counters cost no latency here. */
		publish(w, all);
		all = false;
		if (poll(pfd, QSET_MAX + 1, (int)(next_tick - mono)) < 0) {
			if (errno == EINTR)
				continue;
			log_warn("queue thread %u: poll failed", w->index);
			__atomic_store_n(&w->error, -errno, __ATOMIC_RELEASE);
			break;
		}
		if (pfd[QSET_MAX].revents & POLLIN)
			drain(w->wake_fd);
		for (int i = 0; i < QSET_MAX; i++) {
			enum conf_qset set = read_order[i];
			int n;

			/*
			 * Errors too: nfqueue_recv() counts ENOBUFS and survives
			 * it, and reports what it cannot survive (a socket gone:
			 * POLLNVAL).
			 */
			if (!(pfd[set].revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)))
				continue;
			mono = now_ms(CLOCK_MONOTONIC);
			w->srv.mono = w->cli.mono = mono / 1000;
			w->srv.wall = w->cli.wall = now_ms(CLOCK_REALTIME) / 1000;
			n = read_batch(w, set);
			if (n < 0) {
				errno = -n;
				log_warn("queue %u: receive failed", nfqueue_num(w->q[set]));
				__atomic_store_n(&w->error, n, __ATOMIC_RELEASE);
				goto out;
			}
			/* One batch, then poll again: SYNs first. */
			break;
		}
	}
out:
	publish(w, true);	/* what the stop's drain or a failure left */
	poke(ws->notify_fd);
	return NULL;
}

/*
 * Only what decisions need (headers, and at most INTEG_MAX_LEN integrity
 * bytes, so a reload can raise integrity_len), unless the user path
 * rewrites whole packets.
 */
static uint32_t copy_range(const struct conf *c)
{
	if (c->translate == TRANSLATE_USER && c->nknock > 0)
		return 0xffff;
	return COPY_HEADERS + INTEG_MAX_LEN;
}

static int open_one(struct workers *ws, struct worker *w, const struct conf *c, unsigned flags)
{
	for (int set = 0; set < QSET_MAX; set++) {
		/* SYNs and probes are decided on their headers; data may be rewritten. */
		bool data = set == QSET_DATA;

		w->q[set] = nfqueue_open((uint16_t)(conf_queue_first(c, (enum conf_qset)set) +
						    w->index),
					 data ? copy_range(c) : COPY_HEADERS + INTEG_MAX_LEN,
					 c->queue_maxlen, data ? flags : 0, QUEUE_BATCH);
		if (!w->q[set])
			return -errno;
	}
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->wake_fd < 0) {
		log_warn("cannot make an eventfd");
		return -errno;
	}
	w->sk = sockkill_open();
	if (!w->sk)
		log_warn("queue %u: no sock_diag socket; integrity failures will not "
			 "abort the service's socket", c->queue_num + w->index);
	w->rs = rawsock_open();
	if (!w->rs) {
		log_warn("cannot open raw sockets for closed-port answers");
		return -errno;
	}
	/*
	 * Both roles use conntrack: the client's flows are created in it,
	 * and the server clears an integrity flow's bit there (a reload
	 * can add integrity entries, so always).
	 */
	w->ct = ctnl_open();
	if (!w->ct) {
		log_warn("cannot open a ctnetlink socket");
		return -errno;
	}
	if (server_init(&w->srv, c, ws->replay, w->sk, w->rs, w->ct, ws->n) < 0) {
		log_warnx("cannot allocate the pending-flow table");
		return -ENOMEM;
	}
	if (client_init(&w->cli, c, w->ct, w->rs, ws->intents) < 0) {
		log_warnx("cannot allocate the client SYN table");
		return -ENOMEM;
	}
	if (door_init(&w->door, c, &w->srv, &w->cli) < 0) {
		log_warnx("cannot allocate the verdict list");
		return -ENOMEM;
	}
	w->door.hold_q = w->q[QSET_DATA];
	return 0;
}

int workers_open(struct workers *ws, const struct conf *c, struct replay *replay,
		 struct intent_table *intents, int notify_fd)
{
	unsigned flags = 0;

	memset(ws, 0, sizeof(*ws));
	for (unsigned i = 0; i < WORKERS_MAX; i++)
		ws->w[i].wake_fd = -1;
	ws->conf = c;
	ws->notify_fd = notify_fd;
	ws->replay = replay;
	ws->intents = intents;
	/* The user path takes segmentation offloads whole (GSO) and fixes sums. */
	if (c->translate == TRANSLATE_USER && c->nknock > 0)
		flags |= NFQUEUE_F_GSO;
	ws->n = c->queue_count > WORKERS_MAX ? WORKERS_MAX : c->queue_count;
	for (unsigned i = 0; i < ws->n; i++) {
		struct worker *w = &ws->w[i];
		int r;

		w->ws = ws;
		w->index = i;
		r = open_one(ws, w, c, flags);
		if (r < 0)
			return r;
	}
	return 0;
}

int workers_start(struct workers *ws)
{
	for (unsigned i = 0; i < ws->n; i++) {
		int r = pthread_create(&ws->w[i].thread, NULL, worker_main, &ws->w[i]);

		if (r != 0) {
			/* Threads already started are stopped by workers_stop(). */
			errno = r;
			log_warn("cannot start queue thread");
			return -r;
		}
		ws->w[i].started = true;
	}
	return 0;
}

void workers_stop(struct workers *ws)
{
	__atomic_store_n(&ws->stop, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < ws->n; i++)
		if (ws->w[i].started)
			poke(ws->w[i].wake_fd);
	for (unsigned i = 0; i < ws->n; i++) {
		if (ws->w[i].started)
			pthread_join(ws->w[i].thread, NULL);
		ws->w[i].started = false;
	}
}

void workers_close(struct workers *ws)
{
	for (unsigned i = 0; i < WORKERS_MAX; i++) {
		struct worker *w = &ws->w[i];

		for (int set = 0; set < QSET_MAX; set++)
			if (w->q[set])
				nfqueue_close(w->q[set]);
		if (w->wake_fd >= 0)
			close(w->wake_fd);
		sockkill_close(w->sk);
		rawsock_close(w->rs);
		ctnl_close(w->ct);
		door_free(&w->door);
		server_free(&w->srv);
		client_free(&w->cli);
		memset(w, 0, sizeof(*w));
		w->wake_fd = -1;
	}
}

unsigned workers_publish(struct workers *ws, const struct conf *c)
{
	unsigned gen;

	/* The configuration before its generation: see workers_reached(). */
	__atomic_store_n(&ws->conf, c, __ATOMIC_RELEASE);
	gen = __atomic_add_fetch(&ws->gen, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < ws->n; i++)
		poke(ws->w[i].wake_fd);
	return gen;
}

/*
 * A worker stores its gen only after it has switched to the configuration
 * it read after loading that gen, and configurations are published before
 * their gen: a worker at gen or later holds no configuration replaced
 * before gen.  Generations wrap; the difference decides.
 */
bool workers_reached(const struct workers *ws, unsigned gen)
{
	for (unsigned i = 0; i < ws->n; i++)
		if ((int)(__atomic_load_n(&ws->w[i].gen, __ATOMIC_ACQUIRE) - gen) < 0)
			return false;
	return true;
}

int workers_error(const struct workers *ws)
{
	for (unsigned i = 0; i < ws->n; i++) {
		int e = __atomic_load_n(&ws->w[i].error, __ATOMIC_ACQUIRE);

		if (e)
			return e;
	}
	return 0;
}

bool workers_alive(const struct workers *ws, uint64_t now, uint64_t max_age_ms)
{
	for (unsigned i = 0; i < ws->n; i++) {
		uint64_t hb = __atomic_load_n(&ws->w[i].heartbeat, __ATOMIC_RELAXED);

		/* An idle worker sleeps until its tick: allow for that. */
		if (now > hb && now - hb > max_age_ms + WORKER_TICK_MS)
			return false;
	}
	return true;
}

void workers_stats(const struct workers *ws, struct stats *s)
{
	for (unsigned i = 0; i < ws->n && ws->w[i].q[QSET_MAX - 1]; i++) {
		struct counterpub snap;	/* ~7 KB: the main thread's stack has room */

		counterpub_read(&ws->w[i].pub, &snap);
		stats_add_queue(s, &(struct stats_queue_src){ .q = &snap.q, .srv = &snap.srv,
							      .cli = snap.cli });
	}
}
