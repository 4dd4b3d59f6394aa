/*
 * knockgw - silent port knocking in user space (SPEC.md).
 *
 *   knockgw [-c FILE] [-f] [-n] [-v]   run, or with -n check the config
 *   knockgw genkey                     print a new base64 32-byte key
 *   knockgw print-rules [-c FILE]      print the nft ruleset it would install
 *
 * Running: bind one NFQUEUE per queue (queue.num .. num+count-1), each read
 * by its own thread with its own state; then install the nft table (so no
 * packet is ever queued to nobody by our doing); then tell systemd READY=1.
 * SIGTERM/SIGINT stop it: the table is deleted, the queues unbound, the keys
 * wiped.  The process does not fork: systemd (Type=notify) or the shell
 * keeps it; without -f it logs to syslog.
 */
#include <errno.h>
#include <linux/netfilter.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>
#include <systemd/sd-daemon.h>

#include "client.h"
#include "conf.h"
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
};

/* The only globals: flags set by signal handlers (STYLE rule 6). */
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t dump_requested;

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
};

struct knockgw {
	struct conf *conf;
	enum nft_queue_kind queue_kind;
	struct replay replay;
	struct intent_table *intents;
	unsigned nworkers;
	struct worker workers[MAX_QUEUES];
	bool table_installed;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: knockgw [-c FILE] [-f] [-n] [-v]\n"
		   "       knockgw genkey\n"
		   "       knockgw print-rules [-c FILE]\n");
}

/* Secrets must not leak through a core dump or a ptrace by another user. */
static void harden_process(void)
{
	struct rlimit rl = { 0, 0 };

	setrlimit(RLIMIT_CORE, &rl);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static uint64_t clock_seconds(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec;
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

/* Loads and validates; prints every error as FILE:LINE: message. */
static struct conf *load_conf(const char *path)
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
		for (size_t i = 0; i < errs->n; i++)
			fprintf(stderr, "%s\n", errs->msg[i]);
		if (errs->overflow)
			fprintf(stderr, "%s: too many errors, stopped\n", path);
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
 * rules queue at input, the client's at output (SYNs, and the user path's
 * outgoing packets) and prerouting (the user path's incoming packets).
 */
static void on_packet(struct nfqueue *q, const struct nfqueue_packet *p, void *arg)
{
	struct worker *w = arg;

	if (p->hook == NF_INET_LOCAL_IN)
		server_packet(&w->srv, q, p);
	else
		client_packet(&w->cli, q, p);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t last_tick = 0, last_gc = 0;

	while (!stop_requested) {
		w->srv.mono = w->cli.mono = clock_seconds(CLOCK_MONOTONIC);
		w->srv.wall = w->cli.wall = clock_seconds(CLOCK_REALTIME);
		int n = nfqueue_recv(w->q, on_packet, w);
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
			/* The shared replay table is collected by one thread only. */
			if (w->index == 0 && w->srv.mono >= last_gc + 5) {
				last_gc = w->srv.mono;
				replay_gc(&w->kg->replay, w->srv.mono);
			}
		}
	}
	return NULL;
}

static void log_counters(struct knockgw *kg)
{
	struct server_counters sum = { 0 };
	struct nfqueue_stats qs = { 0 };

	for (unsigned i = 0; i < kg->nworkers && kg->workers[i].q; i++) {
		const struct server_counters *c = &kg->workers[i].srv.cnt;
		const struct nfqueue_stats *s = nfqueue_get_stats(kg->workers[i].q);

		for (int k = 0; k < SC_MAX; k++)
			sum.c[k] += c->c[k];
		for (int k = 0; k < PKT_DROP_MAX; k++)
			sum.pkt_drop[k] += c->pkt_drop[k];
		qs.received += s->received;
		qs.verdicts += s->verdicts;
		qs.enobufs += s->enobufs;
		qs.nl_errors += s->nl_errors;
		qs.bad_msgs += s->bad_msgs;
		qs.send_errors += s->send_errors;
	}
	log_info("counters: queued=%llu verdicts=%llu enobufs=%llu nl_errors=%llu bad_msgs=%llu "
		 "send_errors=%llu",
		 (unsigned long long)qs.received, (unsigned long long)qs.verdicts,
		 (unsigned long long)qs.enobufs, (unsigned long long)qs.nl_errors,
		 (unsigned long long)qs.bad_msgs, (unsigned long long)qs.send_errors);
	for (int k = 0; k < SC_MAX; k++)
		log_info("counter %s=%llu", server_counter_name((enum server_counter)k),
			 (unsigned long long)sum.c[k]);
	for (int k = 1; k < PKT_DROP_MAX; k++)
		log_info("counter drop_%s=%llu", pkt_drop_name((enum pkt_drop)k),
			 (unsigned long long)sum.pkt_drop[k]);
	for (int k = 0; k < CC_MAX; k++) {
		uint64_t v = 0;

		for (unsigned i = 0; i < kg->nworkers; i++)
			v += kg->workers[i].cli.cnt[k];
		log_info("counter client_%s=%llu", client_counter_name((enum client_counter)k),
			 (unsigned long long)v);
	}
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_requested = 1;
	else
		stop_requested = 1;
}

static void setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Only what decisions need, unless the user path rewrites whole packets. */
static uint32_t copy_range(const struct conf *c)
{
	uint32_t n = 0;

	if (c->translate == TRANSLATE_USER && c->nknock > 0)
		return 0xffff;
	for (size_t i = 0; i < c->nprotect; i++)
		if (c->protect[i].integrity_len > n)
			n = c->protect[i].integrity_len;
	return COPY_HEADERS + n;
}

static int start_workers(struct knockgw *kg)
{
	const struct conf *c = kg->conf;
	unsigned flags = c->fail_open ? NFQUEUE_F_FAIL_OPEN : 0;

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
		if (server_init(&w->srv, c, &kg->replay, w->sk, w->rs, kg->nworkers) < 0) {
			log_warnx("cannot allocate the pending-flow table");
			return -ENOMEM;
		}
		if (c->nknock > 0) {
			w->ct = ctnl_open();
			if (!w->ct) {
				log_warn("cannot open a ctnetlink socket for the client role");
				return -errno;
			}
		}
		if (client_init(&w->cli, c, w->ct, w->rs, kg->intents) < 0) {
			log_warnx("cannot allocate the client SYN table");
			return -ENOMEM;
		}
	}
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

static int run(struct knockgw *kg)
{
	char err[512];
	int ret = 1;

	setup_signals();
	if (nftrules_probe(&kg->queue_kind) < 0) {
		log_warnx("this kernel has neither the nft queue expression nor the xtables "
			  "NFQUEUE target; cannot run");
		return 1;
	}
	log_info("using the %s queue",
		 kg->queue_kind == NFT_QUEUE_NATIVE ? "native nft" : "xtables NFQUEUE (nft compat)");
	if (start_workers(kg) < 0)
		goto out;
	if (kg->conf->rules_manage) {
		if (nftrules_install(kg->conf, kg->queue_kind, err, sizeof(err)) < 0) {
			log_warnx("cannot install table inet %s: %s", kg->conf->table, err);
			stop_requested = 1;
			goto out;
		}
		kg->table_installed = true;
	}
	log_info("ready: %zu protected port(s), %zu knock destination(s), %u queue(s) from %u",
		 kg->conf->nprotect, kg->conf->nknock, kg->nworkers, kg->conf->queue_num);
	sd_notify(0, "READY=1");

	while (!stop_requested) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		if (dump_requested) {
			dump_requested = 0;
			log_counters(kg);
		}
	}
	ret = 0;
	for (unsigned i = 0; i < kg->nworkers; i++)
		if (kg->workers[i].error)
			ret = 1;
out:
	sd_notify(0, "STOPPING=1");
	stop_requested = 1;
	if (kg->table_installed && nftrules_remove(kg->conf->table) < 0)
		log_warnx("cannot delete table inet %s", kg->conf->table);
	join_workers(kg);
	log_counters(kg);
	free_workers(kg);
	replay_free(&kg->replay);
	intent_free(kg->intents);
	log_info("stopped");
	return ret;
}

int main(int argc, char **argv)
{
	const char *conf_path = DEFAULT_CONF;
	bool foreground = false, check_only = false, print_rules = false;
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

	struct conf *conf = load_conf(conf_path);
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
	int ret = run(kg);
	free(kg);
	free_conf(conf);
	return ret;
}
