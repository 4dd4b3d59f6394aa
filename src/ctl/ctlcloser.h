/*
 * ctlcloser.h - the control socket's closer thread: closes passed
 * descriptors that are not sockets, off the main thread.
 *
 * A client may pass the daemon any descriptor, and close() of a file on
 * FUSE or NFS waits for whoever serves that file, possibly the client
 * itself, never answering (a FUSE flush nobody answers waits even through
 * SIGKILL).  The main thread must never wait on a peer, so such
 * descriptors are queued here and closed one after the other by a thread
 * of their own, however long each takes.
 *
 * The queue is bounded: CTL_CLOSER_MAX descriptors for all uids and
 * CTL_CONN_PER_UID for one (ctl_closer_room()); past that the caller takes
 * no descriptor at all, so a client who never answers holds a bounded
 * number of the daemon's descriptors, not its main thread.  Entries stay
 * queued until closed (the one being closed counts).  Each connection
 * holds at most one descriptor before it is queued, so the queue has room
 * for one per connection slot beyond CTL_CLOSER_MAX and ctl_closer_push()
 * after ctl_closer_room() cannot fail.
 *
 * Internal to ctl.c; used from the main thread only (the thread itself
 * touches nothing but the queue).
 */
#ifndef KNOCKGW_CTLCLOSER_H
#define KNOCKGW_CTLCLOSER_H

#include <stdbool.h>
#include <sys/types.h>

enum { CTL_CLOSER_MAX = 64 };	/* not-sockets waiting to be closed, all uids */

struct ctl_closer;

/*
 * Starts the thread with every signal blocked (one meant for the daemon
 * must not go to a thread that may sleep in a flush for good).  Call it
 * late, at the first such descriptor, not at startup: the thread inherits
 * the main thread's reduced capabilities.  0 or -errno.
 */
int ctl_closer_start(struct ctl_closer **ret);

/* May a descriptor from uid be taken now?  True for cl == NULL (not started). */
bool ctl_closer_room(struct ctl_closer *cl, uid_t uid);

/* Queues fd; the caller never closes it.  0, or -ENOSPC (the fd stays open). */
int ctl_closer_push(struct ctl_closer *cl, int fd, uid_t uid);

/*
 * Lets the thread drain its queue for at most wait_ms, then ends it.
 * Returns true when it finished; false when it is still stuck on a file
 * nobody answers for: it is then detached and frees itself when done.
 * cl may be NULL.
 */
bool ctl_closer_stop(struct ctl_closer *cl, int wait_ms);

#endif
