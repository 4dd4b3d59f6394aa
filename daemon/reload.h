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
 * READY=1 either way.  Main thread only.
 */
#ifndef KNOCKGW_RELOAD_H
#define KNOCKGW_RELOAD_H

#include <stdbool.h>

#include "conf.h"
#include "daemon.h"

enum {
	RELOAD_SWITCH_MS = 2000,	/* threads take a configuration within ~1 ms */
};

/* SIGHUP.  A reload already in progress makes this one wait for it. */
void reload_start(struct knockgw *kg);

/* The queue threads moved on: finish the switch, free retired configurations. */
void reload_progress(struct knockgw *kg);

/* The reload timer fired. */
void reload_timeout(struct knockgw *kg);

/* At stop, after the threads are joined: frees whatever reload still holds. */
void reload_cleanup(struct knockgw *kg);

#endif
