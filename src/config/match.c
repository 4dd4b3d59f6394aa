/*
 * match.c - address prefixes and the per-packet lookups (match.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "config/conf.h"
#include "config/match.h"

static unsigned family_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

enum prefix_err prefix_read(const char *text, struct prefix *ret)
{
	char buf[INET6_ADDRSTRLEN];
	const char *slash = strchr(text, '/');
	size_t alen = slash ? (size_t)(slash - text) : strlen(text);
	struct prefix p;
	unsigned len, max;

	memset(&p, 0, sizeof(p));
	if (alen == 0 || alen >= sizeof(buf))
		return PREFIX_BAD_ADDR;
	memcpy(buf, text, alen);
	buf[alen] = '\0';
	if (inet_pton(AF_INET, buf, p.addr) == 1)
		p.family = AF_INET;
	else if (inet_pton(AF_INET6, buf, p.addr) == 1)
		p.family = AF_INET6;
	else
		return PREFIX_BAD_ADDR;
	max = family_bits(p.family);
	len = max;
	if (slash) {
		const char *d = slash + 1;

		/* Digits only: strtoul would take " 24", "+24" and "0x18". */
		if (*d == '\0' || strlen(d) > 3)
			return PREFIX_BAD_LEN;
		len = 0;
		for (; *d; d++) {
			if (*d < '0' || *d > '9')
				return PREFIX_BAD_LEN;
			len = len * 10 + (unsigned)(*d - '0');
		}
		if (len > max)
			return PREFIX_BAD_LEN;
	}
	p.len = (uint8_t)len;
	/*
	 * "192.0.2.10/24" means the /24, as nft and ip(8) read it; clearing the
	 * host bits makes equal prefixes compare equal.
	 */
	for (unsigned bit = len; bit < max; bit++)
		p.addr[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
	*ret = p;
	return PREFIX_OK;
}

int prefix_parse(const char *text, struct prefix *ret)
{
	return prefix_read(text, ret) == PREFIX_OK ? 0 : -EINVAL;
}

bool prefix_contains(const struct prefix *p, int family, const uint8_t *addr)
{
	unsigned full, rest;

	if (p->family != family || p->len > family_bits(family))
		return false;
	full = p->len / 8u;
	rest = p->len % 8u;
	if (memcmp(p->addr, addr, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xffu << (8 - rest));

		if ((p->addr[full] ^ addr[full]) & mask)
			return false;
	}
	return true;
}

bool prefix_overlap(const struct prefix *a, const struct prefix *b)
{
	if (a->family != b->family)
		return false;
	return a->len <= b->len ? prefix_contains(a, b->family, b->addr) :
				  prefix_contains(b, a->family, a->addr);
}

bool prefix_equal(const struct prefix *a, const struct prefix *b)
{
	return a->family == b->family && a->len == b->len &&
	       prefix_contains(a, b->family, b->addr);
}

void prefix_format(const struct prefix *p, char *buf, size_t buflen)
{
	char addr[INET6_ADDRSTRLEN];

	if (!inet_ntop(p->family == AF_INET ? AF_INET : AF_INET6, p->addr, addr, sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	if (p->len == family_bits(p->family))
		snprintf(buf, buflen, "%s", addr);
	else
		snprintf(buf, buflen, "%s/%u", addr, (unsigned)p->len);
}

/* 1 to 5 digits, 1..65535; 0 itself is its own error. */
static enum dest_err port_read(const char *d, uint16_t *ret)
{
	unsigned long v = 0;
	size_t n = strlen(d);

	if (n == 0 || n > 5)
		return DEST_BAD_PORT;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return DEST_BAD_PORT;
		v = v * 10 + (unsigned long)(*d - '0');
	}
	if (v > 65535)
		return DEST_BAD_PORT;
	if (v == 0)
		return DEST_PORT_ZERO;
	*ret = (uint16_t)v;
	return DEST_OK;
}

/* An IPv6 address only; IPv4-mapped ones are refused (no packet carries one). */
static enum dest_err v6_read(const char *text, size_t len, struct dest *d)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	char buf[INET6_ADDRSTRLEN];

	if (len == 0 || len >= sizeof(buf))
		return DEST_BAD_ADDR;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, d->addr) != 1)
		return inet_pton(AF_INET, buf, d->addr) == 1 ? DEST_BRACKETS_V4 : DEST_BAD_ADDR;
	if (memcmp(d->addr, mapped, sizeof(mapped)) == 0)
		return DEST_MAPPED;
	d->family = AF_INET6;
	return DEST_OK;
}

enum dest_err dest_read(const char *text, struct dest *ret)
{
	char buf[INET6_ADDRSTRLEN];
	const char *colon = strrchr(text, ':');
	struct dest d;
	struct prefix pfx;
	enum dest_err r;

	memset(&d, 0, sizeof(d));
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close)
			return DEST_BAD_ADDR;
		r = v6_read(text + 1, (size_t)(close - text - 1), &d);
		if (r != DEST_OK)
			return r;
		if (close[1] == '\0')
			return DEST_BRACKETS_ALONE;
		if (close[1] != ':')
			return DEST_BAD_ADDR;
		r = port_read(close + 2, &d.port);
	} else if (strchr(text, '/')) {
		return prefix_read(text, &pfx) == PREFIX_OK ? DEST_PREFIX : DEST_BAD_ADDR;
	} else if (inet_pton(AF_INET, text, d.addr) == 1) {
		d.family = AF_INET;
		r = DEST_OK;
	} else if (strchr(text, ':') && inet_pton(AF_INET6, text, buf) == 1) {
		r = v6_read(text, strlen(text), &d);
	} else if (colon && strchr(text, ':') == colon) {
		/* One colon: IPv4 and a port. */
		size_t alen = (size_t)(colon - text);

		if (alen == 0 || alen >= sizeof(buf))
			return DEST_BAD_ADDR;
		memcpy(buf, text, alen);
		buf[alen] = '\0';
		if (inet_pton(AF_INET, buf, d.addr) != 1)
			return DEST_BAD_ADDR;
		d.family = AF_INET;
		r = port_read(colon + 1, &d.port);
	} else {
		/* "2001:db8:0:0:0:0:0:1:22": an IPv6 address and a port, unbracketed. */
		uint16_t port;

		if (colon && port_read(colon + 1, &port) != DEST_BAD_PORT &&
		    v6_read(text, (size_t)(colon - text), &d) == DEST_OK)
			return DEST_V6_PORT;
		return DEST_BAD_ADDR;
	}
	if (r != DEST_OK)
		return r;
	*ret = d;
	return DEST_OK;
}

void dest_format(const struct dest *d, char *buf, size_t buflen)
{
	char addr[INET6_ADDRSTRLEN];

	if (!inet_ntop(d->family == AF_INET ? AF_INET : AF_INET6, d->addr, addr, sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	if (d->port)
		snprintf(buf, buflen, "%s port %u", addr, (unsigned)d->port);
	else
		snprintf(buf, buflen, "%s", addr);
}

/* No addresses: the entry covers every local address. */
static bool entry_covers(const struct conf_protect *e, int family, const uint8_t *addr)
{
	if (e->naddrs == 0)
		return true;
	for (size_t a = 0; a < e->naddrs && a < CONF_MAX_ADDRS; a++) {
		if (prefix_contains(&e->addrs[a], family, addr))
			return true;
	}
	return false;
}

int match_protect(const struct conf *c, int family, const uint8_t *dst, uint16_t dport)
{
	/* Forward entries first: theirs are named hosts, a local entry may be "all". */
	for (int fwd = 1; fwd >= 0; fwd--) {
		for (size_t i = 0; i < c->nprotect; i++) {
			const struct conf_protect *e = &c->protect[i];

			if (e->forward == fwd && e->port == dport && entry_covers(e, family, dst))
				return (int)i;
		}
	}
	return -1;
}

int match_reply(const struct conf *c, int family, const uint8_t *src, uint16_t sport)
{
	for (size_t i = 0; i < c->nprotect; i++) {
		const struct conf_protect *e = &c->protect[i];

		if (e->port == sport && e->integrity_len != 0 && entry_covers(e, family, src))
			return (int)i;
	}
	return -1;
}

bool match_from(const struct conf_knock *k, int family, const uint8_t *src)
{
	for (size_t i = 0; i < k->nfrom && i < CONF_MAX_FROM; i++)
		if (prefix_contains(&k->from[i], family, src))
			return true;
	return false;
}

/* src NULL: any entry (this host's own SYN); else one whose from has src. */
static const struct conf_knock *find_knock(const struct conf *c, int family, const uint8_t *src,
					   const uint8_t *dst, uint16_t port)
{
	const struct conf_knock *best = NULL;

	for (size_t i = 0; i < c->nknock; i++) {
		const struct conf_knock *k = &c->knock[i];

		if (k->port == port && prefix_contains(&k->dst, family, dst) &&
		    (!src || match_from(k, family, src)) &&
		    (!best || k->dst.len > best->dst.len))
			best = k;
	}
	return best;
}

const struct conf_knock *match_knock(const struct conf *c, int family, const uint8_t *dst,
				     uint16_t port)
{
	return find_knock(c, family, NULL, dst, port);
}

const struct conf_knock *match_knock_from(const struct conf *c, int family,
					  const uint8_t *src, const uint8_t *dst,
					  uint16_t port)
{
	return find_knock(c, family, src, dst, port);
}

size_t match_knock_dests(const struct conf_protect *e, int family, const uint8_t *dst,
			 uint16_t dport, struct dest ret[static MATCH_MAX_DESTS])
{
	size_t n = 0;

	ret[n] = (struct dest){ .family = family, .port = dport };
	memcpy(ret[n].addr, dst, family == AF_INET ? 4 : 16);
	n++;
	for (size_t i = 0; i < e->npublic && i < CONF_MAX_PUBLIC; i++) {
		ret[n] = e->pub[i].dst;
		if (ret[n].port == 0)
			ret[n].port = e->port;
		n++;
	}
	return n;
}
