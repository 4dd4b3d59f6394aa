/*
 * match.h - address prefixes and the per-packet lookups over a loaded
 * configuration: which protect entry a SYN to (dst, port) falls under, which
 * integrity entry covers a service's reply, which knock entry a connection
 * to (dst, port) uses, and which destinations a SYN's knock may have been
 * computed for (its own, and the entry's public ones a NAT outside this
 * host rewrote).  Pure: no I/O, no logging, no allocation; the data path
 * calls these for every queued packet, the loader and conf_validate() for
 * the prefixes and destinations of a file.
 *
 * Addresses are network order, IPv4 in the first 4 bytes; families never
 * mix in prefixes (an IPv4 prefix contains no IPv6 address, not even a
 * mapped one).  A public destination may be of the other family than the
 * SYN (a NAT64 in front of the host): the ISN says which family it covers.
 */
#ifndef KNOCKGW_MATCH_H
#define KNOCKGW_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conf;
struct conf_knock;
struct conf_protect;

/* An address or CIDR prefix; addr is network order, IPv4 in the first 4 bytes. */
struct prefix {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t len;		/* prefix length in bits */
};

enum prefix_err { PREFIX_OK, PREFIX_BAD_ADDR, PREFIX_BAD_LEN };

/*
 * Parses "addr" or "addr/len" (len: 1 to 3 digits, nothing else); the host
 * bits are cleared, so "192.0.2.10/24" is the /24.  *ret is written only on
 * PREFIX_OK; the two failures get different messages in a config.
 */
enum prefix_err prefix_read(const char *text, struct prefix *ret);

/* prefix_read() as 0 or -EINVAL. */
int prefix_parse(const char *text, struct prefix *ret);

bool prefix_contains(const struct prefix *p, int family, const uint8_t *addr);

/* Two prefixes share an address: the shorter one contains the other. */
bool prefix_overlap(const struct prefix *a, const struct prefix *b);
bool prefix_equal(const struct prefix *a, const struct prefix *b);

/* "addr" for a host prefix, "addr/len" otherwise. */
void prefix_format(const struct prefix *p, char *buf, size_t buflen);

/* A destination a client dials: one address and a port. */
struct dest {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network order, IPv4 in the first 4 bytes */
	uint16_t port;		/* host order; 0: not given */
};

enum {
	MATCH_MAX_PUBLIC = 16,			/* public destinations of a protect entry */
	MATCH_MAX_DESTS = 1 + MATCH_MAX_PUBLIC,	/* and the packet's own */
};

enum dest_err {
	DEST_OK,
	DEST_BAD_ADDR,		/* not "addr", "IPv4:port" or "[IPv6]:port" */
	DEST_PREFIX,		/* "addr/len": a prefix, not one address */
	DEST_BAD_PORT,		/* not 1 to 5 digits, or above 65535 */
	DEST_PORT_ZERO,
	DEST_V6_PORT,		/* "IPv6:port" without the brackets */
	DEST_BRACKETS_ALONE,	/* "[IPv6]" without a port */
	DEST_BRACKETS_V4,	/* "[IPv4]:port" */
	DEST_MAPPED,		/* an IPv4-mapped IPv6 address: no packet carries one */
};

/*
 * Parses "addr" (port 0), "IPv4:port" or "[IPv6]:port".  A bare IPv6
 * address is always an address ("2001:db8::1:22" is one), so a port after
 * an IPv6 address needs the brackets; text that is no address but would
 * be one without a trailing ":digits" is DEST_V6_PORT.  *ret is written
 * only on DEST_OK; each failure gets its own message in a config.
 */
enum dest_err dest_read(const char *text, struct dest *ret);

/* "addr port N" (port 0: "addr"), for messages. */
void dest_format(const struct dest *d, char *buf, size_t buflen);

/*
 * The protect entry (index into c->protect) for a segment to (dst, dport):
 * the first whose port matches and whose addresses contain dst (no
 * addresses: every local address), forward entries before the others (a
 * packet the rules queued for a routed host is that host's, even when a
 * local entry of the same port covers every address); -1 when none.
 * conf_validate() refuses overlapping entries of one kind.
 */
int match_protect(const struct conf *c, int family, const uint8_t *dst, uint16_t dport);

/*
 * The integrity entry (integrity_len > 0) that covers the service's side of
 * a flow, a segment from (src, sport); -1 when none.
 */
int match_reply(const struct conf *c, int family, const uint8_t *src, uint16_t sport);

/*
 * The knock entry for a connection to (dst, port): the most specific prefix
 * that contains dst, NULL when none.  The client role and the control socket
 * both ask this; their answers must agree.
 */
const struct conf_knock *match_knock(const struct conf *c, int family, const uint8_t *dst,
				     uint16_t port);

/*
 * The knock entry for a connection from src, which this host routes, to
 * (dst, port): the most specific dst among the entries whose `from` holds
 * src; NULL when none (the SYN then goes as it came).
 */
const struct conf_knock *match_knock_from(const struct conf *c, int family,
					  const uint8_t *src, const uint8_t *dst,
					  uint16_t port);

/* src is in one of k's `from` prefixes. */
bool match_from(const struct conf_knock *k, int family, const uint8_t *src);

/*
 * The destinations a SYN to (dst, dport) under protect entry e may carry a
 * knock for, in the order they are tried: the packet's own first, then each
 * of e's public destinations (one given without a port: the entry's port).
 * Returns how many were written to ret.
 */
size_t match_knock_dests(const struct conf_protect *e, int family, const uint8_t *dst,
			 uint16_t dport, struct dest ret[static MATCH_MAX_DESTS]);

#endif
