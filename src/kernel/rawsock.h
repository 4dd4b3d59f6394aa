/*
 * rawsock.h - sends the closed-port answers rst.c builds.
 *
 * One raw IPv4 socket (IPPROTO_RAW, header included) and one raw IPv6 socket
 * (IPV6_HDRINCL), opened at start (CAP_NET_RAW).  It also reads the sysctls
 * that shape the kernel's own RST (TTL, per-interface hop limit, flow label
 * policy), refreshed at most once a second, and keeps the random flow label
 * key.  The only module that opens raw sockets.
 */
#ifndef KNOCKGW_RAWSOCK_H
#define KNOCKGW_RAWSOCK_H

#include <stddef.h>
#include <stdint.h>

#include "common/pkt.h"

struct rawsock;

struct rawsock *rawsock_open(void);
void rawsock_close(struct rawsock *rs);

/*
 * Answers pkt (which arrived on interface indev; skbinfo as NFQUEUE gave it)
 * as a closed port would: 1 queued, 0 no answer due.  Answers go out in
 * batches (one sendmmsg per family): call rawsock_flush() after each batch
 * of packets, as the queue's verdicts are flushed.
 */
int rawsock_answer_closed(struct rawsock *rs, const uint8_t *pkt, const struct pkt_view *v,
			  uint32_t indev, uint32_t skbinfo, uint64_t now);

/* Sends what is queued; returns how many answers could not be sent. */
int rawsock_flush(struct rawsock *rs);

#endif
