/*
 * nfq.h - one NFQUEUE queue over libmnl + libnetfilter_queue's nlmsg API.
 *
 * The only module that includes libnetfilter_queue or builds queue messages;
 * the socket is the netlink transport's (nl.h).
 * Contract:
 *   - nfqueue_open() binds queue num with a copy range and flags, sizes the socket
 *     (SO_RCVBUFFORCE), and sets a short receive timeout so that a reader
 *     that does not poll never sleeps long on an empty socket (see nfq.c).
 *   - A full queue drops what does not fit, always: the kernel's fail-open
 *     flag is cleared on every bind.  Letting packets through unchecked
 *     when no daemon is attached is the rules' queue bypass, not ours.
 *   - nfqueue_recv() reads up to a batch of packets with one recvmmsg() and calls
 *     the handler for each, in queue order; the handler must answer every
 *     packet exactly once, now (nfqueue_verdict*) or later (a held packet).
 *     It waits at most the short receive timeout for the first packet and
 *     returns 0 when none came, so it may be called after poll() on
 *     nfqueue_fd() reported the socket readable or in error (an overflow:
 *     the receive reports and clears it), or without polling.
 *     Only the kernel's messages are read: one another process sent to our
 *     port id is counted in bad_msgs and ignored.
 *   - Verdicts are buffered and go out with nfqueue_flush(), in the order they
 *     were given: equal runs become one NFQNL_MSG_VERDICT_BATCH while nothing
 *     is held and the verdicts came in id order, single verdicts otherwise (a
 *     batch verdict would release held packets with lower ids, and answers
 *     in id order).
 *   - ENOBUFS (the kernel dropped messages for us) is counted and survived.
 */
#ifndef KNOCKGW_NFQ_H
#define KNOCKGW_NFQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nfqueue_verdict {
	NFQUEUE_DROP = 0,		/* NF_DROP */
	NFQUEUE_ACCEPT = 1,		/* NF_ACCEPT */
	NFQUEUE_REPEAT = 4,		/* NF_REPEAT: run our chain again (with a new mark) */
};

enum nfqueue_flags {
	NFQUEUE_F_GSO = 1 << 1,		/* take GSO packets unsegmented */
};

struct nfqueue_packet {
	uint32_t id;
	uint16_t hw_proto;	/* ETH_P_IP / ETH_P_IPV6, host order */
	uint8_t hook;
	uint32_t mark;
	uint32_t indev;		/* ifindex the packet came in on, 0 if none */
	uint32_t skbinfo;	/* NFQA_SKB_* flags */
	uint8_t *data;		/* the packet from its IP header; ours to rewrite
				   in place until its verdict is given */
	size_t caplen;		/* bytes in data */
	size_t wirelen;		/* whole packet length */
};

struct nfqueue_stats {
	uint64_t received, verdicts, enobufs, nl_errors, bad_msgs, send_errors;
	uint64_t large_verdicts;	/* packet verdicts sent without a copy */
};

struct nfqueue;

typedef void (*nfqueue_handler)(struct nfqueue *q, const struct nfqueue_packet *p, void *arg);

/* NULL with errno set on failure; the error is logged once here. */
struct nfqueue *nfqueue_open(uint16_t num, uint32_t copy_range, uint32_t maxlen, unsigned flags,
		     unsigned batch);
void nfqueue_close(struct nfqueue *q);

/*
 * Waits up to the receive timeout for packets, handles them and flushes the
 * verdicts.  Returns packets handled (0 on timeout), or -errno on a socket
 * error that is not recoverable.
 */
int nfqueue_recv(struct nfqueue *q, nfqueue_handler handler, void *arg);

void nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v);
void nfqueue_verdict_mark(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v, uint32_t mark);
/*
 * Replaces the packet with pkt (the whole packet, from the IP header) and
 * sets its mark.  pkt is copied: the caller may reuse its buffer at once.
 */
void nfqueue_verdict_pkt(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v,
			 const uint8_t *pkt, size_t len, uint32_t mark);
int nfqueue_flush(struct nfqueue *q);

/* Held packets: the caller says how many of its verdicts are outstanding. */
void nfqueue_set_held(struct nfqueue *q, size_t held);

const struct nfqueue_stats *nfqueue_get_stats(const struct nfqueue *q);
int nfqueue_fd(const struct nfqueue *q);
uint16_t nfqueue_num(const struct nfqueue *q);

#endif
