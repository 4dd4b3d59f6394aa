/*
 * daemon.h - the running daemon: its context, and its life from start to stop.
 *
 * daemon_run(): set up the event loop, probe which queue expression the
 * kernel has, make sure nothing listens on rules.refuse_port (tablelife.h),
 * install the nft table unless rules.manage is false (before the queues:
 * until they are bound its rules' bypass refuses every SYN through the
 * kernel), make the replay and intent tables, bind the queues and open
 * every socket the data path needs (workers.h), open the control socket,
 * drop all capabilities but CAP_NET_ADMIN, fork the queue guard (qguard.h),
 * start the queue threads, save the hiding state, then tell systemd
 * READY=1.  The main thread then sleeps in one epoll set and acts on what
 * wakes it, as OpenBSD daemons dispatch their events:
 *   - a signalfd: SIGTERM/SIGINT stop, SIGHUP reloads (reload.h), SIGUSR1
 *     logs the counters;
 *   - the control socket (ctl.h), and a timer for its clients' deadlines;
 *   - an eventfd the queue threads write when they took a configuration
 *     or failed (a failure stops the daemon with status 1);
 *   - timers: STATUS= for systemd, the table check, the watchdog, the
 *     deadline of a configuration switch, and the collection of expired
 *     entries from the replay and intent tables the queue threads share.
 * Nothing polls at an interval.  Each successful start and reload saves
 * the hiding state in the unit's state directory (tablelife_save()).  On
 * stop the table is left hiding or removed (on_stop; after a queue failed,
 * kept: see daemon.c), the threads are joined, the counters logged and
 * the keys wiped.  The daemon itself does not fork away (Type=notify); the
 * one process it starts is the queue guard, which answers what waits in the
 * queues if the daemon is killed.
 *
 * The signals are blocked in every thread (signalfd takes them): there are
 * no global variables.
 */
#ifndef KNOCKGW_DAEMON_H
#define KNOCKGW_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "common/log.h"
#include "config/conf.h"
#include "ctl/ctl.h"
#include "daemon/reload.h"
#include "daemon/workers.h"
#include "datapath/client/intent.h"
#include "datapath/server/replay.h"
#include "kernel/nft/nftrules.h"

struct knockgw {
	struct conf *conf;		/* active: the table, ctl and status use it */
	const char *conf_path;
	const char *state_dir;		/* the unit's state directory; NULL: none (hidestate.h) */
	struct reload reload;		/* SIGHUP's state machine; it switches conf */
	enum nft_queue_kind queue_kind;
	struct replay replay;
	struct intent_table *intents;
	struct ctl ctl;
	bool ctl_open;
	struct workers workers;
	bool workers_open;
	bool table_installed;
	uint64_t started_ms;
	unsigned table_restores;
	struct log_ratelimit rl_table;	/* "cannot check table" warnings */
	bool verbose;			/* -v: debug logging whatever the file says */

	/* The queue guard's pipe (qguard.h): open for the daemon's life, -1 without one. */
	int guard_fd;

	/* The event loop's descriptors (-1 when closed). */
	int epoll_fd, signal_fd, notify_fd;
	int status_timer, table_timer, watchdog_timer, reload_timer, ctl_timer, gc_timer;
};


/*
 * Runs the daemon with kg->conf (loaded from kg->conf_path) until a stop;
 * returns the exit status: 0 after a clean stop, 1 after a failure.
 */
int daemon_run(struct knockgw *kg);

#endif
