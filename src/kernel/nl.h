/*
 * nl.h - the netlink transport: one socket, requests and their answers.
 *
 * The adapters (nfq, ctnl, sockkill, the nft* rules files) build and read
 * their own messages; opening and binding the socket, sequence numbers,
 * sending, and receiving every answer to a request with a deadline live
 * here, once.
 *
 * Contract:
 *   - nl_open() binds a socket of the given protocol (and multicast groups)
 *     to a port id the kernel picks.  Every receive is bounded: by the
 *     socket's receive timeout (nl_set_rcvtimeo, 1 s unless changed) or by
 *     the deadline a call is given.
 *   - Only datagrams from the kernel (sender port id 0) are read as answers:
 *     another local process may address our port id and could otherwise
 *     forge an acknowledgement.
 *   - nl_talk() sends one request, stamped with the next sequence number,
 *     and reads its answers until the acknowledgement, the end of a dump or
 *     an error; messages that answer another sequence number (a late answer
 *     to a request that timed out) are skipped.
 *   - struct nl_acks is the ledger of a batch whose messages each ask for an
 *     acknowledgement, with consecutive sequence numbers: nl_acks_feed() is
 *     pure (it reads received bytes), nl_acks_wait() reads the socket until
 *     every message is answered, the batch is refused as a whole, or the
 *     deadline passes, and nl_acks_result() fails unless every message was
 *     answered and none failed, naming the message that failed or was never
 *     answered.
 * Functions return 0 (or a count) or -errno.
 */
#ifndef KNOCKGW_NL_H
#define KNOCKGW_NL_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct nl;

/*
 * Called for each answer to a request, with libmnl's conventions (it is
 * mnl_cb_t): MNL_CB_OK reads on, MNL_CB_STOP ends, MNL_CB_ERROR fails with
 * errno.
 */
typedef int (*nl_cb)(const struct nlmsghdr *nlh, void *data);

/* NULL with errno set. */
struct nl *nl_open(int protocol, unsigned groups);
void nl_close(struct nl *nl);

int nl_fd(const struct nl *nl);
/* The sequence number for the next request (never 0). */
uint32_t nl_next_seq(struct nl *nl);

/* A bound on every blocking receive of this socket. */
int nl_set_rcvtimeo(struct nl *nl, unsigned ms);
/* SOL_NETLINK options: NETLINK_EXT_ACK, NETLINK_CAP_ACK. */
int nl_set_flag(struct nl *nl, int opt, bool on);
/*
 * Raises the receive or send buffer to at least bytes: past the system's
 * maximum with CAP_NET_ADMIN (the FORCE options), else as far as it allows.
 */
int nl_raise_rcvbuf(struct nl *nl, size_t bytes);
int nl_raise_sndbuf(struct nl *nl, size_t bytes);

/* Sends messages as they are (one datagram); 0 or -errno. */
int nl_send(struct nl *nl, const void *buf, size_t len);
int nl_sendv(struct nl *nl, const struct iovec *iov, size_t n);

/*
 * Sends req (its sequence number set here) and calls cb, which may be NULL,
 * for each answer until the acknowledgement or the end of the dump: req
 * must ask for an acknowledgement (NLM_F_ACK) or be a dump, which ends with
 * NLMSG_DONE.  (Whether a flag means "dump" depends on the message type:
 * NLM_F_EXCL of a NEW request is NLM_F_MATCH of a GET.)  0, the
 * kernel's -errno, or -errno of the transport (-EAGAIN: no answer within
 * the receive timeout).
 */
int nl_talk(struct nl *nl, struct nlmsghdr *req, nl_cb cb, void *data);

/*
 * What nl_talk() does with a kernel message that answers no request of
 * its (another sequence number: a late answer, or, on a queue socket, a
 * queued packet arriving during a configuration exchange): cb sees it (its
 * return value is ignored); NULL (the default) skips it.
 */
void nl_set_other(struct nl *nl, nl_cb cb, void *data);

/* ---------------------------------------------------- batch ledger */

enum { NL_WHAT_LEN = 96, NL_EXTMSG_LEN = 128 };

struct nl_ack {
	bool done;		/* answered */
	int err;		/* the answer: 0 or -errno */
	char what[NL_WHAT_LEN];	/* names the message in reports */
};

struct nl_acks {
	uint32_t begin_seq;	/* a message whose error refuses the whole batch */
	size_t n, cap, answered;
	struct nl_ack *m;	/* message i has sequence number begin_seq + 1 + i */
	int failed;		/* -ENOMEM: a message could not be recorded */
	int refused;		/* -errno: the batch was refused as a whole */
	int lost;		/* -ENOBUFS: the kernel dropped answers */
	char extmsg[NL_EXTMSG_LEN];	/* the kernel's reason for the first error */
};

void nl_acks_init(struct nl_acks *a, uint32_t begin_seq);
void nl_acks_free(struct nl_acks *a);
/* Records one more message; returns its sequence number (begin_seq + 1 + i). */
uint32_t nl_acks_add(struct nl_acks *a, const char *what);

/* Reads the acknowledgements in a received buffer; anything else is skipped. */
void nl_acks_feed(struct nl_acks *a, const void *buf, size_t len);
/* Nothing more to wait for: every message answered, or the batch refused. */
bool nl_acks_complete(const struct nl_acks *a);

/*
 * Where answers come from: fills buf and returns its length, -ETIMEDOUT
 * when nothing came within timeout_ms, -EAGAIN when woken with nothing to
 * read, or another -errno.  nl_acks_wait() reads the socket; a test may
 * give nl_acks_collect() a script.
 */
typedef ssize_t (*nl_recv_fn)(void *src, void *buf, size_t len, int timeout_ms);

/*
 * Reads answers into a until nl_acks_complete() or timeout_ms passes.
 * 0, or -ENOBUFS when the kernel dropped answers (also in a->lost), or
 * another -errno of the transport.
 */
int nl_acks_collect(struct nl_acks *a, nl_recv_fn recv, void *src, int timeout_ms);
int nl_acks_wait(struct nl *nl, struct nl_acks *a, int timeout_ms);

/*
 * 0 when every message was answered and none failed.  Else -errno with the
 * reason in err: the batch refused as a whole, the first message that
 * failed ("WHAT: reason"), or the first one never answered (-ETIMEDOUT, or
 * -ENOBUFS when answers were lost).
 */
int nl_acks_result(const struct nl_acks *a, char *err, size_t errlen);

#endif
