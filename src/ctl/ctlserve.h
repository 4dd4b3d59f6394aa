/*
 * ctlserve.h - one control request: parse it, authorise it, act on it,
 * and say what the reply is.  The transport (ctl.c) collects the line and
 * the descriptor that came with it and writes the reply back.
 *
 * Authorisation is per request, by the peer's SO_PEERCRED: QUERY is open
 * to anyone; INTENT needs a descriptor the caller passed that is its own
 * unconnected, bound TCP socket of the request's family; STATUS and
 * METRICS are for uid 0 only.  A descriptor belongs with INTENT only, and only one.
 *
 * Internal to ctl.c.  Counts into the struct ctl it is given (requests by
 * command, reply statuses, parse failures, stray and refused descriptors)
 * and logs through its rate limit.
 */
#ifndef KNOCKGW_CTLSERVE_H
#define KNOCKGW_CTLSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ctl/ctl.h"

/* What ctl_handle() was given, passed on to each request. */
struct ctl_env {
	const struct conf *conf;
	struct intent_table *intents;
	uint64_t now;			/* seconds, the clock intent_take() is given */
	ctl_status_fn *status;
	void *arg;
};

/* Who asked, and what came with the line. */
struct ctl_peer {
	struct ucred cred;		/* SO_PEERCRED */
	int passed_fd;			/* the one descriptor taken, or -1 */
	bool stray_fds;			/* more than one, or cut off (MSG_CTRUNC) */
	bool fds_refused;		/* passed while the closer had no room */
};

struct ctl_reply {
	char line[CTL_REPLY_MAX];
	char *text;			/* malloc'd STATUS text, or NULL: line */
	size_t len;			/* of text, or of line */
	bool fd_used;			/* the passed descriptor is a usable intent socket */
};

/*
 * Serves the len bytes a client sent (its whole request) and fills *ret.
 * Never closes or keeps peer->passed_fd: the caller closes it, knowing from
 * ret->fd_used whether it is an intent socket (whose close cannot wait).
 * 0, or -ENOSPC when the reply does not fit (which cannot happen: every
 * single-line reply fits CTL_REPLY_MAX).
 */
int ctl_serve(struct ctl *c, const struct ctl_peer *peer, const uint8_t *in, size_t len,
	      const struct ctl_env *env, struct ctl_reply *ret);

#endif
