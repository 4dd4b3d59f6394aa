/*
 * ctlclient.h - the client side of the control socket (protocol:
 * ctlproto.h): knock-connect, `knockgw status`, `knockgw metrics` and the
 * test tool ctlreq talk to the daemon through it.
 *
 * One request per connection, as the daemon serves them: connect, send the
 * line (with at most the descriptors given riding on its first byte), read
 * the reply until the daemon closes the connection.  Every step keeps to
 * one deadline for the whole exchange, set when connecting, so a daemon
 * that hangs, or a backlog that stays full, costs the caller at most that
 * long.  The deadline is CLOCK_MONOTONIC.
 *
 * No logging, no printing, no signals (sends use MSG_NOSIGNAL): errors are
 * -errno for the caller to word.  Those that mean "no daemon listens at
 * that path" are told apart by ctlclient_no_daemon().
 */
#ifndef KNOCKGW_CTLCLIENT_H
#define KNOCKGW_CTLCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/ctlproto.h"

enum {
	CTLCLIENT_WAIT_MS = 5000,	/* a sensible deadline for one exchange */
	CTLCLIENT_LINE_MAX = 4096,	/* STATUS lines longer than this come in pieces */
};

struct ctlclient {
	int fd;
	uint64_t deadline_ms;
};

/*
 * Connects to the socket at path within timeout_ms.  0, or -errno:
 * -EINVAL (not a path that fits sun_path), -ETIMEDOUT (the daemon's backlog
 * stayed full), what connect() said (see ctlclient_no_daemon()).  On
 * failure *cc needs no ctlclient_close().
 */
int ctlclient_open(struct ctlclient *cc, const char *path, int timeout_ms);

/*
 * Sends len bytes; the nfds descriptors (0..CTLCLIENT_FDS_MAX, may repeat)
 * go with the first byte in one SCM_RIGHTS message.  0 or -errno
 * (-ETIMEDOUT, -EPIPE when the daemon has already closed, ...).
 */
enum { CTLCLIENT_FDS_MAX = 8 };
int ctlclient_send(struct ctlclient *cc, const void *buf, size_t len, const int *fds, size_t nfds);

/*
 * Reads the reply until the daemon closes the connection: at most size
 * bytes into buf, their number in *ret_len (written in every case, so
 * whatever came is there to show).  0, -EMSGSIZE when more than size
 * bytes came, -ETIMEDOUT, or -errno.
 */
int ctlclient_read(struct ctlclient *cc, char *buf, size_t size, size_t *ret_len);

void ctlclient_close(struct ctlclient *cc);

/* connect()'s errors that mean nobody serves the path: knockgw is not running. */
bool ctlclient_no_daemon(int err);

/* A single-line reply to QUERY or INTENT. */
struct ctlclient_answer {
	enum ctl_status status;		/* CTL_S_UNKNOWN: a reply not understood */
	bool has_knock;			/* "OK knock integrity=<N>" */
	unsigned integrity_len;
	char line[CTL_REPLY_MAX];	/* the reply as it came, NUL-terminated, LF cut */
};

/*
 * The whole exchange for QUERY or INTENT: formats req, sends it (with
 * pass_fd unless it is -1), reads and parses the reply, all within
 * timeout_ms; the request text is wiped afterwards (an INTENT payload is
 * the first bytes of the caller's stream).  0 when a reply came (what it
 * said in *ret, which is written only then), or -errno.
 */
int ctlclient_ask(const char *path, int timeout_ms, const struct ctl_request *req, int pass_fd,
		  struct ctlclient_answer *ret);

/*
 * STATUS, e.g. for `knockgw status`: sends "STATUS" and hands each line of
 * the text to fn (with its LF; a line longer than CTLCLIENT_LINE_MAX comes
 * in pieces, only the last with the LF), without the closing "END".  Returns 0
 * once the reply is complete, its status in *ret_status: CTL_S_OK after
 * "END", or the daemon's refusal (e.g. CTL_S_NOT_ROOT; fn then gets
 * nothing).  -EPROTO when the connection ended before "END" or the reply
 * is not understood, -ETIMEDOUT, or another -errno.  fn returns 0 to go
 * on, or -errno to stop the exchange, which then returns that.
 */
typedef int ctlclient_line_fn(const char *line, size_t len, void *arg);
int ctlclient_status(const char *path, int timeout_ms, ctlclient_line_fn *fn, void *arg,
		     enum ctl_status *ret_status);

/*
 * METRICS, for `knockgw metrics`: the same exchange as ctlclient_status()
 * for the STATUS lines and the per-key ones.  A daemon older than METRICS
 * refuses it as CTL_S_BAD_REQUEST.
 */
int ctlclient_metrics(const char *path, int timeout_ms, ctlclient_line_fn *fn, void *arg,
		      enum ctl_status *ret_status);

/*
 * The reading half of ctlclient_status(), pure, for tests: feed the reply
 * as it comes in pieces of any size, then once more with n == 0 at its end.
 * Returns 1 while more is expected, 0 when the reply is complete (*ret_status
 * written), -EPROTO, or fn's negative return.
 */
struct ctlclient_status_reader {
	char buf[CTLCLIENT_LINE_MAX];
	size_t len;
	bool first_line_seen;		/* the first line may be OK or ERR */
	bool in_line;			/* a long line was handed out in part */
	bool done;
	enum ctl_status status;
};
void ctlclient_status_reader_init(struct ctlclient_status_reader *r);
int ctlclient_status_feed(struct ctlclient_status_reader *r, const char *data, size_t n,
			  ctlclient_line_fn *fn, void *arg, enum ctl_status *ret_status);

#endif
