/*
 * knockgw - silent port knocking in user space (SPEC.md).
 *
 *   knockgw [-c FILE] [-f] [-n] [-v]   run, or with -n check the config
 *   knockgw genkey                     print a new base64 32-byte key
 *   knockgw print-rules [-c FILE]      print the nft ruleset it would install
 *   knockgw status [-c FILE]           counters and flows of the running daemon
 *
 * Running: bind one NFQUEUE per queue (queue.num .. num+count-1) and open
 * every socket the data path needs, drop all capabilities but CAP_NET_ADMIN,
 * start one thread per queue (each with its own state), install the nft
 * table (so no packet is ever queued to nobody by our doing), then tell
 * systemd READY=1.  The main thread serves the control socket, signals,
 * STATUS= and the watchdog.  SIGHUP reloads (all-or-nothing), SIGUSR1 logs
 * the counters, SIGTERM/SIGINT stop: the table is deleted, the queues
 * unbound, the keys wiped.  The process does not fork (systemd Type=notify);
 * without -f it logs to syslog.
 */
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <systemd/sd-daemon.h>

#include "client.h"
#include "conf.h"
#include "ctl.h"
#include "ctnl.h"
#include "intent.h"
#include "keys.h"
#include "log.h"
#include "nfq.h"
#include "nftrules.h"
#include "rawsock.h"
#include "replay.h"
#include "server.h"
#include "sockkill.h"

#define DEFAULT_CONF "/etc/knockgw/knockgw.conf"

enum {
	QUEUE_BATCH = 64,		/* packets per recvmmsg */
	COPY_HEADERS = 512,		/* IP + extension headers + TCP with options */
	MAX_QUEUES = 16,
	STATUS_EVERY_MS = 2000,		/* STATUS= refresh for systemd */
	TABLE_CHECK_MS = 2000,		/* how often the table's presence is checked */
	SWITCH_WAIT_MS = 2000,		/* workers take a new config within ~10 ms */
};

/* The only globals: flags set by signal handlers (everything else is in struct knockgw). */
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t dump_requested;
static volatile sig_atomic_t reload_requested;

struct worker {
	pthread_t thread;
	struct knockgw *kg;
	unsigned index;
	struct nfqueue *q;
	struct sockkill *sk;
	struct rawsock *rs;
	struct ctnl *ct;
	struct server srv;
	struct client cli;
	bool started;
	int error;
	unsigned gen;			/* configuration generation in use */
	uint64_t heartbeat;		/* monotonic ms of the last loop: watchdog */
};

/*
 * A configuration that was published to the workers and then replaced while
 * some worker may not have moved on yet: freed once every worker has taken
 * generation gen (the one that replaced it), never sooner.
 */
struct retired_conf {
	struct retired_conf *next;
	struct conf *conf;
	unsigned gen;
};

struct knockgw {
	struct conf *conf;		/* current; workers follow conf_gen */
	unsigned conf_gen;
	struct retired_conf *retired;	/* replaced, maybe still held by a worker */
	enum nft_queue_kind queue_kind;
	struct replay replay;
	struct intent_table *intents;
	struct ctl ctl;
	bool ctl_open;
	unsigned nworkers;
	struct worker workers[MAX_QUEUES];
	bool table_installed;
	uint64_t started_ms;
	unsigned reloads, reloads_refused;
	unsigned table_restores;
	struct log_ratelimit rl_table;	/* "cannot check table" warnings */
	bool verbose;			/* -v: debug logging whatever the file says */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: knockgw [-c FILE] [-f] [-n] [-v]\n"
		   "       knockgw genkey\n"
		   "       knockgw print-rules [-c FILE]\n"
		   "       knockgw status [-c FILE]\n");
}

/* Secrets must not leak through a core dump or a ptrace by another user. */
static void harden_process(void)
{
	struct rlimit rl = { 0, 0 };

	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static uint64_t now_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int cmd_genkey(void)
{
	char b64[64];

	if (key_generate_base64(b64, sizeof(b64)) < 0) {
		fprintf(stderr, "knockgw: cannot encode the key\n");
		return 1;
	}
	fputs(b64, stdout);
	sodium_memzero(b64, sizeof(b64));
	return fflush(stdout) == 0 ? 0 : 1;
}

/* Loads and validates; reports every error as FILE:LINE: message. */
static struct conf *load_conf(const char *path, bool to_log)
{
	struct conf *c = calloc(1, sizeof(*c));
	struct conf_errors *errs = calloc(1, sizeof(*errs));

	if (!c || !errs) {
		fprintf(stderr, "knockgw: out of memory\n");
		free(c);
		free(errs);
		return NULL;
	}
	if (conf_load(path, c, errs) < 0) {
		for (size_t i = 0; i < errs->n; i++) {
			if (to_log)
				log_warnx("%s", errs->msg[i]);
			else
				fprintf(stderr, "%s\n", errs->msg[i]);
		}
		if (errs->overflow) {
			if (to_log)
				log_warnx("%s: too many errors, stopped", path);
			else
				fprintf(stderr, "%s: too many errors, stopped\n", path);
		}
		free(c);
		c = NULL;
	}
	free(errs);
	return c;
}

static void free_conf(struct conf *c)
{
	if (c) {
		conf_free(c);	/* wipes the keyring */
		free(c);
	}
}

/*
 * One queue carries both roles; the hook tells them apart: the server's
 * rules queue at input (and, for integrity flows, the service's segments at
 * output, marked: server_wants), the client's at output (SYNs, and the user
 * path's outgoing packets) and prerouting (the user path's incoming ones).
 */
static void on_packet(struct nfqueue *q, const struct nfqueue_packet *p, void *arg)
{
	struct worker *w = arg;

	if (server_wants(&w->srv, p))
		server_packet(&w->srv, q, p);
	else
		client_packet(&w->cli, q, p);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct knockgw *kg = w->kg;
	uint64_t last_tick = 0, last_gc = 0;

	while (!stop_requested) {
		/* A reloaded configuration: taken between batches, never inside. */
		unsigned gen = __atomic_load_n(&kg->conf_gen, __ATOMIC_ACQUIRE);
		if (gen != w->gen) {
			const struct conf *c = __atomic_load_n(&kg->conf, __ATOMIC_ACQUIRE);

			server_set_conf(&w->srv, w->q, c, kg->nworkers);
			client_set_conf(&w->cli, c);
			__atomic_store_n(&w->gen, gen, __ATOMIC_RELEASE);
		}
		uint64_t mono = now_ms(CLOCK_MONOTONIC);
		__atomic_store_n(&w->heartbeat, mono, __ATOMIC_RELAXED);
		w->srv.mono = w->cli.mono = mono / 1000;
		w->srv.wall = w->cli.wall = now_ms(CLOCK_REALTIME) / 1000;

		int n = nfqueue_recv(w->q, on_packet, w);
		/* The closed-port answers of the batch, in one system call. */
		w->srv.cnt.c[SC_rst_send_error] += (uint64_t)rawsock_flush(w->rs);
		if (n < 0) {
			errno = -n;
			log_warn("queue %u: receive failed", nfqueue_num(w->q));
			w->error = n;
			stop_requested = 1;
			break;
		}
		if (w->srv.mono != last_tick) {
			last_tick = w->srv.mono;
			server_tick(&w->srv, w->q);
			client_tick(&w->cli);
			/* Shared tables are collected by one thread only. */
			if (w->index == 0 && w->srv.mono >= last_gc + 5) {
				last_gc = w->srv.mono;
				replay_gc(&kg->replay, w->srv.mono);
				intent_gc(kg->intents, w->srv.mono);
			}
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ counters */

struct totals {
	struct server_counters srv;
	uint64_t cli[CC_MAX];
	struct nfqueue_stats q;
};

static void sum_counters(struct knockgw *kg, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < kg->nworkers && kg->workers[i].q; i++) {
		const struct worker *w = &kg->workers[i];
		const struct nfqueue_stats *s = nfqueue_get_stats(w->q);

		/* Plain reads of another thread's counters: a snapshot, maybe
		 * a packet old, which is all a status line needs. */
		for (int k = 0; k < SC_MAX; k++)
			t->srv.c[k] += w->srv.cnt.c[k];
		for (int k = 0; k < PKT_DROP_MAX; k++)
			t->srv.pkt_drop[k] += w->srv.cnt.pkt_drop[k];
		for (int k = 0; k < CONF_MAX_PROTECT; k++) {
			t->srv.port_accepted[k] += w->srv.cnt.port_accepted[k];
			t->srv.port_refused[k] += w->srv.cnt.port_refused[k];
		}
		for (int k = 0; k < CC_MAX; k++)
			t->cli[k] += w->cli.cnt[k];
		t->q.received += s->received;
		t->q.verdicts += s->verdicts;
		t->q.enobufs += s->enobufs;
		t->q.nl_errors += s->nl_errors;
		t->q.bad_msgs += s->bad_msgs;
		t->q.send_errors += s->send_errors;
		t->q.large_verdicts += s->large_verdicts;
	}
}

static void log_ctl_counter(const char *name, uint64_t value, void *arg)
{
	(void)arg;
	log_info("counter control_%s=%llu", name, (unsigned long long)value);
}

static void log_counters(struct knockgw *kg)
{
	struct totals t;

	sum_counters(kg, &t);
	log_info("counters: queued=%llu verdicts=%llu enobufs=%llu nl_errors=%llu bad_msgs=%llu "
		 "send_errors=%llu large_verdicts=%llu",
		 (unsigned long long)t.q.received, (unsigned long long)t.q.verdicts,
		 (unsigned long long)t.q.enobufs, (unsigned long long)t.q.nl_errors,
		 (unsigned long long)t.q.bad_msgs, (unsigned long long)t.q.send_errors,
		 (unsigned long long)t.q.large_verdicts);
	for (int k = 0; k < SC_MAX; k++)
		log_info("counter %s=%llu", server_counter_name((enum server_counter)k),
			 (unsigned long long)t.srv.c[k]);
	for (int k = 1; k < PKT_DROP_MAX; k++)
		log_info("counter drop_%s=%llu", pkt_drop_name((enum pkt_drop)k),
			 (unsigned long long)t.srv.pkt_drop[k]);
	for (int k = 0; k < CC_MAX; k++)
		log_info("counter client_%s=%llu", client_counter_name((enum client_counter)k),
			 (unsigned long long)t.cli[k]);
	if (kg->ctl_open)
		ctl_counters_foreach(&kg->ctl, log_ctl_counter, NULL);
}

/* The one-line summary systemd shows (STATUS=). */
static void status_line(struct knockgw *kg, char *buf, size_t len)
{
	struct totals t;

	sum_counters(kg, &t);
	snprintf(buf, len,
		 "knocks accepted %llu, refused %llu, replays %llu, integrity failures %llu, "
		 "translated flows %llu",
		 (unsigned long long)t.srv.c[SC_syn_accepted],
		 (unsigned long long)t.srv.c[SC_syn_refused],
		 (unsigned long long)t.srv.c[SC_replay_refused],
		 (unsigned long long)(t.srv.c[SC_integ_fail] + t.srv.c[SC_integ_conflict]),
		 (unsigned long long)t.cli[CC_knocked]);
}

static void print_ctl_counter(const char *name, uint64_t value, void *arg)
{
	fprintf(arg, "control %s %llu\n", name, (unsigned long long)value);
}

/* `knockgw status`: everything an administrator asks of a running daemon. */
static void status_report(FILE *out, void *arg)
{
	struct knockgw *kg = arg;
	const struct conf *c = kg->conf;
	struct totals t;
	char line[512];

	sum_counters(kg, &t);
	status_line(kg, line, sizeof(line));
	fprintf(out, "knockgw running for %llu s, %u reload(s), %u refused, %u table restore(s); "
		     "%s\n",
		(unsigned long long)((now_ms(CLOCK_MONOTONIC) - kg->started_ms) / 1000),
		kg->reloads, kg->reloads_refused, kg->table_restores, line);
	fprintf(out, "config %s: %zu key(s), %zu protected port(s), %zu knock destination(s), "
		     "table inet %s (%s queue), queues %u..%u, translate %s\n",
		c->path, c->nkeys, c->nprotect, c->nknock, c->table,
		kg->queue_kind == NFT_QUEUE_NATIVE ? "native" : "xtables compat", c->queue_num,
		c->queue_num + kg->nworkers - 1,
		c->translate == TRANSLATE_USER ? "user" : "kernel");
	for (size_t i = 0; i < c->nprotect; i++) {
		const struct conf_protect *e = &c->protect[i];

		fprintf(out, "port %u mode %s%s: accepted %llu refused %llu\n", e->port,
			kg_mode_name(e->mode), e->integrity_len ? " integrity" : "",
			(unsigned long long)t.srv.port_accepted[i],
			(unsigned long long)t.srv.port_refused[i]);
	}
	fprintf(out, "replay table %zu entries; intents %zu\n", replay_count(&kg->replay),
		intent_count(kg->intents));
	fprintf(out, "queue received %llu verdicts %llu enobufs %llu errors %llu\n",
		(unsigned long long)t.q.received, (unsigned long long)t.q.verdicts,
		(unsigned long long)t.q.enobufs,
		(unsigned long long)(t.q.nl_errors + t.q.bad_msgs + t.q.send_errors));
	for (int k = 0; k < SC_MAX; k++)
		fprintf(out, "server %s %llu\n", server_counter_name((enum server_counter)k),
			(unsigned long long)t.srv.c[k]);
	for (int k = 1; k < PKT_DROP_MAX; k++)
		fprintf(out, "drop %s %llu\n", pkt_drop_name((enum pkt_drop)k),
			(unsigned long long)t.srv.pkt_drop[k]);
	for (int k = 0; k < CC_MAX; k++)
		fprintf(out, "client %s %llu\n", client_counter_name((enum client_counter)k),
			(unsigned long long)t.cli[k]);
	ctl_counters_foreach(&kg->ctl, print_ctl_counter, out);
}

/* -------------------------------------------------------------- setup */

static void on_signal(int sig)
{
	switch (sig) {
	case SIGUSR1:
		dump_requested = 1;
		break;
	case SIGHUP:
		reload_requested = 1;
		break;
	default:
		stop_requested = 1;
		break;
	}
}

static void setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
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

/*
 * After setup the daemon needs CAP_NET_ADMIN only (queue verdicts, nft
 * reloads, conntrack entries, SOCK_DESTROY); the raw sockets are open, so
 * CAP_NET_RAW goes too.  Capabilities are per thread: this runs before the
 * workers start, and they inherit the reduced set.
 *
 * What holds the line is no_new_privs together with permitted, effective,
 * inheritable and ambient reduced to CAP_NET_ADMIN: no execve can then
 * give back more than the permitted set (not even to uid 0), and nothing
 * else raises a capability.  The bounding set only limits what an execve
 * may grant, so shrinking it is a second lock on the same door; it takes
 * CAP_SETPCAP, which a service manager that already bounded the set (our
 * own unit: CAP_NET_ADMIN CAP_NET_RAW) does not leave us.  Then the
 * capabilities still in it stay there, *ret_kept says how many, and the
 * daemon runs: refusing to start under its own unit protects nothing.
 */
static int drop_capabilities(int *ret_kept)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	bool setpcap;
	int kept = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	setpcap = data[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP);
	/* Up to the running kernel's last capability, which may be newer than ours. */
	for (int cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (r < 0 && errno == EINVAL)
			break;
		if (r < 0)
			return -errno;
		if (r == 0 || cap == CAP_NET_ADMIN)
			continue;
		if (!setpcap) {
			kept++;
			continue;
		}
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return -errno;
	}
	memset(data, 0, sizeof(data));
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective = CAP_TO_MASK(CAP_NET_ADMIN);
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].permitted = CAP_TO_MASK(CAP_NET_ADMIN);
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	/* capset() already emptied the ambient set (it cannot exceed inheritable). */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	*ret_kept = kept;
	return 0;
}

static int open_workers(struct knockgw *kg)
{
	const struct conf *c = kg->conf;
	unsigned flags = 0;

	/* The user path takes segmentation offloads whole (GSO) and fixes sums. */
	if (c->translate == TRANSLATE_USER && c->nknock > 0)
		flags |= NFQUEUE_F_GSO;
	if (replay_init(&kg->replay, c->max_replay) < 0) {
		log_warnx("cannot allocate the replay table");
		return -ENOMEM;
	}
	kg->intents = intent_new(c->max_flows);
	if (!kg->intents) {
		log_warnx("cannot allocate the intent table");
		return -ENOMEM;
	}
	kg->nworkers = c->queue_count > MAX_QUEUES ? MAX_QUEUES : c->queue_count;
	for (unsigned i = 0; i < kg->nworkers; i++) {
		struct worker *w = &kg->workers[i];

		w->kg = kg;
		w->index = i;
		w->q = nfqueue_open((uint16_t)(c->queue_num + i), copy_range(c), c->queue_maxlen,
				    flags, QUEUE_BATCH);
		if (!w->q)
			return -errno;
		w->sk = sockkill_open();
		if (!w->sk)
			log_warn("queue %u: no sock_diag socket; integrity failures will not "
				 "abort the service's socket", c->queue_num + i);
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
		if (server_init(&w->srv, c, &kg->replay, w->sk, w->rs, w->ct, kg->nworkers) < 0) {
			log_warnx("cannot allocate the pending-flow table");
			return -ENOMEM;
		}
		if (client_init(&w->cli, c, w->ct, w->rs, kg->intents) < 0) {
			log_warnx("cannot allocate the client SYN table");
			return -ENOMEM;
		}
		w->gen = kg->conf_gen;
	}
	return 0;
}

static int start_workers(struct knockgw *kg)
{
	for (unsigned i = 0; i < kg->nworkers; i++) {
		int r = pthread_create(&kg->workers[i].thread, NULL, worker_main, &kg->workers[i]);

		if (r != 0) {
			/* Threads already started see the stop flag and end. */
			errno = r;
			log_warn("cannot start queue thread");
			return -r;
		}
		kg->workers[i].started = true;
	}
	return 0;
}

static void join_workers(struct knockgw *kg)
{
	stop_requested = 1;
	for (unsigned i = 0; i < kg->nworkers; i++) {
		if (kg->workers[i].started)
			pthread_join(kg->workers[i].thread, NULL);
		kg->workers[i].started = false;
	}
}

static void free_workers(struct knockgw *kg)
{
	for (unsigned i = 0; i < MAX_QUEUES; i++) {
		struct worker *w = &kg->workers[i];

		if (w->q)
			nfqueue_close(w->q);
		sockkill_close(w->sk);
		rawsock_close(w->rs);
		ctnl_close(w->ct);
		server_free(&w->srv);
		client_free(&w->cli);
	}
}

/* -------------------------------------------------------------- reload */

/* Settings the running threads and tables were built for. */
static const char *needs_restart(const struct conf *a, const struct conf *b)
{
	if (a->queue_num != b->queue_num || a->queue_count != b->queue_count ||
	    a->queue_maxlen != b->queue_maxlen || a->fail_open != b->fail_open)
		return "queue";
	if (a->translate != b->translate || (a->nknock > 0) != (b->nknock > 0))
		return "translate";
	if (strcmp(a->control_socket, b->control_socket) != 0)
		return "control_socket";
	if (a->max_flows != b->max_flows || a->max_replay != b->max_replay)
		return "limits";
	if (a->rules_manage != b->rules_manage)
		return "rules.manage";
	/* Flows in flight carry the old bits in their marks and conntrack entries. */
	if (a->mark_mask != b->mark_mask || a->ct_mark_bit != b->ct_mark_bit)
		return "rules.mark_mask/ct_mark_bit";
	return NULL;
}

/*
 * Has every worker taken generation gen, or a later one?  A worker stores
 * its gen only after it has switched to the configuration it read after
 * loading that gen, and configurations are published before their gen: a
 * worker at gen or later holds no configuration replaced before gen.
 */
static bool all_reached(struct knockgw *kg, unsigned gen)
{
	for (unsigned i = 0; i < kg->nworkers; i++)
		if ((int)(__atomic_load_n(&kg->workers[i].gen, __ATOMIC_ACQUIRE) - gen) < 0)
			return false;
	return true;
}

/*
 * Publishes c to the workers and waits until every one has taken it;
 * *ret_gen is c's generation either way.
 */
static bool switch_conf(struct knockgw *kg, struct conf *c, unsigned *ret_gen)
{
	uint64_t deadline = now_ms(CLOCK_MONOTONIC) + SWITCH_WAIT_MS;
	unsigned gen;

	__atomic_store_n(&kg->conf, c, __ATOMIC_RELEASE);
	gen = __atomic_add_fetch(&kg->conf_gen, 1, __ATOMIC_RELEASE);
	*ret_gen = gen;
	for (;;) {
		if (all_reached(kg, gen))
			return true;
		if (now_ms(CLOCK_MONOTONIC) > deadline)
			return false;
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* Frees the retired configurations no worker can hold any more (all: at exit). */
static void collect_retired(struct knockgw *kg, bool all)
{
	struct retired_conf **pp = &kg->retired;

	while (*pp) {
		struct retired_conf *r = *pp;

		if (!all && !all_reached(kg, r->gen)) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		free_conf(r->conf);
		free(r);
		if (!all)
			log_info("reload: every queue thread has left the refused configuration; "
				 "freed");
	}
}

/*
 * Back to old after c was published.  A worker may have taken c (all of
 * them did when the table could not be installed) and not yet moved back:
 * then c must outlive the switch, or that worker reads freed memory at its
 * next packet.  c is freed once every worker has taken old's generation,
 * now or in a later round of the main loop (collect_retired()); if even
 * the list node cannot be had, c is never freed: a leak, not a
 * use-after-free.
 */
static void restore_conf(struct knockgw *kg, struct conf *old, struct conf *c)
{
	struct retired_conf *r;
	unsigned gen;

	if (switch_conf(kg, old, &gen)) {
		free_conf(c);
		return;
	}
	log_warnx("reload: a queue thread has not moved back to the previous configuration "
		  "yet; the refused one is kept until it has");
	r = calloc(1, sizeof(*r));
	if (!r) {
		log_warnx("reload: out of memory; the refused configuration is never freed");
		return;
	}
	r->conf = c;
	r->gen = gen;
	r->next = kg->retired;
	kg->retired = r;
}

/*
 * SIGHUP: all or nothing.  The new file and its key files are read and
 * validated first; then the workers switch to it; then the table is
 * replaced in one transaction.  Any failure keeps (or restores) the old
 * configuration and says why.  Established connections are never touched:
 * server-side they are not queued, and translated client flows live in
 * their conntrack entries.
 */
static void reload(struct knockgw *kg, const char *path)
{
	char msg[128], err[512];
	struct conf *old = kg->conf, *c;
	const char *what;
	unsigned gen;

	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)now_ms(CLOCK_MONOTONIC) * 1000);
	sd_notify(0, msg);
	log_info("reloading %s", path);
	c = load_conf(path, true);
	if (!c) {
		log_warnx("reload refused: %s has errors; still running the previous configuration",
			  path);
		goto out;
	}
	what = needs_restart(old, c);
	if (what) {
		log_warnx("reload refused: the %s settings changed, which needs a restart; still "
			  "running the previous configuration", what);
		free_conf(c);
		goto out;
	}
	if (!switch_conf(kg, c, &gen)) {
		log_warnx("reload: a queue thread did not take the new configuration; restoring "
			  "the previous one");
		restore_conf(kg, old, c);
		goto out;
	}
	if (c->rules_manage && nftrules_install(c, kg->queue_kind, err, sizeof(err)) < 0) {
		log_warnx("reload: cannot install table inet %s: %s; restoring the previous "
			  "configuration", c->table, err);
		restore_conf(kg, old, c);
		goto out;
	}
	if (c->rules_manage && strcmp(old->table, c->table) != 0 && nftrules_remove(old->table) < 0)
		log_warnx("reload: cannot delete the old table inet %s", old->table);
	if (!kg->verbose)
		log_setlevel(c->log_level);
	free_conf(old);		/* every thread has taken c (all_reached): wiped now */
	kg->reloads++;
	log_info("reloaded: %zu protected port(s), %zu knock destination(s)", c->nprotect,
		 c->nknock);
	sd_notify(0, "READY=1");
	return;
out:
	kg->reloads_refused++;	/* every path to here kept the previous configuration */
	sd_notify(0, "READY=1");
}

/* ------------------------------------------------------------ running */

static bool is_knock_dst(int family, const uint8_t *dst, uint16_t port, const void *arg)
{
	return conf_find_knock(arg, family, dst, port) != NULL;
}

/*
 * On stop the table goes, except when translated client flows are still
 * open: conntrack, and with it their sequence adjustment, runs in a
 * namespace only while some rule uses it.  Then a keeper table stays (no
 * knocking, no refusing), which the next start replaces.
 */
static void remove_table(struct knockgw *kg)
{
	const struct conf *c = kg->conf;
	char err[512];
	long open = 0;

	if (c->nknock > 0 && kg->workers[0].ct)
		open = ctnl_count_translated(kg->workers[0].ct, is_knock_dst, c);
	if (open > 0) {
		if (nftrules_install_keeper(c, kg->queue_kind, err, sizeof(err)) == 0) {
			log_notice("%ld translated connection(s) still open: table inet %s keeps "
				   "only what they need (conntrack%s); the next start replaces it, "
				   "`nft delete table inet %s` removes it", open, c->table,
				   c->translate == TRANSLATE_USER ? ", queueing their packets" : "",
				   c->table);
			return;
		}
		log_warnx("cannot leave the keeper table: %s; deleting the table", err);
	}
	if (nftrules_remove(c->table) < 0)
		log_warnx("cannot delete table inet %s", c->table);
}

/*
 * Someone deleted our table (nft flush ruleset, a careless script): the
 * protected ports would be open and the client would stop knocking.  Put
 * it back, and say so; if that fails, stop serving rather than pretend.
 */
static void check_table(struct knockgw *kg)
{
	char err[512];
	int r = nftrules_present(kg->conf->table);

	if (r < 0) {	/* could not tell: ask again at the next check */
		log_peer(&kg->rl_table, now_ms(CLOCK_MONOTONIC) / 1000, LOG_WARNING,
			 "cannot check table inet %s: %s", kg->conf->table, strerror(-r));
		return;
	}
	if (r > 0)
		return;
	log_warnx("table inet %s disappeared; installing it again", kg->conf->table);
	kg->table_restores++;
	/*
	 * Stopping would not hide the ports again (there is no table either
	 * way) and would exit 0, which Restart=on-failure leaves down: keep
	 * the queues bound and try again at the next check.
	 */
	if (nftrules_install(kg->conf, kg->queue_kind, err, sizeof(err)) < 0)
		log_warnx("cannot restore table inet %s: %s; trying again in %d s",
			  kg->conf->table, err, TABLE_CHECK_MS / 1000);
}

/* Pings the watchdog only while every queue thread is making rounds. */
static void watchdog(struct knockgw *kg, uint64_t interval_ms)
{
	uint64_t now = now_ms(CLOCK_MONOTONIC);

	for (unsigned i = 0; i < kg->nworkers; i++)
		if (now - __atomic_load_n(&kg->workers[i].heartbeat, __ATOMIC_RELAXED) > interval_ms)
			return;
	sd_notify(0, "WATCHDOG=1");
}

static int run(struct knockgw *kg, const char *path)
{
	char err[512], status[400];
	uint64_t wd_usec = 0, last_status = 0, last_wd = 0, last_table = 0;
	int ret = 1, kept = 0, r;

	setup_signals();
	kg->started_ms = now_ms(CLOCK_MONOTONIC);
	kg->rl_table = (struct log_ratelimit){ .interval = 60, .burst = 1 };
	if (nftrules_probe(&kg->queue_kind) < 0) {
		log_warnx("this kernel has neither the nft queue expression nor the xtables "
			  "NFQUEUE target; cannot run");
		return 1;
	}
	log_info("using the %s queue",
		 kg->queue_kind == NFT_QUEUE_NATIVE ? "native nft" : "xtables NFQUEUE (nft compat)");
	if (open_workers(kg) < 0)
		goto out;
	if (ctl_open(&kg->ctl, kg->conf->control_socket) < 0) {
		log_warn("cannot open the control socket %s", kg->conf->control_socket);
		goto out;
	}
	kg->ctl_open = true;
	r = drop_capabilities(&kept);
	if (r < 0) {
		errno = -r;
		log_warn("cannot drop capabilities");
		goto out;
	}
	if (kept > 0)
		log_info("capabilities: CAP_NET_ADMIN only; %d other(s) stay in the bounding set "
			 "(no CAP_SETPCAP to remove them), out of reach under no_new_privs", kept);
	else
		log_info("capabilities: CAP_NET_ADMIN only, the bounding set too");
	if (start_workers(kg) < 0)
		goto out;
	if (kg->conf->rules_manage) {
		if (nftrules_install(kg->conf, kg->queue_kind, err, sizeof(err)) < 0) {
			log_warnx("cannot install table inet %s: %s", kg->conf->table, err);
			goto out;
		}
		kg->table_installed = true;
	}
	log_info("ready: %zu protected port(s), %zu knock destination(s), %u queue(s) from %u",
		 kg->conf->nprotect, kg->conf->nknock, kg->nworkers, kg->conf->queue_num);
	sd_notify(0, "READY=1");
	if (sd_watchdog_enabled(0, &wd_usec) <= 0)
		wd_usec = 0;

	while (!stop_requested) {
		struct pollfd pfd = { .fd = ctl_fd(&kg->ctl), .events = POLLIN };
		uint64_t now;

		/*
		 * poll() wakes for the control socket; signals interrupt it.
		 * ctl_handle() runs every round: it also drops silent clients.
		 */
		poll(&pfd, 1, 100);
		ctl_handle(&kg->ctl, kg->conf, kg->intents, now_ms(CLOCK_MONOTONIC) / 1000,
			   status_report, kg);
		if (dump_requested) {
			dump_requested = 0;
			log_counters(kg);
		}
		if (reload_requested) {
			reload_requested = 0;
			reload(kg, path);
		}
		if (kg->retired)
			collect_retired(kg, false);
		now = now_ms(CLOCK_MONOTONIC);
		if (now - last_status >= STATUS_EVERY_MS) {
			last_status = now;
			snprintf(status, sizeof(status), "STATUS=");
			status_line(kg, status + 7, sizeof(status) - 7);
			sd_notify(0, status);
		}
		if (kg->table_installed && now - last_table >= TABLE_CHECK_MS) {
			last_table = now;
			check_table(kg);
		}
		if (wd_usec && now - last_wd >= wd_usec / 2000) {
			last_wd = now;
			watchdog(kg, wd_usec / 2000);
		}
	}
	ret = 0;
	for (unsigned i = 0; i < kg->nworkers; i++)
		if (kg->workers[i].error)
			ret = 1;
out:
	sd_notify(0, "STOPPING=1");
	stop_requested = 1;
	if (kg->table_installed && ret == 0) {
		remove_table(kg);
	} else if (kg->table_installed) {
		/*
		 * An error stop (a queue that failed): deleting the table would
		 * open every protected port until the next start, and with
		 * Restart=on-failure that may never come.  It stays: with
		 * nobody reading the queue, what it queues is dropped.
		 */
		log_warnx("stopping on an error: table inet %s stays, so protected ports stay "
			  "closed until the next start (`nft delete table inet %s` removes it)",
			  kg->conf->table, kg->conf->table);
	}
	join_workers(kg);
	collect_retired(kg, true);	/* no worker runs any more */
	log_counters(kg);
	free_workers(kg);
	if (kg->ctl_open)
		ctl_close(&kg->ctl);
	replay_free(&kg->replay);
	intent_free(kg->intents);
	log_info("stopped");
	return ret;
}

/* ------------------------------------------------------------- status */

/* `knockgw status`: asks the running daemon over its control socket. */
static int cmd_status(const char *path)
{
	struct conf *c = load_conf(path, false);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	bool end = false;
	int fd;

	if (!c)
		return 1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->control_socket);
	free_conf(c);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "knockgw: knockgw is not running (no control socket at %s)\n",
			sa.sun_path);
		if (fd >= 0)
			close(fd);
		return 3;
	}
	if (write(fd, "STATUS\n", 7) != 7) {
		fprintf(stderr, "knockgw: cannot talk to the daemon: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	FILE *in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return 1;
	}
	while (fgets(buf, sizeof(buf), in)) {
		if (strcmp(buf, "END\n") == 0) {
			end = true;
			break;
		}
		if (strncmp(buf, "ERR ", 4) == 0) {
			fprintf(stderr, "knockgw: the daemon refused: %s", buf + 4);
			fclose(in);
			return 1;
		}
		fputs(strncmp(buf, "OK", 2) == 0 && buf[2] == '\n' ? "" : buf, stdout);
	}
	fclose(in);
	return end ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *conf_path = DEFAULT_CONF;
	bool foreground = false, check_only = false, print_rules = false, status = false;
	int verbose = 0;
	int ch;

	harden_process();
	if (sodium_init() < 0) {
		fprintf(stderr, "knockgw: libsodium failed to initialise\n");
		return 1;
	}
	if (argc >= 2 && strcmp(argv[1], "genkey") == 0) {
		if (argc != 2) {
			usage(stderr);
			return 2;
		}
		return cmd_genkey();
	}
	if (argc >= 2 && strcmp(argv[1], "print-rules") == 0) {
		print_rules = true;
		argc--;
		argv++;
	} else if (argc >= 2 && strcmp(argv[1], "status") == 0) {
		status = true;
		argc--;
		argv++;
	}

	while ((ch = getopt(argc, argv, "c:fnvh")) != -1) {
		switch (ch) {
		case 'c':
			conf_path = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'n':
			check_only = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (status)
		return cmd_status(conf_path);

	struct conf *conf = load_conf(conf_path, false);
	if (!conf)
		return 1;
	if (check_only) {
		printf("configuration OK\n");
		free_conf(conf);
		return 0;
	}
	if (print_rules) {
		enum nft_queue_kind kind = NFT_QUEUE_COMPAT;

		/* Without privileges the probe fails: show the portable form. */
		if (nftrules_probe(&kind) < 0)
			kind = NFT_QUEUE_COMPAT;
		nftrules_print(conf, kind, stdout);
		free_conf(conf);
		return 0;
	}

	log_init(foreground, verbose ? LOG_DEBUG : conf->log_level, "knockgw");
	struct knockgw *kg = calloc(1, sizeof(*kg));
	if (!kg) {
		free_conf(conf);
		return 1;
	}
	kg->conf = conf;
	kg->verbose = verbose > 0;
	int ret = run(kg, conf_path);
	free_conf(kg->conf);
	free(kg);
	return ret;
}
