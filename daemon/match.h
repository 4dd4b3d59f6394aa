/*
 * match.h - address prefixes and the per-packet lookups over a loaded
 * configuration: which protect entry a SYN to (dst, port) falls under, which
 * integrity entry covers a service's reply, which knock entry a connection
 * to (dst, port) uses.  Pure: no I/O, no logging, no allocation; the data
 * path calls these for every queued packet, the loader and conf_validate()
 * for the prefixes of a file.
 *
 * Addresses are network order, IPv4 in the first 4 bytes; families never
 * mix (an IPv4 prefix contains no IPv6 address, not even a mapped one).
 */
#ifndef KNOCKGW_MATCH_H
#define KNOCKGW_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conf;
struct conf_knock;

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
bool prefixes_overlap(const struct prefix *a, const struct prefix *b);
bool prefixes_equal(const struct prefix *a, const struct prefix *b);

/* "addr" for a host prefix, "addr/len" otherwise. */
void prefix_format(const struct prefix *p, char *buf, size_t buflen);

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
const struct conf_knock *conf_find_knock(const struct conf *c, int family, const uint8_t *dst,
					 uint16_t port);

/*
 * The knock entry for a connection from src, which this host routes, to
 * (dst, port): the most specific dst among the entries whose `from` holds
 * src; NULL when none (the SYN then goes as it came).
 */
const struct conf_knock *conf_find_knock_from(const struct conf *c, int family,
					      const uint8_t *src, const uint8_t *dst,
					      uint16_t port);

/* src is in one of k's `from` prefixes. */
bool knock_from_contains(const struct conf_knock *k, int family, const uint8_t *src);

#endif
