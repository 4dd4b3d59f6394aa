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

#include <stddef.h>
#include <stdint.h>

enum { INTEG_MAX_LEN = 2048 };

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

#endif
