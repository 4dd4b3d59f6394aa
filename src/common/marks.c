/*
 * marks.c - see marks.h.
 */
#include <errno.h>
#include <string.h>

#include "common/marks.h"

int marks_make(uint32_t mask, uint32_t ct_bit, struct marks *ret)
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
	if (bits < MARKS_MARK_BITS_MIN)
		return -EINVAL;
	*ret = (struct marks){
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

static void set_bit(uint32_t *w, unsigned b)
{
	w[b / 32] |= 1u << (b % 32);
}

static uint32_t get_bit(const uint32_t *w, unsigned b)
{
	return w[b / 32] >> (b % 32) & 1;
}

void marks_label_put(unsigned base, uint32_t shift, uint32_t ret_val[static MARKS_LABEL_WORDS],
		     uint32_t ret_mask[static MARKS_LABEL_WORDS])
{
	memset(ret_val, 0, MARKS_LABEL_WORDS * sizeof(*ret_val));
	memset(ret_mask, 0, MARKS_LABEL_WORDS * sizeof(*ret_mask));
	if (base > MARKS_CTLABEL_MAX)
		return;		/* the configuration's range: never past the words */
	for (unsigned i = 0; i < MARKS_LABEL_BITS; i++) {
		set_bit(ret_mask, base + i);
		/* Bit 0 is the flag; bit i > 0 is the shift's bit i - 1. */
		if (i == 0 || (shift >> (i - 1) & 1))
			set_bit(ret_val, base + i);
	}
}

bool marks_label_get(unsigned base, const uint32_t val[static MARKS_LABEL_WORDS],
		     uint32_t *ret_shift)
{
	uint32_t shift = 0;

	if (base > MARKS_CTLABEL_MAX || !get_bit(val, base))
		return false;
	for (unsigned i = 0; i < 32; i++)
		shift |= get_bit(val, base + 1 + i) << i;
	*ret_shift = shift;
	return true;
}
