/*
 * conf_validate.c - the cross-field checks of a loaded struct conf (conf.h).
 *
 * The loader checked every setting on its own (conf_schema.c); what is left
 * here involves more than one: duplicate names and entries, the keys an
 * entry names and their lengths in its mode, limits against each other, a
 * window in a mode that has none.  It looks at the struct alone and is pure,
 * as wireguard-tools' config_read_finish() is, so the unit tests drive it
 * without files.  It never reads past the fixed arrays, whatever the counts
 * of a struct built by hand say.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/isn.h"
#include "config/match.h"
#include "config/read/conf_validate.h"

struct vctx {
	const struct conf *c;
	struct conf_errors *errs;
	size_t n;
	const struct srcmap *map;	/* NULL: lines are the main file's */
};

static void verr(struct vctx *v, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void verr(struct vctx *v, int line, const char *fmt, ...)
{
	va_list ap;
	int f;
	int l = srcmap_line(v->map, line, &f);

	va_start(ap, fmt);
	conf_verror(v->errs, v->map ? v->map->src[f].path : v->c->path, l, fmt, ap);
	va_end(ap);
	v->n++;
}

/* "line N" when other is in the file the message names, else "FILE:N". */
static const char *first_at(const struct vctx *v, int line, int other, char *buf, size_t len)
{
	int f, of;
	int ol = srcmap_line(v->map, other, &of);

	srcmap_line(v->map, line, &f);
	if (f == of)
		snprintf(buf, len, "line %d", ol);
	else
		snprintf(buf, len, "%s:%d", v->map->src[of].path, ol);
	return buf;
}

/* A setting's line, or the entry's (or another setting's) when it was not written. */
static int at(int line, int fallback)
{
	return line > 0 ? line : fallback;
}

/* The counts index fixed arrays: a count past one is refused, and read no further. */
static size_t bounded(struct vctx *v, int line, size_t n, size_t max, const char *what)
{
	if (n <= max)
		return n;
	verr(v, line, "%zu %s; at most %zu", n, what, max);
	return max;
}

static void validate_globals(struct vctx *v)
{
	const struct conf *c = v->c;

	if (c->queue_count > 0 && (unsigned long)c->queue_num + c->queue_count - 1 > 65535)
		verr(v, at(c->lines[CL_QUEUE_COUNT], c->lines[CL_QUEUE_NUM]),
		     "queue.num %u + queue.count %u - 1 is above the last queue number 65535",
		     (unsigned)c->queue_num, (unsigned)c->queue_count);
	if (c->hold_flow_bytes > c->hold_bytes)
		verr(v, at(c->lines[CL_HOLD_FLOW_BYTES], c->lines[CL_HOLD_BYTES]),
		     "limits.hold_flow_bytes %u exceeds limits.hold_bytes %u",
		     (unsigned)c->hold_flow_bytes, (unsigned)c->hold_bytes);
	/*
	 * fail_open lets queued SYNs through while no daemon runs; a table
	 * that stays to hide the ports would then show them instead.
	 */
	if (c->fail_open && c->on_stop == ON_STOP_HIDE)
		verr(v, at(c->lines[CL_FAIL_OPEN], c->lines[CL_ON_STOP]),
		     "queue.fail_open = true lets protected ports open while no daemon runs; "
		     "it needs on_stop = \"open\"");
}

static void validate_keys(struct vctx *v, size_t nkeys)
{
	const struct conf *c = v->c;

	for (size_t i = 0; i < nkeys; i++) {
		const struct conf_key *k = &c->keys[i];

		if (k->broken)
			continue;
		for (size_t j = 0; j < i; j++) {
			if (!c->keys[j].broken && strcmp(c->keys[j].name, k->name) == 0) {
				char at1[PATH_MAX + 16];

				verr(v, k->line, "duplicate key name \"%s\" (first at %s)", k->name,
				     first_at(v, k->line, c->keys[j].line, at1, sizeof(at1)));
				break;
			}
		}
		if (k->len < 1 || k->len > KG_KEY_MAX)
			verr(v, k->line, "key \"%s\" is %zu bytes; keys are 1..%d bytes", k->name,
			     k->len, KG_KEY_MAX);
	}
}

/*
 * A key referenced by an entry must exist and suit the entry's mode.  Knock
 * mode takes any 1..64 byte key (validate_keys checks that); native mode
 * derives its subkeys from exactly 32 bytes.
 */
static void validate_key_ref(struct vctx *v, int line, const char *kind, int idx,
			     enum kg_mode mode, size_t nkeys)
{
	const struct conf_key *k;

	if (idx < 0 || (size_t)idx >= nkeys) {
		verr(v, line, "%s entry names key index %d, which does not exist", kind, idx);
		return;
	}
	k = &v->c->keys[idx];
	if (k->broken || k->len < 1 || k->len > KG_KEY_MAX)
		return;
	if (mode == KG_MODE_NATIVE && k->len != KG_NATIVE_KEY_LEN)
		verr(v, line, "key \"%s\" is %zu bytes; mode \"native\" needs exactly %d", k->name,
		     k->len, KG_NATIVE_KEY_LEN);
}

/* window only exists in native mode; in knock mode it would silently mean nothing. */
static void validate_window(struct vctx *v, int line, enum kg_mode mode, bool has_window)
{
	if (mode == KG_MODE_KNOCK && has_window)
		verr(v, line, "\"window\" applies only to mode \"native\"");
}

/* Two entries for one port that share an address: which keys apply would be a guess. */
static bool protect_overlap(const struct conf_protect *a, const struct conf_protect *b)
{
	/* A routed host is never one of this host's own addresses. */
	if (a->port != b->port || a->forward != b->forward)
		return false;
	if (a->naddrs == 0 || b->naddrs == 0)
		return true;
	for (size_t i = 0; i < a->naddrs && i < CONF_MAX_ADDRS; i++) {
		for (size_t j = 0; j < b->naddrs && j < CONF_MAX_ADDRS; j++) {
			if (prefix_overlap(&a->addrs[i], &b->addrs[j]))
				return true;
		}
	}
	return false;
}

/* Two of an entry's public destinations the same, the entry's port filled in. */
static void validate_public(struct vctx *v, const struct conf_protect *p)
{
	size_t n = bounded(v, p->line, p->npublic, CONF_MAX_PUBLIC,
			   "public destinations in a protect entry");

	for (size_t i = 0; i < n; i++) {
		struct dest a = p->pub[i].dst;

		if (!a.port)
			a.port = p->port;
		for (size_t j = 0; j < i; j++) {
			struct dest b = p->pub[j].dst;
			char d[INET6_ADDRSTRLEN + 16], at1[PATH_MAX + 16];
			int line = at(p->pub[i].line, p->line);

			if (!b.port)
				b.port = p->port;
			if (a.family != b.family || a.port != b.port ||
			    memcmp(a.addr, b.addr, a.family == AF_INET ? 4 : 16) != 0)
				continue;
			dest_format(&a, d, sizeof(d));
			verr(v, line, "public destination %s is listed twice (first at %s)", d,
			     first_at(v, line, at(p->pub[j].line, p->line), at1, sizeof(at1)));
			break;
		}
	}
}

static void validate_protect(struct vctx *v, size_t idx, size_t nkeys)
{
	const struct conf *c = v->c;
	const struct conf_protect *p = &c->protect[idx];
	int line_keys = at(p->lines[EL_KEYS], p->line);
	int line_ttl = at(p->lines[EL_REPLAY_TTL], p->line);
	unsigned long long min_ttl = (unsigned long long)CONF_NATIVE_REPLAY_WINDOWS * p->window;
	size_t nk = bounded(v, line_keys, p->nkeys, CONF_MAX_ENTRY_KEYS,
			    "keys in a protect entry");

	for (size_t i = 0; i < nk; i++) {
		validate_key_ref(v, line_keys, "protect", p->keys[i], p->mode, nkeys);
		for (size_t j = 0; j < i; j++) {
			if (p->keys[j] == p->keys[i] && p->keys[i] >= 0 &&
			    (size_t)p->keys[i] < nkeys) {
				verr(v, line_keys, "key \"%s\" is listed twice",
				     c->keys[p->keys[i]].name);
				break;
			}
		}
	}

	if (p->integrity_len > c->hold_flow_bytes)
		verr(v, at(p->lines[EL_INTEGRITY_LEN], p->line),
		     "integrity_len %u exceeds limits.hold_flow_bytes %u",
		     (unsigned)p->integrity_len, (unsigned)c->hold_flow_bytes);

	validate_window(v, at(p->lines[EL_WINDOW], p->line), p->mode, p->has_window);

	if (p->mode == KG_MODE_NATIVE && p->replay_ttl < min_ttl)
		verr(v, line_ttl, "replay_ttl %u is below 3 windows (%llu seconds) of mode \"native\"",
		     (unsigned)p->replay_ttl, min_ttl);

	bounded(v, p->line, p->naddrs, CONF_MAX_ADDRS, "addresses in a protect entry");
	validate_public(v, p);

	if (p->forward && p->naddrs == 0)
		verr(v, at(p->lines[EL_FORWARD], p->line),
		     "forward = true needs addresses: the hosts behind this one it protects");

	/* Refused SYNs are sent to refuse_port, which must answer as closed. */
	if (p->port == c->refuse_port)
		verr(v, at(p->lines[EL_PORT], p->line),
		     "port %u is rules.refuse_port, where refused SYNs are sent; "
		     "set rules.refuse_port to a port nobody listens on", (unsigned)p->port);

	for (size_t j = 0; j < idx; j++) {
		if (protect_overlap(&c->protect[j], p)) {
			char at1[PATH_MAX + 16];
			int line = at(p->lines[EL_PORT], p->line);

			verr(v, line, "duplicate protect entry for port %u (first at %s)",
			     (unsigned)p->port,
			     first_at(v, line, c->protect[j].line, at1, sizeof(at1)));
			break;
		}
	}
}

/*
 * A gateway knocks for hosts that cannot hand it their first bytes (that
 * is knock-connect's job, on the host itself), and a from list with no
 * prefix of dst's family would knock for nobody.
 */
static void validate_from(struct vctx *v, const struct conf_knock *k)
{
	size_t n = bounded(v, k->line, k->nfrom, CONF_MAX_FROM, "from prefixes in a knock entry");
	int line = at(k->lines[EL_FROM], k->line);
	bool family = false;

	if (k->nifaces && n == 0)
		verr(v, at(k->lines[EL_FROM_IFACES], k->line),
		     "from_interfaces needs from: it says where from's SYNs arrive");
	if (n == 0)
		return;
	if (k->integrity_len)
		verr(v, line, "from needs integrity_len 0: the hosts a gateway knocks for cannot "
			      "give it their first bytes");
	for (size_t i = 0; i < n; i++)
		family = family || k->from[i].family == k->dst.family;
	if (!family)
		verr(v, line, "from has no %s prefix, and dst is %s: the entry would knock for no "
			      "routed host",
		     k->dst.family == AF_INET ? "IPv4" : "IPv6",
		     k->dst.family == AF_INET ? "IPv4" : "IPv6");
}

static void validate_knock(struct vctx *v, size_t idx, size_t nkeys)
{
	const struct conf *c = v->c;
	const struct conf_knock *k = &c->knock[idx];

	validate_key_ref(v, at(k->lines[EL_KEY], k->line), "knock", k->key, k->mode, nkeys);
	validate_window(v, at(k->lines[EL_WINDOW], k->line), k->mode, k->has_window);
	validate_from(v, k);

	/*
	 * Only identical destinations are duplicates: a host inside a wider
	 * prefix is the usual "this host differs from its network" case.
	 */
	for (size_t j = 0; j < idx; j++) {
		const struct conf_knock *o = &c->knock[j];

		if (o->port == k->port && prefix_equal(&o->dst, &k->dst)) {
			char dst[INET6_ADDRSTRLEN + 4], at1[PATH_MAX + 16];
			int line = at(k->lines[EL_DST], k->line);

			prefix_format(&k->dst, dst, sizeof(dst));
			verr(v, line, "duplicate knock entry for %s port %u (first at %s)", dst,
			     (unsigned)k->port, first_at(v, line, o->line, at1, sizeof(at1)));
			break;
		}
	}
}

size_t conf_validate_map(const struct conf *c, struct conf_errors *errs,
			 const struct srcmap *map)
{
	struct vctx v = { c, errs, 0, map };
	size_t nkeys = bounded(&v, 0, c->nkeys, CONF_MAX_KEYS, "keys");
	size_t nprotect = bounded(&v, 0, c->nprotect, CONF_MAX_PROTECT, "protect entries");
	size_t nknock = bounded(&v, 0, c->nknock, CONF_MAX_KNOCK, "knock entries");

	validate_globals(&v);
	validate_keys(&v, nkeys);
	for (size_t i = 0; i < nprotect; i++)
		validate_protect(&v, i, nkeys);
	for (size_t i = 0; i < nknock; i++)
		validate_knock(&v, i, nkeys);
	return v.n;
}

size_t conf_validate(const struct conf *c, struct conf_errors *errs)
{
	return conf_validate_map(c, errs, NULL);
}
