/*
 * seqrewrite.c - the client role's SYN rewriting and sequence translation.
 *
 * The knock ISN replaces the kernel's on the SYN, so from then on the two
 * ends disagree about where the client's sequence space starts by a fixed
 * delta.  Outgoing segments carry the kernel's numbers and must be shifted
 * forward; incoming segments acknowledge (and SACK) the shifted numbers and
 * must be shifted back before the kernel sees them.  Everything is modulo
 * 2^32 (RFC 9293 3.4), which unsigned arithmetic gives us for free.
 *
 * Only whole 32-bit words change, so the checksum is patched with RFC 1624
 * eqn. 3 instead of being recomputed over the payload.  The one's-complement
 * sum is byte-order independent (RFC 1071 2.(B)), so the words are fed to it
 * exactly as they lie in the packet (copied out with memcpy: the buffer may be
 * unaligned) and the checksum field is treated the same way.
 */
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "common/bytes.h"
#include "common/csum.h"
#include "datapath/client/seqrewrite.h"

enum {
	ICMP_CSUM_OFF = 2,
};

/* Swaps the two bytes of each 16-bit half. */
static uint32_t swab_halves(uint32_t x)
{
	return (x & 0x00ff00ff) << 8 | (x >> 8 & 0x00ff00ff);
}

/*
 * Stores val (host order) as the big-endian word at p and folds the change
 * into *check.  odd says p is an odd number of bytes into the TCP header:
 * seq and ack never are, but an option need not be 2-aligned (RFC 9293 3.1
 * lets options start anywhere: one NOP before the timestamps, a SACK after
 * them), and then each byte lands in the other half of a checksum word.
 * Swapping the bytes of the halves puts them back where the sum sees them
 * (RFC 1071 2.(B)).
 */
static void store32(uint8_t *p, uint32_t val, bool odd, uint16_t *check)
{
	uint32_t old_be, new_be = htonl(val);

	memcpy(&old_be, p, sizeof(old_be));
	memcpy(p, &new_be, sizeof(new_be));
	if (odd)
		*check = csum_replace32(*check, swab_halves(old_be), swab_halves(new_be));
	else
		*check = csum_replace32(*check, old_be, new_be);
}

/* Adds add (mod 2^32) to the word at p (see store32); returns the new value. */
static uint32_t shift32(uint8_t *p, uint32_t add, bool odd, uint16_t *check)
{
	uint32_t val = get_be32(p) + add;

	store32(p, val, odd, check);
	return val;
}

void seqrewrite_apply(uint8_t *buf, struct pkt_view *v, enum seq_dir dir, uint32_t delta,
		      bool fix_csum)
{
	uint8_t *tcp = buf + v->l4_off;
	uint16_t check;
	bool odd;
	uint8_t i;

	memcpy(&check, tcp + TCP_CSUM_OFF, sizeof(check));

	if (dir == SEQ_OUT) {
		v->seq = shift32(tcp + TCP_SEQ_OFF, delta, false, &check);
	} else {
		/*
		 * Without ACK the acknowledgment field carries no meaning and
		 * may hold anything (RFC 9293 3.1); leave it as the peer sent
		 * it, the checksum covers it either way.
		 */
		if (v->flags & TCP_ACK)
			v->ack = shift32(tcp + TCP_ACK_OFF, 0u - delta, false, &check);
		/*
		 * Both edges of every block name bytes of our (shifted) stream
		 * (RFC 2018 3).  A D-SACK first block (RFC 2883 4) may lie
		 * below the cumulative ACK, which changes nothing here: it is
		 * still a pair of our sequence numbers.
		 */
		odd = (v->sack_off - v->l4_off) % 2;
		for (i = 0; i < v->nsack; i++) {
			uint8_t *blk = buf + v->sack_off + (size_t)i * SACK_BLOCK_LEN;

			shift32(blk, 0u - delta, odd, &check);
			shift32(blk + 4, 0u - delta, odd, &check);
		}
	}

	if (fix_csum)
		memcpy(tcp + TCP_CSUM_OFF, &check, sizeof(check));
}

void seqrewrite_syn(uint8_t *buf, struct pkt_view *v, uint32_t isn, uint32_t tsval)
{
	uint8_t *tcp = buf + v->l4_off;
	uint16_t check;

	memcpy(&check, tcp + TCP_CSUM_OFF, sizeof(check));
	store32(tcp + TCP_SEQ_OFF, isn, false, &check);
	v->seq = isn;
	if (v->has_ts) {
		store32(buf + v->ts_off, tsval, (v->ts_off - v->l4_off) % 2, &check);
		v->tsval = tsval;
	}
	memcpy(tcp + TCP_CSUM_OFF, &check, sizeof(check));
}

static uint16_t swab16(uint16_t x)
{
	return (uint16_t)(x << 8 | x >> 8);
}

void seqrewrite_icmp(uint8_t *buf, struct icmperr_view *v, uint32_t delta)
{
	uint8_t *seq = buf + v->q_tcp_off + TCP_SEQ_OFF;
	uint8_t *icmp_csum = buf + v->icmp_off + ICMP_CSUM_OFF;
	/*
	 * The ICMP checksum counts its words from the ICMP header; the
	 * quoted headers keep every word even there in practice (8-byte
	 * ICMP header, IP headers of 4- or 8-byte multiples), but a word at
	 * an odd offset is handled as store32 handles options.
	 */
	bool odd = (v->q_tcp_off - v->icmp_off) % 2;
	uint32_t old_be, new_be;
	uint16_t icheck;

	memcpy(&icheck, icmp_csum, sizeof(icheck));
	memcpy(&old_be, seq, sizeof(old_be));
	v->seq -= delta;
	new_be = htonl(v->seq);
	memcpy(seq, &new_be, sizeof(new_be));
	icheck = odd ? csum_replace32(icheck, swab_halves(old_be), swab_halves(new_be))
		     : csum_replace32(icheck, old_be, new_be);
	if (icmperr_has_tcp_csum(v)) {
		/* seq and the checksum are both at even offsets of the TCP header. */
		uint8_t *tcsum = buf + v->q_tcp_off + TCP_CSUM_OFF;
		uint16_t told, tnew;

		memcpy(&told, tcsum, sizeof(told));
		tnew = csum_replace32(told, old_be, new_be);
		memcpy(tcsum, &tnew, sizeof(tnew));
		icheck = odd ? csum_replace16(icheck, swab16(told), swab16(tnew))
			     : csum_replace16(icheck, told, tnew);
	}
	memcpy(icmp_csum, &icheck, sizeof(icheck));
}
