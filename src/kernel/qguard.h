/*
 * qguard.h - the queue guard: a small process that holds a second
 * descriptor of each queue socket, so that a daemon killed with -9 (or
 * crashed) leaves nothing queued unanswered.  Part of the queue adapter
 * (it reads and answers queue messages).
 *
 * Why: the kernel keeps a queue bound for as long as its netlink socket
 * lives.  A killed process releases its sockets last (its memory goes
 * first, a few milliseconds), and until then the queue takes SYNs, which
 * nobody reads; when the socket is released the kernel destroys the queue
 * and drops all it held (nfnetlink_queue: instance_destroy_rcu ->
 * nfqnl_flush -> NF_DROP).  The rules' bypass only applies once the queue
 * is gone, so no rule can answer those SYNs: measured 8 to 43 of a SYN
 * every 0.5 ms went unanswered at each kill -9.
 *
 * With the guard the socket outlives the daemon.  The guard sleeps on a
 * pipe the daemon holds the other end of; when the daemon is gone (its
 * descriptors closed, so EOF), it answers what waits in each socket as the
 * rules' bypass would: a new SYN to a hiding port (the rules' new-SYN
 * code) goes on, its code cleared, to the nat rule that refuses it (the
 * kernel's closed-port RST); a segment of no known connection (the
 * no-connection code, when the entry hides) goes on to the rule that
 * rejects it; anything else is dropped, as the kernel would.  Packets the
 * daemon had read and not answered yet are sent round again (a batch
 * NF_REPEAT up to the first one waiting in the socket), so the rules
 * queue them anew and the guard answers them too.  Then it closes the
 * sockets: the queue goes, and from then on the bypass answers.
 *
 * A daemon that stops by itself unbinds its queues first (nfqueue_close),
 * so the guard finds nothing to answer and exits.  The guard keeps no key:
 * it wipes its copy of the configuration's keyring first.  It ignores
 * every signal but SIGKILL (systemd signals the whole unit at a stop: the
 * guard must finish its answers, which take microseconds, then it exits on
 * its own).  It is not the daemon's child (double fork), so nothing has to
 * reap it.
 */
#ifndef KNOCKGW_QGUARD_H
#define KNOCKGW_QGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/marks.h"
#include "config/conf.h"

/* What the guard does with one queued packet: what the rules would do with no queue. */
struct qguard_answer {
	int verdict;		/* NF_ACCEPT or NF_DROP */
	bool set_mark;		/* with the packet mark set to mark */
	uint32_t mark;
};

/*
 * The answer to a packet queued with packet mark `mark`, under marks m; fail_open as
 * the configuration has it.  Never lets a packet through as a knock (it
 * never sets the accepted code, which is what lets a SYN past the nat
 * rule): a new SYN goes on with our bits cleared, where the queue rule's
 * bypass would send it (the nat rule that refuses it; with fail_open there
 * is none, by the administrator's choice); a no-connection segment goes on
 * to the rule that rejects it, which exists only without fail_open;
 * anything else (codes whose queue rule has no bypass, codes no rule
 * queues, no code) is dropped.  Pure.
 */
struct qguard_answer qguard_decide(const struct marks *m, bool fail_open, uint32_t mark);

/*
 * Starts the guard for the queue sockets fds (n of them) of configuration
 * c, whose keyring the guard's copy wipes.  Call it while the daemon has
 * one thread.  Returns the write end of the pipe, which the daemon keeps
 * open (close-on-exec) for its life, or -errno (logged; the daemon runs on
 * without a guard).
 */
int qguard_start(const int *fds, size_t n, struct conf *c);

#endif
