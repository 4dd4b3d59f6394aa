/*
 * ctl.h - the control socket: knock-connect and `knockgw status` talk to
 * the daemon here (protocol: ctlproto.h).
 *
 * A unix stream socket, mode 0666 in a 0755 directory: any local user may
 * connect, and each request is authorised on its own (SO_PEERCRED).  QUERY
 * tells anyone whether a destination has a knock; INTENT records an
 * integrity payload for a TCP socket the caller passes along and must own;
 * STATUS is for root only.
 *
 * Never blocks: the listening socket and every open connection sit in one
 * epoll set, whose descriptor ctl_fd() returns for the owner's poll() or
 * epoll.  ctl_handle() does whatever is ready without waiting, and drops
 * clients that have not sent their line within CTL_TIMEOUT_MS (or not taken
 * their reply within as long again); ctl_next_deadline_ms() says when it
 * must run next for that.  At most CTL_MAX_CONN connections are open,
 * CTL_CONN_PER_UID of them for one non-root uid, so a local user who opens
 * connections and sends nothing slows nobody else down.  Whatever a peer
 * can trigger is counted and logged through log_peer().  Main thread only,
 * except for one closer thread of its own (ctlcloser.h, started at the
 * first passed descriptor that is not a socket): closing a file may wait
 * for whoever serves it (FUSE, NFS), and the main thread must never wait
 * on a peer.
 *
 * The transport is ctl.c, what a request means is ctlserve.c, the line
 * protocol ctlproto.c, and the client side ctlclient.c.
 */
#ifndef KNOCKGW_CTL_H
#define KNOCKGW_CTL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/log.h"
#include "config/conf.h"
#include "ctl/ctlproto.h"
#include "datapath/client/intent.h"

enum {
	CTL_TIMEOUT_MS = 1000,
	CTL_MAX_CONN = 64,
	CTL_CONN_PER_UID = 8,
	CTL_BACKLOG = 64,
};

/* Every way a connection can end, beyond the reply statuses; each a counter. */
#define CTL_COUNTERS(X)                                                          \
	X(connections, "connections accepted")                                     \
	X(query, "QUERY requests")                                                 \
	X(intent, "INTENT requests")                                               \
	X(status, "STATUS and METRICS requests")                                   \
	X(timeouts, "clients dropped for not sending (or reading) in time")        \
	X(io_errors, "connections lost to a receive or send error")                \
	X(accept_errors, "accept() failures")                                      \
	X(refused_busy, "connections refused: all slots, or the uid's, in use")    \
	X(stray_fds, "descriptors passed without INTENT, or more than one")        \
	X(nonsocket_fds, "passed descriptors that were not sockets (closer thread)") \
	X(fds_refused, "descriptors not taken: too many not-sockets still closing")

enum ctl_counter {
#define X(name, desc) CTLC_##name,
	CTL_COUNTERS(X)
#undef X
	CTLC_MAX
};

struct ctl_conn;
struct ctl_closer;

struct ctl {
	int listen_fd;
	int epoll_fd;
	int spare_fd;			/* given up when accept() runs out of fds */
	char path[108];			/* sizeof(sun_path) */
	dev_t dev;			/* the socket file we made: ctl_close */
	ino_t ino;			/* unlinks it only if it is still ours */
	uint64_t paused_until_ms;	/* accept() failed for want of resources */
	struct ctl_conn *conn;		/* CTL_MAX_CONN slots */
	struct ctl_closer *closer;	/* NULL until the first non-socket is passed */
	uint64_t cnt[CTLC_MAX];
	uint64_t replies[CTL_S_MAX];	/* by reply status (errors included) */
	uint64_t parse[CTL_PARSE_MAX];	/* why requests were "bad-request" */
	struct log_ratelimit rl;
};

/*
 * STATUS and METRICS output (cmd says which): writes text lines to out;
 * ctl appends the final "END" line.  Runs in the caller's (main) thread,
 * inside ctl_handle().
 */
typedef void ctl_status_fn(FILE *out, enum ctl_cmd cmd, void *arg);

/*
 * Creates the socket at path: makes its directory (0755) when missing,
 * replaces a stale socket file (not a live one: -EADDRINUSE, nor anything
 * that is not a socket: -EEXIST), binds, sets mode 0666, listens.  0 or
 * -errno, with the reason logged.
 */
int ctl_open(struct ctl *c, const char *path);

/* The descriptor to poll for POLLIN; ctl_handle() when it is readable. */
int ctl_fd(const struct ctl *c);

/*
 * Serves what is ready, without blocking, and drops clients past their
 * deadline.  Call it when ctl_fd() is readable and when the time
 * ctl_next_deadline_ms() gave has come (calling it more often is harmless
 * and cheap).  now is the monotonic clock in seconds, the one
 * intent_take() is given; conf is the live configuration.  status may be
 * NULL (STATUS then prints only END).
 */
void ctl_handle(struct ctl *c, const struct conf *conf, struct intent_table *intents,
		uint64_t now, ctl_status_fn *status, void *arg);

/*
 * When ctl_handle() must run next even if ctl_fd() stays quiet: the
 * earliest deadline of a connection (or of a pause in accepting after
 * accept() ran out of resources), in CLOCK_MONOTONIC milliseconds, the
 * clock ctl keeps its deadlines in.  UINT64_MAX when there is none.  It
 * changes only inside ctl_open() and ctl_handle(): ask again after each.
 */
uint64_t ctl_next_deadline_ms(const struct ctl *c);

/*
 * The same as a poll()/epoll_wait() timeout from now_ms (CLOCK_MONOTONIC
 * milliseconds): -1 when there is no deadline, 0 when one has passed.
 */
int ctl_timeout_ms(const struct ctl *c, uint64_t now_ms);

/*
 * Closes every connection and the socket, and removes the socket file if it
 * is still the one ctl_open() made.  Only after ctl_open() (which leaves c
 * closable even when it fails); calling it twice is harmless.  Waits at
 * most CTL_TIMEOUT_MS for the closer thread; one that is stuck on a file
 * nobody answers for is left to finish (and free itself) on its own.
 */
void ctl_close(struct ctl *c);

/* Calls fn for each counter: "ctl_connections", "ctl_err_no_knock", ... */
void ctl_counters_foreach(const struct ctl *c, void (*fn)(const char *name, uint64_t value,
							     void *arg),
			  void *arg);

#endif
