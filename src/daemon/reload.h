/*
 * reload.h - SIGHUP: a new configuration, all or nothing, without ever
 * waiting in the main loop.
 *
 * reload_start() reads and validates the file and its key files, refuses
 * what needs a restart (conf_restart_reason()), then publishes the new
 * configuration to the queue threads and returns.  Each thread takes it
 * between batches and wakes the main loop (its eventfd), which calls
 * reload_progress(): once all have it, the table is replaced in one
 * transaction and the old configuration is wiped.  If they do not all take
 * it within RELOAD_SWITCH_MS (the reload timer: reload_timeout()), or the
 * table cannot be installed, the old configuration is published again and
 * the refused one is retired: freed by reload_progress() once every thread
 * has moved back, never sooner (a thread may hold it).  Any failure keeps
 * the old configuration and says why; systemd sees RELOADING=1 then
 * READY=1 either way.  Main thread only; what it needs of the daemon's
 * event loop (clock, timer, notification) comes through struct reload_ctx.
 */
#ifndef KNOCKGW_RELOAD_H
#define KNOCKGW_RELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "config/conf.h"
#include "daemon/workers.h"
#include "kernel/nft/nftrules.h"

enum {
	RELOAD_SWITCH_MS = 2000,	/* threads take a configuration within ~1 ms */
};

/*
 * What a reload works with, given by the daemon that runs it (daemon.c):
 * its settings, its threads and active configuration, and the three things
 * it does for a reload through the narrow door of these callbacks, each
 * called with arg: its monotonic clock, the reload timer, and sd_notify
 * with the counters' STATUS= summary (which only the daemon can make).
 */
struct reload_ctx {
	const char *conf_path;
	const char *state_dir;		/* NULL: none (hidestate.h) */
	enum nft_queue_kind queue_kind;
	bool verbose;			/* -v: a reload keeps the debug level */
	struct workers *workers;
	struct conf **active;		/* the daemon's active configuration: switched here */
	uint64_t (*now_ms)(void *arg);			/* monotonic, ms */
	void (*arm_timer)(void *arg, uint64_t ms);	/* fire once, ms from now; 0: off */
	void (*notify)(void *arg, const char *state);	/* "READY=1" and STATUS= */
	void *arg;
};

struct retired_conf;

struct reload {
	struct reload_ctx ctx;
	/*
	 * A reload in progress: next was published to the queue threads,
	 * which have not all taken it yet; *ctx.active is still the active one.
	 */
	bool pending;
	bool again;			/* a SIGHUP came meanwhile: reload after this */
	struct conf *next;
	unsigned gen;
	uint64_t deadline_ms;		/* monotonic: restore if not all took it */
	struct retired_conf *retired;	/* replaced, maybe still held by a worker */
	unsigned reloads, reloads_refused;
};

/*
 * Ready for SIGHUPs, once the daemon runs.  A zeroed struct reload that
 * never saw this is idle: reload_cleanup() does nothing with it.
 */
void reload_init(struct reload *r, const struct reload_ctx *ctx);

/* SIGHUP.  A reload already in progress makes this one wait for it. */
void reload_start(struct reload *r);

/* The queue threads moved on: finish the switch, free retired configurations. */
void reload_progress(struct reload *r);

/* The reload timer fired. */
void reload_timeout(struct reload *r);

/* At stop, after the threads are joined: frees whatever reload still holds. */
void reload_cleanup(struct reload *r);

#endif
