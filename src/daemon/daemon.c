/*
 * daemon.c - start, the event loop, stop (see daemon.h for the contract).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "daemon/daemon.h"
#include "daemon/reload.h"
#include "daemon/stats.h"
#include "kernel/caps.h"
#include "kernel/ctnl.h"
#include "kernel/qguard.h"
#include "kernel/tablelife.h"

enum {
	STATUS_EVERY_MS = 2000,		/* STATUS= refresh for systemd */
	TABLE_CHECK_MS = 2000,		/* how often the table's presence is checked */
	SHARED_GC_MS = 5000,		/* expired replay and intent entries are collected */
	EVENTS_MAX = 8,
};

/* What woke the main loop: the epoll data of each descriptor. */
enum event {
	EV_SIGNAL,
	EV_CTL,
	EV_NOTIFY,
	EV_STATUS,
	EV_TABLE,
	EV_WATCHDOG,
	EV_RELOAD,
	EV_CTL_TIMER,
	EV_GC,
};

/* Monotonic or real-time clock, in ms. */
static uint64_t now_ms(int clock_id)
{
	struct timespec ts;

	clock_gettime((clockid_t)clock_id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Arms timer fd to fire in ms from now (0 disarms), then every interval_ms (0: once). */
static void arm_timer(int fd, uint64_t ms, uint64_t interval_ms)
{
	struct itimerspec its = {
		.it_value = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 },
		.it_interval = { (time_t)(interval_ms / 1000), (long)(interval_ms % 1000) * 1000000 },
	};

	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL) < 0)
		log_warn("cannot arm a timer");
}

/* ------------------------------------------------------------ counters */

static void snapshot(struct knockgw *kg, struct stats *s)
{
	const struct conf *c = kg->conf;

	memset(s, 0, sizeof(*s));
	stats_set_conf(s, c);
	snprintf(s->queue_kind, sizeof(s->queue_kind), "%s",
		 kg->queue_kind == NFT_QUEUE_NATIVE ? "native" : "xtables compat");
	s->queue_first = c->queue_num;
	s->queue_last = c->queue_num + kg->workers.n - 1;
	if (kg->workers_open)
		workers_stats(&kg->workers, s);
	if (kg->ctl_open)
		ctl_counters_foreach(&kg->ctl, stats_add_ctl, s);
	s->uptime_s = (now_ms(CLOCK_MONOTONIC) - kg->started_ms) / 1000;
	s->reloads = kg->reload.reloads;
	s->reloads_refused = kg->reload.reloads_refused;
	s->table_restores = kg->table_restores;
	s->generation = __atomic_load_n(&kg->workers.gen, __ATOMIC_ACQUIRE);
	s->replay_entries = replay_count(&kg->replay);
	s->intents = kg->intents ? intent_count(kg->intents) : 0;
}

static void log_line(const char *line, void *arg)
{
	(void)arg;
	log_info("%s", line);
}

static void log_counters(struct knockgw *kg)
{
	struct stats *s = malloc(sizeof(*s));

	if (!s) {
		log_warnx("out of memory: no counters");
		return;
	}
	snapshot(kg, s);
	stats_log(s, log_line, NULL);
	free(s);
}

/*
 * `knockgw status`: the STATUS reply, in ctl_handle(); `knockgw metrics`'s
 * METRICS reply is that and the per-key lines, which `status` does not show.
 */
static void status_report(FILE *out, enum ctl_cmd cmd, void *arg)
{
	struct stats *s = malloc(sizeof(*s));

	if (!s)
		return;
	snapshot(arg, s);
	stats_status(s, out);
	if (cmd == CTL_CMD_METRICS)
		stats_keys(s, out);
	free(s);
}

/*
 * sd_notify: the one-line summary systemd shows (STATUS=), after state
 * ("READY=1") in the same message when state is not NULL: systemd takes
 * both at once, so a service that just became ready or reloaded never shows
 * no status or an old one.  Without memory for the snapshot, state still
 * goes out.
 */
static void notify(struct knockgw *kg, const char *state)
{
	struct stats *s = malloc(sizeof(*s));
	char line[480];
	int off = snprintf(line, sizeof(line), "%s%s", state ? state : "", state ? "\n" : "");

	if (!s) {
		if (state)
			sd_notify(0, state);
		return;
	}
	snapshot(kg, s);
	off += snprintf(line + off, sizeof(line) - (size_t)off, "STATUS=");
	stats_summary(s, line + off, sizeof(line) - (size_t)off);
	sd_notify(0, line);
	free(s);
}

/* --------------------------------------------------------------- table */

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

/* ------------------------------------------------------------- control */

/*
 * ctl_handle() runs when the control socket is readable and when the next
 * deadline ctl keeps (a silent client to drop, the end of an accept pause)
 * has come: a one-shot timer is armed for it after every call.
 */
static void ctl_event(struct knockgw *kg)
{
	uint64_t now, due;

	ctl_handle(&kg->ctl, kg->conf, kg->intents, now_ms(CLOCK_MONOTONIC) / 1000,
		   status_report, kg);
	due = ctl_next_deadline_ms(&kg->ctl);
	now = now_ms(CLOCK_MONOTONIC);
	/* 0 disarms a timerfd: a deadline already passed is 1 ms away. */
	arm_timer(kg->ctl_timer, due == UINT64_MAX ? 0 : due > now ? due - now : 1, 0);
}

/* -------------------------------------------------------------- reload */

/* The daemon's part of a reload (reload.h): its clock, its timer, STATUS=. */
static uint64_t reload_now_ms(void *arg)
{
	(void)arg;
	return now_ms(CLOCK_MONOTONIC);
}

static void reload_arm_timer(void *arg, uint64_t ms)
{
	struct knockgw *kg = arg;

	arm_timer(kg->reload_timer, ms, 0);
}

static void reload_notify(void *arg, const char *state)
{
	notify(arg, state);
}

/* Once start() knows the queue kind: SIGHUPs come only after this. */
static void init_reload(struct knockgw *kg)
{
	reload_init(&kg->reload, &(struct reload_ctx){
		.conf_path = kg->conf_path,
		.state_dir = kg->state_dir,
		.queue_kind = kg->queue_kind,
		.verbose = kg->verbose,
		.workers = &kg->workers,
		.active = &kg->conf,
		.now_ms = reload_now_ms,
		.arm_timer = reload_arm_timer,
		.notify = reload_notify,
		.arg = kg,
	});
}

/* ---------------------------------------------------- shared tables */

/*
 * Expired knocks and intents leave the tables every queue thread shares.
 * Here, in the main thread, rather than in one queue thread: a collection
 * walks a whole table, and a queue thread that did it would keep the
 * packets waiting in its own queues for the walk besides the lock; so
 * every queue thread does the same work, packets.  The tables' locks keep
 * this from racing the threads, and the clock is theirs (monotonic
 * seconds).
 */
static void collect_shared(struct knockgw *kg)
{
	uint64_t now = now_ms(CLOCK_MONOTONIC) / 1000;

	replay_gc(&kg->replay, now);
	intent_gc(kg->intents, now);
}

/* ----------------------------------------------------------- the loop */

static int add_fd(struct knockgw *kg, int fd, enum event ev)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u32 = ev };

	if (fd < 0 || epoll_ctl(kg->epoll_fd, EPOLL_CTL_ADD, fd, &e) < 0)
		return -errno;
	return 0;
}

static int new_timer(struct knockgw *kg, int *fd, enum event ev)
{
	*fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	return add_fd(kg, *fd, ev);
}

/* Blocks the signals in this thread, and in every thread started later. */
static int open_loop(struct knockgw *kg)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	kg->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (kg->epoll_fd < 0)
		return -errno;
	kg->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	kg->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (add_fd(kg, kg->signal_fd, EV_SIGNAL) < 0 || add_fd(kg, kg->notify_fd, EV_NOTIFY) < 0 ||
	    new_timer(kg, &kg->status_timer, EV_STATUS) < 0 ||
	    new_timer(kg, &kg->table_timer, EV_TABLE) < 0 ||
	    new_timer(kg, &kg->watchdog_timer, EV_WATCHDOG) < 0 ||
	    new_timer(kg, &kg->reload_timer, EV_RELOAD) < 0 ||
	    new_timer(kg, &kg->ctl_timer, EV_CTL_TIMER) < 0 ||
	    new_timer(kg, &kg->gc_timer, EV_GC) < 0)
		return -errno;
	return 0;
}

static void close_loop(struct knockgw *kg)
{
	int *fds[] = { &kg->epoll_fd, &kg->signal_fd, &kg->notify_fd, &kg->status_timer,
		       &kg->table_timer, &kg->watchdog_timer, &kg->reload_timer, &kg->ctl_timer,
		       &kg->gc_timer };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

/* Returns false when the loop should end. */
static bool on_signal(struct knockgw *kg)
{
	struct signalfd_siginfo si;
	bool run = true;

	while (read(kg->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGUSR1:
			log_counters(kg);
			break;
		case SIGHUP:
			reload_start(&kg->reload);
			break;
		default:
			run = false;
			break;
		}
	}
	return run;
}

/* Until a stop signal (0) or a failed queue thread (its -errno). */
static int loop(struct knockgw *kg, uint64_t wd_usec)
{
	for (;;) {
		struct epoll_event ev[EVENTS_MAX];
		int n = epoll_wait(kg->epoll_fd, ev, EVENTS_MAX, -1);

		if (n < 0 && errno != EINTR) {
			log_warn("epoll_wait");
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			switch ((enum event)ev[i].data.u32) {
			case EV_SIGNAL:
				if (!on_signal(kg))
					return 0;
				break;
			case EV_CTL:
				ctl_event(kg);
				break;
			case EV_CTL_TIMER:
				drain(kg->ctl_timer);
				ctl_event(kg);
				break;
			case EV_NOTIFY:
				drain(kg->notify_fd);
				if (workers_error(&kg->workers))
					return workers_error(&kg->workers);
				reload_progress(&kg->reload);
				break;
			case EV_STATUS:
				drain(kg->status_timer);
				notify(kg, NULL);
				break;
			case EV_TABLE:
				drain(kg->table_timer);
				check_table(kg);
				break;
			case EV_WATCHDOG:
				drain(kg->watchdog_timer);
				/* Only while every queue thread is making rounds. */
				if (workers_alive(&kg->workers, now_ms(CLOCK_MONOTONIC),
						  wd_usec / 2000))
					sd_notify(0, "WATCHDOG=1");
				break;
			case EV_RELOAD:
				drain(kg->reload_timer);
				reload_timeout(&kg->reload);
				break;
			case EV_GC:
				drain(kg->gc_timer);
				collect_shared(kg);
				break;
			}
		}
	}
}

/*
 * A kill -9 must not leave queued SYNs unanswered (qguard.h): the guard
 * holds the queue sockets past the daemon's death and answers what waits
 * in them.  Forked once the capabilities are down to CAP_NET_ADMIN (which
 * its verdicts need) and before any thread of ours runs.
 */
static void start_guard(struct knockgw *kg)
{
	int fds[WORKERS_MAX * QSET_MAX];
	size_t n = 0;

	/* Every queue of every set: the SYNs', the probes' and the data's. */
	for (unsigned i = 0; i < kg->workers.n && i < WORKERS_MAX; i++)
		for (int set = 0; set < QSET_MAX; set++)
			fds[n++] = nfqueue_fd(kg->workers.w[i].q[set]);
	kg->guard_fd = qguard_start(fds, n, kg->conf);
	if (kg->guard_fd < 0)
		log_warnx("no queue guard: after a kill -9 the SYNs queued while the kernel "
			  "tears the daemon down go unanswered");
}

static int start(struct knockgw *kg)
{
	char err[512];
	int kept = 0, r;

	if (nftrules_probe(&kg->queue_kind) < 0) {
		log_warnx("this kernel has neither the nft queue expression nor the xtables "
			  "NFQUEUE target; cannot run");
		return -ENOTSUP;
	}
	log_info("using the %s queue",
		 kg->queue_kind == NFT_QUEUE_NATIVE ? "native nft" : "xtables NFQUEUE (nft compat)");
	if (tablelife_refuse_port_ok(kg->conf) < 0)
		return -EADDRINUSE;
	/*
	 * The table before the queues: until they are bound its knock rules'
	 * bypass refuses every SYN through the kernel, and whatever table it
	 * replaces (one a killed daemon left) has nothing waiting in a queue,
	 * which replacing a table's hooks would drop.
	 */
	if (kg->conf->rules_manage) {
		if (nftrules_install(kg->conf, kg->queue_kind, err, sizeof(err)) < 0) {
			log_warnx("cannot install table inet %s: %s", kg->conf->table, err);
			return -EIO;
		}
		kg->table_installed = true;
	}
	if (replay_init(&kg->replay, kg->conf->max_replay) < 0) {
		log_warnx("cannot allocate the replay table");
		return -ENOMEM;
	}
	kg->intents = intent_new(kg->conf->max_flows);
	if (!kg->intents) {
		log_warnx("cannot allocate the intent table");
		return -ENOMEM;
	}
	kg->workers_open = true;
	r = workers_open(&kg->workers, kg->conf, &kg->replay, kg->intents, kg->notify_fd);
	if (r < 0)
		return r;
	if (ctl_open(&kg->ctl, kg->conf->control_socket) < 0) {
		log_warn("cannot open the control socket %s", kg->conf->control_socket);
		return -EIO;
	}
	kg->ctl_open = true;
	if (add_fd(kg, ctl_fd(&kg->ctl), EV_CTL) < 0)
		return -errno;
	r = caps_keep_net_admin(&kept);
	if (r < 0) {
		errno = -r;
		log_warn("cannot drop capabilities");
		return r;
	}
	if (kept > 0)
		log_info("capabilities: CAP_NET_ADMIN only; %d other(s) stay in the bounding set "
			 "(no CAP_SETPCAP to remove them), out of reach under no_new_privs", kept);
	else
		log_info("capabilities: CAP_NET_ADMIN only, the bounding set too");
	start_guard(kg);	/* with no more privilege than that, and before any thread */
	return workers_start(&kg->workers);
}

int daemon_run(struct knockgw *kg)
{
	uint64_t wd_usec = 0;
	int ret = 1, r;

	kg->epoll_fd = kg->signal_fd = kg->notify_fd = kg->guard_fd = -1;
	kg->status_timer = kg->table_timer = kg->watchdog_timer = -1;
	kg->reload_timer = kg->ctl_timer = kg->gc_timer = -1;
	kg->started_ms = now_ms(CLOCK_MONOTONIC);
	kg->rl_table = (struct log_ratelimit){ .interval = 60, .burst = 1 };
	if (open_loop(kg) < 0) {
		log_warn("cannot set up the event loop");
		goto out;
	}
	if (start(kg) < 0)
		goto out;
	init_reload(kg);
	log_info("ready: %zu protected port(s), %zu knock destination(s), %u queue(s) from %u",
		 kg->conf->nprotect, kg->conf->nknock, kg->workers.n, kg->conf->queue_num);
	tablelife_save(kg->conf, kg->state_dir);
	notify(kg, "READY=1");
	arm_timer(kg->status_timer, STATUS_EVERY_MS, STATUS_EVERY_MS);
	arm_timer(kg->gc_timer, SHARED_GC_MS, SHARED_GC_MS);
	if (kg->table_installed)
		arm_timer(kg->table_timer, TABLE_CHECK_MS, TABLE_CHECK_MS);
	if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec >= 2000)
		arm_timer(kg->watchdog_timer, 1, wd_usec / 2000);
	else
		wd_usec = 0;
	r = loop(kg, wd_usec);
	ret = r == 0 ? 0 : 1;
out:
	sd_notify(0, "STOPPING=1");
	if (kg->table_installed && ret == 0 && kg->conf->on_stop == ON_STOP_HIDE) {
		tablelife_hide(kg->conf, kg->queue_kind);
	} else if (kg->table_installed && ret == 0) {
		tablelife_remove(kg->conf, kg->queue_kind);
	} else if (kg->table_installed) {
		/*
		 * An error stop (a queue that failed): deleting the table would
		 * open every protected port until the next start, and with
		 * Restart=on-failure that may never come.  It stays: with
		 * nobody reading the queue, SYNs are refused like a closed
		 * port's and the rest of what it queues is dropped.
		 */
		log_warnx("stopping on an error: table inet %s stays, so protected ports stay "
			  "closed until the next start (`knockgw flush` removes it)",
			  kg->conf->table);
	}
	if (kg->workers_open)
		workers_stop(&kg->workers);
	reload_cleanup(&kg->reload);	/* no worker runs any more */
	log_counters(kg);
	if (kg->workers_open)
		workers_close(&kg->workers);
	if (kg->guard_fd >= 0)
		close(kg->guard_fd);	/* the queues are unbound: the guard finds nothing */
	if (kg->ctl_open)
		ctl_close(&kg->ctl);
	replay_free(&kg->replay);
	intent_free(kg->intents);
	close_loop(kg);
	log_info("stopped");
	return ret;
}
