/*
 * marks.c - see marks.h.
 */
#include <errno.h>

#include "marks.h"

int kgw_marks_make(uint32_t mask, uint32_t ct_bit, struct kgw_marks *ret)
{
	unsigned shift = 0, bits = 0;

	if (mask == 0 || ct_bit == 0 || (ct_bit & (ct_bit - 1)) != 0)
		return -EINVAL;
	while (!(mask >> shift & 1))
		shift++;
	/* One run of bits: adding its lowest bit clears it all (or wraps). */
	if (((mask + (1u << shift)) & mask) != 0)
		return -EINVAL;
	for (uint32_t m = mask >> shift; m; m >>= 1)
		bits++;
	if (bits < KGW_MARK_BITS_MIN)
		return -EINVAL;
	*ret = (struct kgw_marks){
		.mask = mask,
		.integ = 1u << shift,
		.reply = 2u << shift,
		.invalid = 3u << shift,
		.noconn = 4u << shift,
		.accepted = 5u << shift,
		.newsyn = 6u << shift,
		.fwd = 7u << shift,
		.ct_integ = ct_bit,
	};
	return 0;
}
