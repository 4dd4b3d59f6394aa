/*
 * tablelife.c - the daemon's table at the ends of its life (see
 * tablelife.h).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "common/log.h"
#include "config/hidestate.h"
#include "kernel/ctnl.h"
#include "kernel/listen.h"
#include "kernel/tablelife.h"

int tablelife_refuse_port_ok(const struct conf *c)
{
	int r;

	if (!c->rules_manage || c->nprotect == 0)
		return 0;
	r = listen_port_used(c->refuse_port);
	if (r > 0) {
		log_warnx("rules.refuse_port %u: a socket listens there, and refused SYNs would "
			  "reach it; choose a port nobody listens on", (unsigned)c->refuse_port);
		return -EADDRINUSE;
	}
	if (r < 0) {
		errno = -r;
		log_warn("cannot tell whether a socket listens on rules.refuse_port %u",
			 (unsigned)c->refuse_port);
	}
	return 0;
}

/*
 * on_stop "open": the table goes, except when translated client flows are
 * still open: conntrack, and with it their sequence adjustment, runs in a
 * namespace only while some rule uses it.  Then a keeper table stays (no
 * knocking, no refusing), which the next start replaces.  The count takes
 * a conntrack socket of its own: the queue threads still run theirs.
 */
void tablelife_remove(const struct conf *c, enum nft_queue_kind kind)
{
	char err[512];
	long open = 0;

	if (c->nknock > 0) {
		struct ctnl *ct = ctnl_open();

		if (ct) {
			open = ctnl_count_translated(ct, c->ct_label);
			ctnl_close(ct);
		}
	}
	if (open > 0) {
		if (nftrules_install_keeper(c, kind, err, sizeof(err)) == 0) {
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
 * on_stop "hide": the table stays, its SYNs no longer queued but refused
 * by the kernel like a closed port's, before the queues are drained and
 * closed, so that no SYN is lost in between; the next start replaces it
 * in one step.  Should the swap fail, the running table stays, which does
 * the same once the queues are closed (its knock rules bypass an empty
 * queue), only a SYN queued at that moment goes unanswered.
 */
void tablelife_hide(const struct conf *c, enum nft_queue_kind kind)
{
	char err[512];

	if (nftrules_install_hiding(c, kind, err, sizeof(err)) < 0)
		log_warnx("cannot switch table inet %s to hiding: %s; it stays as it was",
			  c->table, err);
	log_notice("table inet %s stays (on_stop \"hide\"): until the next start replaces it, "
		   "protected ports answer like closed ports and knocks wait; `knockgw flush` "
		   "removes it", c->table);
}

void tablelife_save(const struct conf *c, const char *state_dir)
{
	char err[PATH_MAX + 128], old[CONF_NAME_MAX];
	int r;

	if (!state_dir)
		return;
	if (!c->rules_manage || c->on_stop == ON_STOP_OPEN) {
		r = hidestate_remove(state_dir);
		if (r > 0)
			log_info("hiding state %s/%s removed: %s", state_dir, HIDESTATE_FILE,
				 c->rules_manage ? "on_stop is \"open\"" : "rules.manage is false");
		else if (r < 0)
			log_warnx("cannot remove the hiding state %s/%s: %s", state_dir,
				  HIDESTATE_FILE, strerror(-r));
		return;
	}
	if (hidestate_table(state_dir, old) == 0 && strcmp(old, c->table) != 0 &&
	    nftrules_present(old) > 0) {
		if (nftrules_remove(old) == 0)
			log_notice("table inet %s, which the saved hiding state named, removed: the "
				   "configuration names table inet %s", old, c->table);
		else
			log_warnx("cannot delete table inet %s, which the saved hiding state named; "
				  "`knockgw flush` with rules.table = \"%s\" removes it", old, old);
	}
	if (hidestate_save(c, state_dir, err, sizeof(err)) < 0) {
		log_warnx("cannot save the hiding state: %s; a start that fails after a reboot "
			  "will hide what the last saved state hides", err);
		return;
	}
	log_debug("hiding state saved in %s/%s", state_dir, HIDESTATE_FILE);
}
