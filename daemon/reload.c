/*
 * reload.c - SIGHUP, as a small state machine (see reload.h).
 *
 * Established connections are never touched by a reload: server-side they
 * are not queued, and translated client flows live in their conntrack
 * entries.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "nftrules.h"
#include "reload.h"
#include "tablelife.h"

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

/* The reload timer: the earliest deadline still open, or off. */
static void rearm(struct knockgw *kg)
{
	uint64_t due = 0, now = daemon_now_ms(CLOCK_MONOTONIC);

	if (kg->reload.pending)
		due = kg->reload.deadline_ms;
	for (struct retired_conf *r = kg->retired; r; r = r->next)
		if (!r->announced && (due == 0 || r->deadline_ms < due))
			due = r->deadline_ms;
	daemon_arm_timer(kg->reload_timer, due == 0 ? 0 : due > now ? due - now : 1, 0);
}

/* Frees the retired configurations no thread can hold any more (all: at exit). */
static void collect_retired(struct knockgw *kg, bool all)
{
	struct retired_conf **pp = &kg->retired;

	while (*pp) {
		struct retired_conf *r = *pp;

		if (!all && !workers_reached(&kg->workers, r->gen)) {
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
static void restore(struct knockgw *kg, struct conf *c)
{
	unsigned gen = workers_publish(&kg->workers, kg->conf);
	struct retired_conf *r = calloc(1, sizeof(*r));

	if (!r) {
		log_warnx("reload: out of memory; the refused configuration is never freed");
		return;
	}
	r->conf = c;
	r->gen = gen;
	r->deadline_ms = daemon_now_ms(CLOCK_MONOTONIC) + RELOAD_SWITCH_MS;
	r->next = kg->retired;
	kg->retired = r;
}

/* Every path that keeps the previous configuration ends here. */
static void refused(struct knockgw *kg)
{
	kg->reloads_refused++;
	daemon_notify(kg, "READY=1");
}

/* A SIGHUP that came during a reload: its turn now. */
static void next_round(struct knockgw *kg)
{
	if (kg->reload.again) {
		kg->reload.again = false;
		reload_start(kg);
	}
}

void reload_start(struct knockgw *kg)
{
	char msg[128];
	struct conf *c;
	const char *what;

	if (kg->reload.pending) {
		kg->reload.again = true;
		return;
	}
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)daemon_now_ms(CLOCK_MONOTONIC) * 1000);
	sd_notify(0, msg);
	log_info("reloading %s", kg->conf_path);
	c = conf_load_file(kg->conf_path, true);
	if (!c) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload refused: %s has errors; still running the previous configuration",
			  kg->conf_path);
		refused(kg);
		return;
	}
	what = conf_restart_reason(kg->conf, c);
	if (what) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload refused: the %s settings changed, which needs a restart; still "
			  "running the previous configuration", what);
		conf_destroy(c);
		refused(kg);
		return;
	}
	if (tablelife_refuse_port_ok(c) < 0) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload refused: still running the previous configuration");
		conf_destroy(c);
		refused(kg);
		return;
	}
	kg->reload.next = c;
	kg->reload.pending = true;
	kg->reload.deadline_ms = daemon_now_ms(CLOCK_MONOTONIC) + RELOAD_SWITCH_MS;
	kg->reload.gen = workers_publish(&kg->workers, c);
	reload_progress(kg);
}

/* Every thread has taken the new configuration: the table, then the switch. */
static void finish(struct knockgw *kg)
{
	struct conf *old = kg->conf, *c = kg->reload.next;
	char err[512];

	kg->reload.pending = false;
	kg->reload.next = NULL;
	if (c->rules_manage && nftrules_update(c, kg->queue_kind, err, sizeof(err)) < 0) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload: cannot install table inet %s: %s; restoring the previous "
			  "configuration", c->table, err);
		restore(kg, c);
		refused(kg);
		return;
	}
	if (c->rules_manage && strcmp(old->table, c->table) != 0 && nftrules_remove(old->table) < 0)
		log_warnx("reload: cannot delete the old table inet %s", old->table);
	kg->conf = c;
	if (!kg->verbose)
		log_setlevel(c->log_level);
	conf_destroy(old);	/* every thread has taken c (workers_reached): wiped now */
	kg->reloads++;
	tablelife_save(c, kg->state_dir);
	log_event(LOG_INFO, &(struct log_event){ .kind = LOG_EV_RELOADED },
		  "reloaded: %zu protected port(s), %zu knock destination(s)", c->nprotect, c->nknock);
	daemon_notify(kg, "READY=1");
}

void reload_progress(struct knockgw *kg)
{
	if (kg->reload.pending && workers_reached(&kg->workers, kg->reload.gen)) {
		finish(kg);
		next_round(kg);
	}
	collect_retired(kg, false);
	rearm(kg);
}

void reload_timeout(struct knockgw *kg)
{
	uint64_t now = daemon_now_ms(CLOCK_MONOTONIC);

	if (kg->reload.pending && !workers_reached(&kg->workers, kg->reload.gen) &&
	    now >= kg->reload.deadline_ms) {
		log_event(LOG_WARNING, &(struct log_event){ .kind = LOG_EV_RELOAD_REFUSED },
			  "reload: a queue thread did not take the new configuration; restoring "
			  "the previous one");
		kg->reload.pending = false;
		restore(kg, kg->reload.next);
		kg->reload.next = NULL;
		refused(kg);
	}
	collect_retired(kg, false);
	for (struct retired_conf *r = kg->retired; r; r = r->next) {
		if (r->announced || now < r->deadline_ms)
			continue;
		log_warnx("reload: a queue thread has not moved back to the previous "
			  "configuration yet; the refused one is kept until it has");
		r->announced = true;
	}
	reload_progress(kg);
	next_round(kg);
}

void reload_cleanup(struct knockgw *kg)
{
	if (kg->reload.pending) {
		conf_destroy(kg->reload.next);
		kg->reload.next = NULL;
		kg->reload.pending = false;
	}
	collect_retired(kg, true);
}
