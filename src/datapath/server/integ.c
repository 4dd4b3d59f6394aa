/*
 * integ.c - see integ.h.
 */
#include <string.h>

#include "datapath/server/integ.h"

void integ_init(struct integ_buf *b, uint32_t isn, uint16_t need)
{
	memset(b, 0, sizeof(*b));
	b->base = isn + 1;
	b->need = need > INTEG_MAX_LEN ? INTEG_MAX_LEN : need;
}

enum integ_status integ_add(struct integ_buf *b, uint32_t seq, const uint8_t *payload, size_t len)
{
	/*
	 * Offset of the segment's first byte from base, as a signed 32-bit
	 * distance so a segment that starts before base (a SYN-carrying
	 * retransmission cannot, but a confused peer might) is clipped.
	 */
	int64_t start = (int32_t)(seq - b->base);
	int64_t end = start + (int64_t)len;

	int64_t skip = 0;

	if (end <= 0 || start >= b->need)
		return b->have == b->need ? INTEG_COMPLETE : INTEG_MORE;
	if (start < 0) {
		skip = -start;
		start = 0;
	}
	if (end > b->need)
		end = b->need;
	for (int64_t i = start; i < end; i++) {
		size_t at = (size_t)i;
		uint8_t bit = (uint8_t)(1u << (at & 7));
		uint8_t byte = payload[skip + i - start];

		if (b->present[at >> 3] & bit) {
			if (b->data[at] != byte)
				return INTEG_CONFLICT;
			continue;
		}
		b->present[at >> 3] |= bit;
		b->data[at] = byte;
		b->have++;
	}
	return b->have == b->need ? INTEG_COMPLETE : INTEG_MORE;
}

bool integ_covers(const struct integ_buf *b, uint32_t seq)
{
	int64_t off = (int32_t)(seq - b->base);

	return off >= 0 && off < b->need;
}

bool integ_urgent_hits(const struct integ_buf *b, uint32_t seq, uint16_t urg_ptr)
{
	uint32_t at = seq + urg_ptr;

	return integ_covers(b, at) || (urg_ptr > 0 && integ_covers(b, at - 1));
}
