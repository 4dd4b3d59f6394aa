/*
 * integ.h - reassembly of the first integrity_len bytes of a flow.
 *
 * Integrity mode covers payload bytes [ISN+1, ISN+1+N) of the client's
 * stream.  Segments may come split, reordered, retransmitted or overlapping;
 * integ_add() copies the part of each that falls in the window and reports
 * when all N bytes are present.  A retransmission that disagrees with bytes
 * already stored is a conflict (someone is injecting): the caller fails the
 * flow closed.  Pure: no I/O, no allocation; sequence arithmetic is modulo
 * 2^32 (RFC 9293 section 3.4).
 */
#ifndef KNOCKGW_INTEG_H
#define KNOCKGW_INTEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/isn.h"	/* INTEG_MAX_LEN */


struct integ_buf {
	uint32_t base;			/* ISN + 1 */
	uint16_t need;			/* N, 1..INTEG_MAX_LEN */
	uint16_t have;			/* distinct bytes present */
	uint8_t present[INTEG_MAX_LEN / 8];
	uint8_t data[INTEG_MAX_LEN];
};

enum integ_status {
	INTEG_MORE,		/* still missing bytes */
	INTEG_COMPLETE,		/* all N bytes present: verify data[0..N) */
	INTEG_CONFLICT,		/* a segment disagrees with stored bytes */
};

void integ_init(struct integ_buf *b, uint32_t isn, uint16_t need);
enum integ_status integ_add(struct integ_buf *b, uint32_t seq, const uint8_t *payload, size_t len);

/* Is sequence number seq one of the window's bytes? */
bool integ_covers(const struct integ_buf *b, uint32_t seq);

/*
 * Would the urgent pointer urg_ptr of a segment at seq (URG set) make the
 * receiver take a byte of the window out of the stream?  A receiver that
 * does not inline urgent data (Linux by default) removes the byte the
 * pointer designates, and the reader then gets one byte from past the
 * window in its place.  The pointer is read both ways a receiver may read
 * it: the byte before seq + urg_ptr (RFC 793's pointer to the byte after
 * the urgent data, which Linux and the BSDs follow) and the byte at
 * seq + urg_ptr (RFC 1122's, Linux with tcp_stdurg); with urg_ptr 0, Linux
 * takes the byte at seq.  The pointer is unsigned and counts from the
 * segment's own seq, so a segment that starts at or after the window's end
 * never reaches back into it (modulo 2^32 only from 64 KB before base).
 */
bool integ_urgent_hits(const struct integ_buf *b, uint32_t seq, uint16_t urg_ptr);

#endif
