/*
 * reload.c - SIGHUP, as a small state machine (see reload.h).
 *
 * Established connections are never touched by a reload: server-side they
 * are not queued, and translated client flows live in their conntrack
 * entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "common/log.h"
#include "config/conf.h"
#include "daemon/reload.h"
#include "kernel/nft/nftrules.h"
#include "kernel/tablelife.h"

/*
 * A configuration that was published to the queue threads and then
 * replaced while some thread may not have moved on yet: freed once every
 * thread has taken generation gen (the one that replaced it), never sooner.
 */
struct retired_conf {
	struct retired_conf *next;
	struct conf *conf;
	unsigned gen;
	uint64_t deadline_ms;		/* then say that it is kept */
	bool announced;
};

static uint64_t now_ms(const struct reload *r)
{
	return r->ctx.now_ms(r->ctx.arg);
}

/* The reload timer: the earliest deadline still open, or off. */
static void rearm(struct reload *rl)
{
	uint64_t due = 0, now = now_ms(rl);

	if (rl->pending)
		due = rl->deadline_ms;
	for (struct retired_conf *r = rl->retired; r; r = r->next)
		if (!r->announced && (due == 0 || r->deadline_ms < due))
			due = r->deadline_ms;
	rl->ctx.arm_timer(rl->ctx.arg, due == 0 ? 0 : due > now ? due - now : 1);
}

/* Frees the retired configurations no thread can hold any more (all: at exit). */
static void collect_retired(struct reload *rl, bool all)
{
	struct retired_conf **pp = &rl->retired;

	while (*pp) {
		struct retired_conf *r = *pp;

		if (!all && !workers_reached(rl->ctx.workers, r->gen)) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		conf_destroy(r->conf);
		if (r->announced && !all)
			log_info("reload: every queue thread has left the refused configuration; "
				 "freed");
		free(r);
	}
}

/*
 * Back to the active configuration after c was published.  A thread may
 * have taken c (all of them did when the table could not be installed) and
 * not yet moved back: so c is retired, not freed; if even the list node
 * cannot be had, c is never freed: a leak, not a use-after-free.
 */
static void restore(struct reload *rl, struct conf *c)
{
	unsigned gen = workers_publish(rl->ctx.workers, *rl->ctx.active);
	struct retired_conf *r = calloc(1, sizeof(*r));

	if (!r) {
		log_warnx("reload: out of memory; the refused configuration is never freed");
		return;
	}
	r->conf = c;
	r->gen = gen;
	r->deadline_ms = now_ms(rl) + RELOAD_SWITCH_MS;
	r->next = rl->retired;
	rl->retired = r;
}

/* Every path that keeps the previous configuration ends here. */
static void refused(struct reload *rl)
{
	rl->reloads_refused++;
	rl->ctx.notify(rl->ctx.arg, "READY=1");
}

/* A SIGHUP that came during a reload: its turn now. */
static void next_round(struct reload *rl)
{
	if (rl->again) {
		rl->again = false;
		reload_start(rl);
	}
}

void reload_init(struct reload *rl, const struct reload_ctx *ctx)
{
	memset(rl, 0, sizeof(*rl));
	rl->ctx = *ctx;
}

void reload_start(struct reload *rl)
{
	char msg[128];
	struct conf *c;
	const char *what;

	if (rl->pending) {
		rl->again = true;
		return;
	}
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)now_ms(rl) * 1000);
	sd_notify(0, msg);
	log_info("reloading %s", rl->ctx.conf_path);
	c = conf_load_file(rl->ctx.conf_path, true);
	if (!c) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload refused: %s has errors; still running the previous configuration",
			  rl->ctx.conf_path);
		refused(rl);
		return;
	}
	what = conf_restart_reason(*rl->ctx.active, c);
	if (what) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload refused: the %s settings changed, which needs a restart; still "
			  "running the previous configuration", what);
		conf_destroy(c);
		refused(rl);
		return;
	}
	if (tablelife_refuse_port_ok(c) < 0) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload refused: still running the previous configuration");
		conf_destroy(c);
		refused(rl);
		return;
	}
	rl->next = c;
	rl->pending = true;
	rl->deadline_ms = now_ms(rl) + RELOAD_SWITCH_MS;
	rl->gen = workers_publish(rl->ctx.workers, c);
	reload_progress(rl);
}

/* Every thread has taken the new configuration: the table, then the switch. */
static void finish(struct reload *rl)
{
	struct conf *old = *rl->ctx.active, *c = rl->next;
	char err[512];

	rl->pending = false;
	rl->next = NULL;
	if (c->rules_manage && nftrules_update(c, rl->ctx.queue_kind, err, sizeof(err)) < 0) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload: cannot install table inet %s: %s; restoring the previous "
			  "configuration", c->table, err);
		restore(rl, c);
		refused(rl);
		return;
	}
	if (c->rules_manage && strcmp(old->table, c->table) != 0 && nftrules_remove(old->table) < 0)
		log_warnx("reload: cannot delete the old table inet %s", old->table);
	*rl->ctx.active = c;
	if (!rl->ctx.verbose)
		log_setlevel(c->log_level);
	conf_destroy(old);	/* every thread has taken c (workers_reached): wiped now */
	rl->reloads++;
	tablelife_save(c, rl->ctx.state_dir);
	log_event(LOG_INFO, &(struct log_event){ .kind = LOG_EV_RELOADED },
		  "reloaded: %zu protected port(s), %zu knock destination(s)", c->nprotect, c->nknock);
	rl->ctx.notify(rl->ctx.arg, "READY=1");
}

void reload_progress(struct reload *rl)
{
	if (rl->pending && workers_reached(rl->ctx.workers, rl->gen)) {
		finish(rl);
		next_round(rl);
	}
	collect_retired(rl, false);
	rearm(rl);
}

void reload_timeout(struct reload *rl)
{
	uint64_t now = now_ms(rl);

	if (rl->pending && !workers_reached(rl->ctx.workers, rl->gen) &&
	    now >= rl->deadline_ms) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload: a queue thread did not take the new configuration; restoring "
			  "the previous one");
		rl->pending = false;
		restore(rl, rl->next);
		rl->next = NULL;
		refused(rl);
	}
	collect_retired(rl, false);
	for (struct retired_conf *r = rl->retired; r; r = r->next) {
		if (r->announced || now < r->deadline_ms)
			continue;
		log_warnx("reload: a queue thread has not moved back to the previous "
			  "configuration yet; the refused one is kept until it has");
		r->announced = true;
	}
	reload_progress(rl);
	next_round(rl);
}

void reload_cleanup(struct reload *rl)
{
	if (rl->pending) {
		conf_destroy(rl->next);
		rl->next = NULL;
		rl->pending = false;
	}
	collect_retired(rl, true);
}
