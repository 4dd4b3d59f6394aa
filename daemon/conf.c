/*
 * conf.c - knockgw.conf: libconfig input to a plain struct conf (conf.h).
 *
 * Two passes, as in WireGuard's config.c and OpenBSD's parse.y: conf_load()
 * deals with the text (syntax, types, unknown names, key files, key names)
 * and stores only what fits; conf_validate() then looks at the struct alone
 * (ranges, duplicates, key lengths per mode) and is pure, so the unit tests
 * drive it without files.  Both report every problem they find as
 * "FILE:LINE: message" and any one of them rejects the file, because a
 * daemon that guesses what a broken config meant may open a port the admin
 * meant to keep closed.
 *
 * An entry that already failed to load is not stored (and a key that failed
 * is marked broken), so conf_validate() does not report the same mistake a
 * second time in other words.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <libconfig.h>
#include <sodium.h>

#include "conf.h"
#include "keys.h"
#include "verify.h"

enum {
	CONF_FILE_MAX = 1 << 20,	/* a config is text written by hand; all its files together */
	DEFAULT_WINDOW = 30,
	DEFAULT_REPLAY_TTL = 3600,	/* SPEC section 2: one hour in knock mode */
	NATIVE_REPLAY_WINDOWS = 3,	/* the server accepts epochs e-1, e, e+1 */
};

_Static_assert(sizeof(((struct conf *)0)->control_socket) ==
		       sizeof(((struct sockaddr_un *)0)->sun_path),
	       "control_socket must match sun_path");

/* Inclusive range of an integer setting; the schema in conf.h. */
struct range {
	long long min, max;
};

static const struct range r_queue_num = { 0, 65535 };
static const struct range r_queue_count = { 1, 16 };
static const struct range r_queue_maxlen = { 16, 1048576 };
static const struct range r_limit_entries = { 64, 4194304 };
static const struct range r_hold_bytes = { 4096, 1073741824 };
static const struct range r_hold_flow_bytes = { 1024, 1048576 };
static const struct range r_integrity_timeout = { 1, 300 };
static const struct range r_mark = { 1, 0xffffffffLL };
static const struct range r_guess_threshold = { 0, 1000000 };
static const struct range r_guess_window = { 1, 86400 };
static const struct range r_guess_penalty = { 0, 86400 };
static const struct range r_port = { 1, 65535 };
static const struct range r_integrity_len = { 0, 2048 };
static const struct range r_window = { 0, 86400 };
static const struct range r_replay_ttl = { 1, 604800 };

/* Shared by conf_load and conf_validate so both say the same thing. */
#define RANGE_FMT "%s %lld out of range %lld..%lld"
#define ENTRY_KEYS_FMT "protect entry names %zu keys; it needs 1..%d"
#define KEY_NAME_FMT "key name \"%s\" must be 1..32 characters of A-Z a-z 0-9 _ . -"
#define TABLE_FMT "table \"%s\" must be 1..32 characters of A-Z a-z 0-9 _"
#define SOCKET_LONG_FMT "control_socket \"%s\" does not fit the %zu bytes of sun_path"

/* ------------------------------------------------------------------ */
/* Errors */

static void verror(struct conf_errors *errs, const char *file, int line, const char *fmt,
		   va_list ap) __attribute__((format(printf, 4, 0)));

static void verror(struct conf_errors *errs, const char *file, int line, const char *fmt,
		   va_list ap)
{
	char *out;
	int off;

	if (errs->n >= CONF_MAX_ERRORS) {
		errs->overflow = true;
		return;
	}
	out = errs->msg[errs->n++];
	if (!file)
		file = "(config)";
	if (line > 0)
		off = snprintf(out, CONF_ERR_LEN, "%s:%d: ", file, line);
	else
		off = snprintf(out, CONF_ERR_LEN, "%s: ", file);
	if (off >= 0 && off < CONF_ERR_LEN)
		vsnprintf(out + off, CONF_ERR_LEN - (size_t)off, fmt, ap);
	/* One error, one line: quoted user strings may hold anything. */
	for (char *p = out; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	}
}

void conf_error(struct conf_errors *errs, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(errs, file, line, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* Small pure helpers */

static bool is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* 1..max characters, each alphanumeric or in extra; ASCII only, whatever the locale. */
static bool name_ok(const char *s, size_t max, const char *extra)
{
	size_t n = strnlen(s, max + 1);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_alnum(s[i]) && !strchr(extra, s[i]))
			return false;
	}
	return true;
}

static unsigned family_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

enum prefix_err { PREFIX_OK, PREFIX_BAD_ADDR, PREFIX_BAD_LEN };

static enum prefix_err parse_prefix(const char *text, struct prefix *ret)
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
	return parse_prefix(text, ret) == PREFIX_OK ? 0 : -EINVAL;
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

/* Two prefixes share an address when the shorter one contains the other. */
static bool prefixes_overlap(const struct prefix *a, const struct prefix *b)
{
	if (a->family != b->family)
		return false;
	return a->len <= b->len ? prefix_contains(a, b->family, b->addr) :
				  prefix_contains(b, a->family, a->addr);
}

static bool prefixes_equal(const struct prefix *a, const struct prefix *b)
{
	return a->family == b->family && a->len == b->len &&
	       prefix_contains(a, b->family, b->addr);
}

static void prefix_format(const struct prefix *p, char *buf, size_t buflen)
{
	char addr[INET6_ADDRSTRLEN];

	if (!inet_ntop(p->family == AF_INET ? AF_INET : AF_INET6, p->addr, addr, sizeof(addr)))
		snprintf(addr, sizeof(addr), "?");
	if (p->len == family_bits(p->family))
		snprintf(buf, buflen, "%s", addr);
	else
		snprintf(buf, buflen, "%s/%u", addr, (unsigned)p->len);
}

const char *kg_mode_name(enum kg_mode m)
{
	switch (m) {
	case KG_MODE_KNOCK:
		return "knock";
	case KG_MODE_NATIVE:
		return "native";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* Defaults */

void conf_defaults(struct conf *c)
{
	memset(c, 0, sizeof(*c));
	c->queue_num = 0;
	c->queue_count = 1;
	c->fail_open = false;
	c->queue_maxlen = 4096;
	c->rules_manage = true;
	c->mark_mask = KGW_MARK_MASK_DEFAULT;
	c->ct_mark_bit = KGW_CTMARK_DEFAULT;
	kgw_marks_make(c->mark_mask, c->ct_mark_bit, &c->marks);
	snprintf(c->table, sizeof(c->table), "knockgw");
	c->log_level = LOG_INFO;
	c->translate = TRANSLATE_KERNEL;
	c->closed_ports = CLOSED_KERNEL;
	snprintf(c->control_socket, sizeof(c->control_socket), "/run/knockgw/control.sock");
	c->max_flows = 65536;
	c->max_replay = 65536;
	c->hold_bytes = 4194304;
	c->hold_flow_bytes = 65536;
	c->integrity_timeout = 10;
	c->guess_threshold = 100;
	c->guess_window = 60;
	c->guess_penalty = 0;
}

void conf_free(struct conf *c)
{
	keyring_free(&c->keyring);
	/* The lengths say nothing secret, but a freed config must not look loaded. */
	c->nkeys = 0;
	c->nprotect = 0;
	c->nknock = 0;
}

/* ------------------------------------------------------------------ */
/* Where a line came from */

/*
 * libconfig parses one text, the main file with every @include replaced by
 * the file it names; these say which file and line each of its lines came
 * from, so that messages name the file an administrator has to edit.
 */
struct source {
	char path[PATH_MAX];	/* as messages name it; its includes resolve against its directory */
	struct stat st;		/* of the text that was read: the rules are checked on it */
	int parent;		/* the including file; -1 for the main one */
	bool secret_checked;	/* a text secret in it was held to the key file rule */
};

/* From line first of the joined text on, the lines are file's, starting at line. */
struct segment {
	int first;
	int file;
	int line;
};

struct srcmap {
	size_t nsrc;
	struct source src[CONF_MAX_INCLUDES + 1];
	size_t nseg;
	struct segment seg[2 * CONF_MAX_INCLUDES + 1];
	size_t total;		/* bytes read from every file */
	char *out;		/* the joined text, NUL-terminated */
	size_t len, cap;
	int out_line;		/* the line out's end is on */
};

/* The file (index into map->src) and line a line of the joined text came from. */
static int map_line(const struct srcmap *m, int line, int *ret_file)
{
	size_t i;

	*ret_file = 0;
	if (!m || m->nseg == 0 || line <= 0)
		return line;
	for (i = m->nseg - 1; i > 0 && m->seg[i].first > line; i--)
		;
	*ret_file = m->seg[i].file;
	return m->seg[i].line + (line - m->seg[i].first);
}

/* ------------------------------------------------------------------ */
/* conf_validate: pure checks on the struct */

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
	int l = map_line(v->map, line, &f);

	va_start(ap, fmt);
	verror(v->errs, v->map ? v->map->src[f].path : v->c->path, l, fmt, ap);
	va_end(ap);
	v->n++;
}

/* "line N" when other is in the file the message names, else "FILE:N". */
static const char *first_at(const struct vctx *v, int line, int other, char *buf, size_t len)
{
	int f, of;
	int ol = map_line(v->map, other, &of);

	map_line(v->map, line, &f);
	if (f == of)
		snprintf(buf, len, "line %d", ol);
	else
		snprintf(buf, len, "%s:%d", v->map->src[of].path, ol);
	return buf;
}

static int at(int line, int fallback)
{
	return line > 0 ? line : fallback;
}

static bool vrange(struct vctx *v, int line, const char *what, long long val, struct range r)
{
	if (val >= r.min && val <= r.max)
		return true;
	verr(v, line, RANGE_FMT, what, val, r.min, r.max);
	return false;
}

static void validate_globals(struct vctx *v)
{
	const struct conf *c = v->c;
	size_t sock_len = strnlen(c->control_socket, sizeof(c->control_socket));

	vrange(v, c->line_queue_num, "queue.num", c->queue_num, r_queue_num);
	if (vrange(v, c->line_queue_count, "queue.count", c->queue_count, r_queue_count) &&
	    (unsigned long)c->queue_num + c->queue_count - 1 > 65535)
		verr(v, at(c->line_queue_count, c->line_queue_num),
		     "queue.num %u + queue.count %u - 1 is above the last queue number 65535",
		     (unsigned)c->queue_num, (unsigned)c->queue_count);
	vrange(v, c->line_queue_maxlen, "queue.maxlen", c->queue_maxlen, r_queue_maxlen);

	if (!name_ok(c->table, CONF_NAME_MAX - 1, "_"))
		verr(v, c->line_table, TABLE_FMT, c->table);
	{
		struct kgw_marks mk;

		if (kgw_marks_make(c->mark_mask, KGW_CTMARK_DEFAULT, &mk) < 0)
			verr(v, c->line_mark_mask,
			     "rules.mark_mask 0x%08x must be one run of at least %d bits",
			     (unsigned)c->mark_mask, KGW_MARK_BITS_MIN);
		if (kgw_marks_make(KGW_MARK_MASK_DEFAULT, c->ct_mark_bit, &mk) < 0)
			verr(v, c->line_ct_mark_bit, "rules.ct_mark_bit 0x%08x must be exactly one bit",
			     (unsigned)c->ct_mark_bit);
	}

	if (sock_len == sizeof(c->control_socket))
		verr(v, c->line_control_socket, SOCKET_LONG_FMT, "...", sizeof(c->control_socket));
	else if (c->control_socket[0] != '/')
		verr(v, c->line_control_socket, "control_socket \"%s\" must be an absolute path",
		     c->control_socket);

	vrange(v, c->line_flows, "limits.flows", c->max_flows, r_limit_entries);
	vrange(v, c->line_replay, "limits.replay", c->max_replay, r_limit_entries);
	vrange(v, c->line_integrity_timeout, "limits.integrity_timeout", c->integrity_timeout,
	       r_integrity_timeout);
	if (vrange(v, c->line_hold_bytes, "limits.hold_bytes", c->hold_bytes, r_hold_bytes) &&
	    vrange(v, c->line_hold_flow_bytes, "limits.hold_flow_bytes", c->hold_flow_bytes,
		   r_hold_flow_bytes) &&
	    c->hold_flow_bytes > c->hold_bytes)
		verr(v, at(c->line_hold_flow_bytes, c->line_hold_bytes),
		     "limits.hold_flow_bytes %u exceeds limits.hold_bytes %u",
		     (unsigned)c->hold_flow_bytes, (unsigned)c->hold_bytes);
}

static void validate_keys(struct vctx *v, size_t nkeys)
{
	const struct conf *c = v->c;

	for (size_t i = 0; i < nkeys; i++) {
		const struct conf_key *k = &c->keys[i];

		if (k->broken)
			continue;
		if (!name_ok(k->name, CONF_NAME_MAX - 1, "_.-")) {
			verr(v, k->line, KEY_NAME_FMT, k->name);
			continue;
		}
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
 * derives its subkeys from exactly 32 bytes (SPEC section 2).
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
static void validate_window(struct vctx *v, int line, enum kg_mode mode, bool has_window,
			    uint32_t window)
{
	if (mode == KG_MODE_KNOCK) {
		if (has_window)
			verr(v, line, "\"window\" applies only to mode \"native\"");
		return;
	}
	vrange(v, line, "window", window, r_window);
}

/* Two entries for one port that share an address: which keys apply would be a guess. */
static bool protect_overlap(const struct conf_protect *a, const struct conf_protect *b)
{
	if (a->port != b->port)
		return false;
	if (a->naddrs == 0 || b->naddrs == 0)
		return true;
	for (size_t i = 0; i < a->naddrs && i < CONF_MAX_ADDRS; i++) {
		for (size_t j = 0; j < b->naddrs && j < CONF_MAX_ADDRS; j++) {
			if (prefixes_overlap(&a->addrs[i], &b->addrs[j]))
				return true;
		}
	}
	return false;
}

static void validate_protect(struct vctx *v, size_t idx, size_t nkeys)
{
	const struct conf *c = v->c;
	const struct conf_protect *p = &c->protect[idx];
	int line_keys = at(p->line_keys, p->line);
	size_t nk = p->nkeys;

	vrange(v, at(p->line_port, p->line), "port", p->port, r_port);

	if (nk < 1 || nk > CONF_MAX_ENTRY_KEYS) {
		verr(v, line_keys, ENTRY_KEYS_FMT, nk, CONF_MAX_ENTRY_KEYS);
		if (nk > CONF_MAX_ENTRY_KEYS)
			nk = CONF_MAX_ENTRY_KEYS;
	}
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

	if (vrange(v, at(p->line_integrity_len, p->line), "integrity_len", p->integrity_len,
		   r_integrity_len) &&
	    p->integrity_len > c->hold_flow_bytes)
		verr(v, at(p->line_integrity_len, p->line),
		     "integrity_len %u exceeds limits.hold_flow_bytes %u",
		     (unsigned)p->integrity_len, (unsigned)c->hold_flow_bytes);

	validate_window(v, at(p->line_window, p->line), p->mode, p->has_window, p->window);

	if (vrange(v, at(p->line_replay_ttl, p->line), "replay_ttl", p->replay_ttl, r_replay_ttl) &&
	    p->mode == KG_MODE_NATIVE && p->window <= (uint32_t)r_window.max &&
	    p->replay_ttl < NATIVE_REPLAY_WINDOWS * p->window)
		verr(v, at(p->line_replay_ttl, p->line),
		     "replay_ttl %u is below 3 windows (%u seconds) of mode \"native\"",
		     (unsigned)p->replay_ttl, (unsigned)(NATIVE_REPLAY_WINDOWS * p->window));

	if (p->naddrs > CONF_MAX_ADDRS)
		verr(v, p->line, "protect entry has %zu addresses; at most %d", p->naddrs,
		     CONF_MAX_ADDRS);

	for (size_t j = 0; j < idx; j++) {
		if (protect_overlap(&c->protect[j], p)) {
			char at1[PATH_MAX + 16];
			int line = at(p->line_port, p->line);

			verr(v, line, "duplicate protect entry for port %u (first at %s)",
			     (unsigned)p->port,
			     first_at(v, line, c->protect[j].line, at1, sizeof(at1)));
			break;
		}
	}
}

static void validate_knock(struct vctx *v, size_t idx, size_t nkeys)
{
	const struct conf *c = v->c;
	const struct conf_knock *k = &c->knock[idx];

	vrange(v, at(k->line_port, k->line), "port", k->port, r_port);
	validate_key_ref(v, at(k->line_key, k->line), "knock", k->key, k->mode, nkeys);
	vrange(v, at(k->line_integrity_len, k->line), "integrity_len", k->integrity_len,
	       r_integrity_len);
	validate_window(v, at(k->line_window, k->line), k->mode, k->has_window, k->window);

	/*
	 * Only identical destinations are duplicates: a host inside a wider
	 * prefix is the usual "this host differs from its network" case.
	 */
	for (size_t j = 0; j < idx; j++) {
		const struct conf_knock *o = &c->knock[j];

		if (o->port == k->port && prefixes_equal(&o->dst, &k->dst)) {
			char dst[INET6_ADDRSTRLEN + 4], at1[PATH_MAX + 16];
			int line = at(k->line_dst, k->line);

			prefix_format(&k->dst, dst, sizeof(dst));
			verr(v, line, "duplicate knock entry for %s port %u (first at %s)", dst,
			     (unsigned)k->port, first_at(v, line, o->line, at1, sizeof(at1)));
			break;
		}
	}
}

static size_t validate(const struct conf *c, struct conf_errors *errs, const struct srcmap *map)
{
	struct vctx v = { c, errs, 0, map };
	size_t nkeys = c->nkeys, nprotect = c->nprotect, nknock = c->nknock;

	/* The counts index fixed arrays; a struct built by hand may lie. */
	if (nkeys > CONF_MAX_KEYS) {
		verr(&v, 0, "%zu keys; at most %d", nkeys, CONF_MAX_KEYS);
		nkeys = CONF_MAX_KEYS;
	}
	if (nprotect > CONF_MAX_PROTECT) {
		verr(&v, 0, "%zu protect entries; at most %d", nprotect, CONF_MAX_PROTECT);
		nprotect = CONF_MAX_PROTECT;
	}
	if (nknock > CONF_MAX_KNOCK) {
		verr(&v, 0, "%zu knock entries; at most %d", nknock, CONF_MAX_KNOCK);
		nknock = CONF_MAX_KNOCK;
	}

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
	return validate(c, errs, NULL);
}

/* ------------------------------------------------------------------ */
/* conf_load: libconfig to struct */

struct loader {
	struct conf *c;
	struct conf_errors *errs;
	size_t nerr;		/* errors reported, including those past CONF_MAX_ERRORS */
	struct srcmap *map;
};

/* The line of the joined text; the struct keeps these until remap_lines(). */
static int setting_line(const config_setting_t *s)
{
	return (int)config_setting_source_line(s);
}

/* Where a setting's messages point: the file it was written in. */
static const char *setting_file(const struct loader *ld, const config_setting_t *s)
{
	int f;

	map_line(ld->map, setting_line(s), &f);
	return ld->map->src[f].path;
}

static void lerr(struct loader *ld, const config_setting_t *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void lerr(struct loader *ld, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;

	int f;
	int line = map_line(ld->map, setting_line(s), &f);

	va_start(ap, fmt);
	verror(ld->errs, ld->map->src[f].path, line, fmt, ap);
	va_end(ap);
	ld->nerr++;
}

/* Names settings in messages: "queue.count", "protect.port", "log_level". */
struct scope {
	const char *name;	/* NULL at the top level */
	bool entry;		/* a list element: range messages use the bare name */
};

static void type_error(struct loader *ld, const config_setting_t *s, const struct scope *sc,
		       const char *name, const char *want)
{
	if (sc->name)
		lerr(ld, s, "\"%s.%s\" must be %s", sc->name, name, want);
	else
		lerr(ld, s, "\"%s\" must be %s", name, want);
}

static void check_unknown(struct loader *ld, const config_setting_t *group,
			  const char *const *names, const char *where)
{
	int n = config_setting_length(group);

	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
		const char *name = s ? config_setting_name(s) : NULL;
		bool known = false;

		if (!name)
			continue;
		for (const char *const *k = names; *k; k++) {
			if (strcmp(*k, name) == 0) {
				known = true;
				break;
			}
		}
		if (known)
			continue;
		if (where)
			lerr(ld, s, "unknown setting \"%s\" in %s", name, where);
		else
			lerr(ld, s, "unknown setting \"%s\"", name);
	}
}

enum got { GOT_NONE, GOT_OK, GOT_BAD };

static enum got get_int(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			const char *name, struct range r, long long *ret, int *ret_line)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	long long v;

	if (!s)
		return GOT_NONE;
	if (config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64) {
		type_error(ld, s, sc, name, "an integer");
		return GOT_BAD;
	}
	v = config_setting_get_int64(s);
	if (v < r.min || v > r.max) {
		char what[64];

		if (sc->name && !sc->entry)
			snprintf(what, sizeof(what), "%s.%s", sc->name, name);
		else
			snprintf(what, sizeof(what), "%s", name);
		lerr(ld, s, RANGE_FMT, what, v, r.min, r.max);
		return GOT_BAD;
	}
	*ret = v;
	*ret_line = setting_line(s);
	return GOT_OK;
}

static enum got get_bool(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			 const char *name, bool *ret)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	if (!s)
		return GOT_NONE;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		type_error(ld, s, sc, name, "a boolean (true or false)");
		return GOT_BAD;
	}
	*ret = config_setting_get_bool(s) != 0;
	return GOT_OK;
}

static enum got get_string(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			   const char *name, const char **ret, config_setting_t **ret_s)
{
	config_setting_t *s = config_setting_get_member(g, name);

	if (!s)
		return GOT_NONE;
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		type_error(ld, s, sc, name, "a string");
		return GOT_BAD;
	}
	*ret = config_setting_get_string(s);
	*ret_s = s;
	return GOT_OK;
}

/* [ "a", "b" ] (libconfig array) or ( "a", "b" ) (list) of strings. */
static enum got get_strings(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			    const char *name, const config_setting_t **ret_s)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	bool ok;

	if (!s)
		return GOT_NONE;
	ok = config_setting_type(s) == CONFIG_TYPE_ARRAY ||
	     config_setting_type(s) == CONFIG_TYPE_LIST;
	for (int i = 0; ok && i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		ok = e && config_setting_type(e) == CONFIG_TYPE_STRING;
	}
	if (!ok) {
		type_error(ld, s, sc, name, "an array of strings");
		return GOT_BAD;
	}
	*ret_s = s;
	return GOT_OK;
}

static const config_setting_t *get_group(struct loader *ld, const config_setting_t *g,
					 const char *name)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	static const struct scope top = { NULL, false };

	if (s && !config_setting_is_group(s)) {
		type_error(ld, s, &top, name, "a group { ... }");
		return NULL;
	}
	return s;
}

/* A list of groups; an empty [] is taken as the empty list it looks like. */
static const config_setting_t *get_list(struct loader *ld, const config_setting_t *g,
					const char *name, int max)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	static const struct scope top = { NULL, false };

	if (!s)
		return NULL;
	if (!config_setting_is_list(s) &&
	    !(config_setting_is_array(s) && config_setting_length(s) == 0)) {
		type_error(ld, s, &top, name, "a list ( { ... }, ... )");
		return NULL;
	}
	if (config_setting_length(s) > max)
		lerr(ld, s, "\"%s\" has %d entries; at most %d are read", name,
		     config_setting_length(s), max);
	return s;
}

struct word {
	const char *name;
	int value;
};

static const struct word mode_words[] = {
	{ "knock", KG_MODE_KNOCK }, { "native", KG_MODE_NATIVE }, { NULL, 0 },
};
static const struct word on_fail_words[] = {
	{ "reset", ON_FAIL_RESET }, { "drop", ON_FAIL_DROP }, { NULL, 0 },
};
static const struct word translate_words[] = {
	{ "kernel", TRANSLATE_KERNEL }, { "user", TRANSLATE_USER }, { NULL, 0 },
};
static const struct word closed_words[] = {
	{ "kernel", CLOSED_KERNEL }, { "daemon", CLOSED_DAEMON }, { NULL, 0 },
};
static const struct word log_words[] = {
	{ "debug", LOG_DEBUG }, { "info", LOG_INFO }, { "notice", LOG_NOTICE },
	{ "warning", LOG_WARNING }, { "error", LOG_ERR }, { NULL, 0 },
};

/* A string setting that must be one of words; GOT_OK stores its value. */
static enum got get_word(struct loader *ld, const config_setting_t *g, const struct scope *sc,
			 const char *name, const struct word *words, int *ret)
{
	config_setting_t *s;
	const char *str;
	char choices[128];
	size_t off = 0;
	enum got got = get_string(ld, g, sc, name, &str, &s);

	if (got != GOT_OK)
		return got;
	for (const struct word *w = words; w->name; w++) {
		if (strcmp(w->name, str) == 0) {
			*ret = w->value;
			return GOT_OK;
		}
	}
	choices[0] = '\0';
	for (const struct word *w = words; w->name && off < sizeof(choices); w++) {
		int r = snprintf(choices + off, sizeof(choices) - off, "%s\"%s\"",
				 w == words ? "" : (w[1].name ? ", " : " or "), w->name);

		if (r < 0)
			break;
		off += (size_t)r;
	}
	lerr(ld, s, "unknown %s \"%s\" (use %s)", name, str, choices);
	return GOT_BAD;
}

/* Relative key paths are relative to the file that names them, not to the cwd. */
static int resolve_path(char out[static PATH_MAX], const char *base, const char *p)
{
	const char *slash = strrchr(base, '/');
	int r;

	if (p[0] == '/' || !slash)
		r = snprintf(out, PATH_MAX, "%s", p);
	else
		r = snprintf(out, PATH_MAX, "%.*s/%s", (int)(slash - base), base, p);
	return r < 0 || r >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static int find_key(const struct conf *c, const char *name)
{
	if (!*name)
		return -1;
	for (size_t i = 0; i < c->nkeys; i++) {
		if (strcmp(c->keys[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}

static void load_globals(struct loader *ld, const config_setting_t *root)
{
	static const char *const queue_names[] = { "num", "count", "fail_open", "maxlen", NULL };
	static const char *const rules_names[] = { "manage", "table", "mark_mask", "ct_mark_bit",
						   NULL };
	static const char *const limits_names[] = { "flows", "replay", "hold_bytes",
						    "hold_flow_bytes", "integrity_timeout", NULL };
	static const char *const guessing_names[] = { "threshold", "window", "penalty", NULL };
	static const struct scope top = { NULL, false }, queue = { "queue", false },
				  rules = { "rules", false }, limits = { "limits", false },
				  guessing = { "guessing", false };
	struct conf *c = ld->c;
	const config_setting_t *g;
	config_setting_t *s;
	const char *str;
	long long v;
	int iv;

	g = get_group(ld, root, "queue");
	if (g) {
		check_unknown(ld, g, queue_names, "queue");
		if (get_int(ld, g, &queue, "num", r_queue_num, &v, &c->line_queue_num) == GOT_OK)
			c->queue_num = (uint16_t)v;
		if (get_int(ld, g, &queue, "count", r_queue_count, &v, &c->line_queue_count) ==
		    GOT_OK)
			c->queue_count = (uint16_t)v;
		get_bool(ld, g, &queue, "fail_open", &c->fail_open);
		if (get_int(ld, g, &queue, "maxlen", r_queue_maxlen, &v, &c->line_queue_maxlen) ==
		    GOT_OK)
			c->queue_maxlen = (uint32_t)v;
	}

	g = get_group(ld, root, "rules");
	if (g) {
		check_unknown(ld, g, rules_names, "rules");
		get_bool(ld, g, &rules, "manage", &c->rules_manage);
		if (get_int(ld, g, &rules, "mark_mask", r_mark, &v, &c->line_mark_mask) == GOT_OK)
			c->mark_mask = (uint32_t)v;
		if (get_int(ld, g, &rules, "ct_mark_bit", r_mark, &v, &c->line_ct_mark_bit) ==
		    GOT_OK)
			c->ct_mark_bit = (uint32_t)v;
		if (get_string(ld, g, &rules, "table", &str, &s) == GOT_OK) {
			/* Only what does not fit is refused here; conf_validate checks the rest. */
			if (strlen(str) >= sizeof(c->table)) {
				lerr(ld, s, TABLE_FMT, str);
			} else {
				snprintf(c->table, sizeof(c->table), "%s", str);
				c->line_table = setting_line(s);
			}
		}
	}

	if (get_word(ld, root, &top, "log_level", log_words, &iv) == GOT_OK)
		c->log_level = iv;
	if (get_word(ld, root, &top, "translate", translate_words, &iv) == GOT_OK)
		c->translate = (enum translate)iv;
	if (get_word(ld, root, &top, "closed_ports", closed_words, &iv) == GOT_OK)
		c->closed_ports = (enum closed_ports)iv;

	if (get_string(ld, root, &top, "control_socket", &str, &s) == GOT_OK) {
		if (strlen(str) >= sizeof(c->control_socket)) {
			lerr(ld, s, SOCKET_LONG_FMT, str, sizeof(c->control_socket));
		} else {
			snprintf(c->control_socket, sizeof(c->control_socket), "%s", str);
			c->line_control_socket = setting_line(s);
		}
	}

	g = get_group(ld, root, "limits");
	if (g) {
		check_unknown(ld, g, limits_names, "limits");
		if (get_int(ld, g, &limits, "flows", r_limit_entries, &v, &c->line_flows) == GOT_OK)
			c->max_flows = (uint32_t)v;
		if (get_int(ld, g, &limits, "replay", r_limit_entries, &v, &c->line_replay) ==
		    GOT_OK)
			c->max_replay = (uint32_t)v;
		if (get_int(ld, g, &limits, "hold_bytes", r_hold_bytes, &v, &c->line_hold_bytes) ==
		    GOT_OK)
			c->hold_bytes = (uint32_t)v;
		if (get_int(ld, g, &limits, "hold_flow_bytes", r_hold_flow_bytes, &v,
			    &c->line_hold_flow_bytes) == GOT_OK)
			c->hold_flow_bytes = (uint32_t)v;
		if (get_int(ld, g, &limits, "integrity_timeout", r_integrity_timeout, &v,
			    &c->line_integrity_timeout) == GOT_OK)
			c->integrity_timeout = (uint32_t)v;
	}

	g = get_group(ld, root, "guessing");
	if (g) {
		int line;

		check_unknown(ld, g, guessing_names, "guessing");
		if (get_int(ld, g, &guessing, "threshold", r_guess_threshold, &v, &line) == GOT_OK)
			c->guess_threshold = (uint32_t)v;
		if (get_int(ld, g, &guessing, "window", r_guess_window, &v, &line) == GOT_OK)
			c->guess_window = (uint32_t)v;
		if (get_int(ld, g, &guessing, "penalty", r_guess_penalty, &v, &line) == GOT_OK)
			c->guess_penalty = (uint32_t)v;
	}
}

/*
 * libconfig frees its strings without wiping them; a text secret should not
 * linger in the heap of a long-running daemon.
 */
static void wipe_secret(config_setting_t *key)
{
	config_setting_t *ss = config_setting_is_group(key) ?
				       config_setting_get_member(key, "secret") : NULL;

	if (ss && config_setting_type(ss) == CONFIG_TYPE_STRING && ss->value.sval)
		sodium_memzero(ss->value.sval, strlen(ss->value.sval));
}

/*
 * A text secret makes the file it is written in as sensitive as a key file,
 * so that file must pass the key file rule, checked on the fstat of the text
 * that was parsed.  Once per file: a second secret there says nothing new.
 */
static void check_secret_file(struct loader *ld, const config_setting_t *ss, const char *name)
{
	uid_t euid = geteuid();
	struct source *src;
	int f;

	map_line(ld->map, setting_line(ss), &f);
	src = &ld->map->src[f];
	if (src->secret_checked)
		return;
	src->secret_checked = true;
	if (!name)
		name = "?";
	switch (file_rule_check(&src->st, euid, FILE_SECRET_FORBIDDEN)) {
	case FILE_OK:
		break;
	case FILE_NOT_REGULAR:
		lerr(ld, ss, "key \"%s\": a secret must be in a regular file, and \"%s\" is not",
		     name, src->path);
		break;
	case FILE_OWNER:
		if (euid == 0)
			lerr(ld, ss,
			     "key \"%s\": a file holding a secret must be owned by root, "
			     "and \"%s\" is owned by uid %u",
			     name, src->path, (unsigned)src->st.st_uid);
		else
			lerr(ld, ss,
			     "key \"%s\": a file holding a secret must be owned by root or uid %u, "
			     "and \"%s\" is owned by uid %u",
			     name, (unsigned)euid, src->path, (unsigned)src->st.st_uid);
		break;
	case FILE_MODE:
		lerr(ld, ss,
		     "key \"%s\": a file holding a secret may be readable by its owner only, "
		     "and \"%s\" has mode %04o; chmod 600 it, or move the secret to a key file",
		     name, src->path, (unsigned)(src->st.st_mode & 07777));
		break;
	}
}

/*
 * One key: its bytes go straight into the locked keyring slot and the
 * temporary copy is wiped (libconfig's copy: wipe_secret()).
 */
static void load_key(struct loader *ld, config_setting_t *s, struct conf_key *k,
		     struct kg_key *slot)
{
	static const char *const names[] = { "name", "file", "secret", NULL };
	static const struct scope sc = { "keys", true };
	size_t before = ld->nerr;
	config_setting_t *ns = NULL, *fs, *ss;
	const char *name = NULL, *str;
	uint8_t raw[KG_KEY_MAX];
	char why[CONF_ERR_LEN];
	size_t len = 0;

	k->line = setting_line(s);
	k->broken = true;
	if (!config_setting_is_group(s)) {
		lerr(ld, s, "\"keys\" entries must be groups { name = ...; ... }");
		return;
	}
	check_unknown(ld, s, names, "keys");

	switch (get_string(ld, s, &sc, "name", &name, &ns)) {
	case GOT_NONE:
		lerr(ld, s, "key entry is missing \"name\"");
		break;
	case GOT_OK:
		if (strlen(name) >= sizeof(k->name)) {
			lerr(ld, ns, KEY_NAME_FMT, name);
		} else {
			snprintf(k->name, sizeof(k->name), "%s", name);
			k->line = setting_line(ns);
		}
		break;
	case GOT_BAD:
		break;
	}

	fs = config_setting_get_member(s, "file");
	ss = config_setting_get_member(s, "secret");
	if (!fs == !ss) {
		if (name)
			lerr(ld, s, "key \"%s\" needs exactly one of \"file\" or \"secret\"", name);
		else
			lerr(ld, s, "key entry needs exactly one of \"file\" or \"secret\"");
		return;
	}
	if (fs) {
		if (get_string(ld, s, &sc, "file", &str, &fs) != GOT_OK)
			return;
		/* Resolved relative to the config's directory; needed only here. */
		char file[PATH_MAX];

		if (resolve_path(file, setting_file(ld, fs), str) < 0) {
			lerr(ld, fs, "key file path \"%s\" is too long", str);
			return;
		}
		k->from_file = true;
		if (keyfile_read(file, raw, &len, why, sizeof(why)) < 0) {
			lerr(ld, fs, "%s", why);
			return;
		}
	} else {
		check_secret_file(ld, ss, name);
		if (get_string(ld, s, &sc, "secret", &str, &ss) != GOT_OK)
			return;
		len = strlen(str);
		if (len < 1 || len > KG_KNOCK_SECRET_MAX) {
			lerr(ld, ss, "secret of key \"%s\" is %zu bytes; it must be 1..%d",
			     name ? name : "?", len, KG_KNOCK_SECRET_MAX);
			return;
		}
		memcpy(raw, str, len);
	}
	if (ld->nerr == before) {
		verify_key_init(slot, raw, len);
		k->len = len;
		k->broken = false;
	}
	sodium_memzero(raw, sizeof(raw));
}

static void load_keys(struct loader *ld, const config_setting_t *root)
{
	struct conf *c = ld->c;
	const config_setting_t *list = get_list(ld, root, "keys", CONF_MAX_KEYS);
	int n;

	if (!list)
		return;
	n = config_setting_length(list);
	if (n > CONF_MAX_KEYS)
		n = CONF_MAX_KEYS;
	if (keyring_alloc(&c->keyring, (size_t)n) < 0) {
		lerr(ld, list, "cannot allocate locked memory for %d keys", n);
		return;
	}
	for (int i = 0; i < n; i++) {
		config_setting_t *s = config_setting_get_elem(list, (unsigned)i);

		load_key(ld, s, &c->keys[i], &c->keyring.keys[i]);
		wipe_secret(s);
	}
	c->nkeys = (size_t)n;
}

/* Names in "keys = [ ... ]" to indexes; unknown ones are errors at their own line. */
static void load_entry_keys(struct loader *ld, const config_setting_t *arr,
			    struct conf_protect *p)
{
	size_t n = (size_t)config_setting_length(arr);

	if (n > CONF_MAX_ENTRY_KEYS) {
		lerr(ld, arr, ENTRY_KEYS_FMT, n, CONF_MAX_ENTRY_KEYS);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(arr, (unsigned)i);
		const char *name = config_setting_get_string(e);
		int idx = find_key(ld->c, name);

		if (idx < 0)
			lerr(ld, e, "protect entry names unknown key \"%s\"", name);
		p->keys[i] = idx;
	}
	p->nkeys = n;
}

static bool load_prefix(struct loader *ld, const config_setting_t *s, const char *what,
			const char *text, struct prefix *ret)
{
	switch (parse_prefix(text, ret)) {
	case PREFIX_OK:
		return true;
	case PREFIX_BAD_ADDR:
		lerr(ld, s, "%s \"%s\" is not an IPv4 or IPv6 address", what, text);
		break;
	case PREFIX_BAD_LEN:
		lerr(ld, s, "%s \"%s\" has a prefix length out of range 0..%u", what, text,
		     strchr(text, ':') ? 128u : 32u);
		break;
	}
	return false;
}

static void load_addresses(struct loader *ld, const config_setting_t *arr, struct conf_protect *p)
{
	size_t n = (size_t)config_setting_length(arr);

	if (n > CONF_MAX_ADDRS) {
		lerr(ld, arr, "protect entry has %zu addresses; at most %d", n, CONF_MAX_ADDRS);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(arr, (unsigned)i);

		load_prefix(ld, e, "address", config_setting_get_string(e), &p->addrs[i]);
	}
	p->naddrs = n;
}

static uint32_t default_replay_ttl(enum kg_mode mode, uint32_t window)
{
	if (mode == KG_MODE_NATIVE && window > 0)
		return NATIVE_REPLAY_WINDOWS * window;
	return DEFAULT_REPLAY_TTL;
}

static void load_protect(struct loader *ld, const config_setting_t *s)
{
	static const char *const names[] = { "port", "mode", "keys", "integrity_len", "on_fail",
					     "window", "replay", "replay_ttl", "addresses", NULL };
	static const struct scope sc = { "protect", true };
	struct conf *c = ld->c;
	struct conf_protect p;
	const config_setting_t *arr;
	size_t before = ld->nerr;
	bool has_ttl = false;
	long long v;
	int iv;

	memset(&p, 0, sizeof(p));
	p.line = setting_line(s);
	p.on_fail = ON_FAIL_RESET;
	p.window = DEFAULT_WINDOW;
	p.replay = true;
	if (!config_setting_is_group(s)) {
		lerr(ld, s, "\"protect\" entries must be groups { port = ...; ... }");
		return;
	}
	check_unknown(ld, s, names, "protect");

	switch (get_int(ld, s, &sc, "port", r_port, &v, &p.line_port)) {
	case GOT_NONE:
		lerr(ld, s, "protect entry is missing \"port\"");
		break;
	case GOT_OK:
		p.port = (uint16_t)v;
		break;
	case GOT_BAD:
		break;
	}
	switch (get_word(ld, s, &sc, "mode", mode_words, &iv)) {
	case GOT_NONE:
		lerr(ld, s, "protect entry is missing \"mode\"");
		break;
	case GOT_OK:
		p.mode = (enum kg_mode)iv;
		break;
	case GOT_BAD:
		break;
	}
	switch (get_strings(ld, s, &sc, "keys", &arr)) {
	case GOT_NONE:
		lerr(ld, s, "protect entry is missing \"keys\"");
		break;
	case GOT_OK:
		p.line_keys = setting_line(arr);
		load_entry_keys(ld, arr, &p);
		break;
	case GOT_BAD:
		break;
	}
	if (get_int(ld, s, &sc, "integrity_len", r_integrity_len, &v, &p.line_integrity_len) ==
	    GOT_OK)
		p.integrity_len = (uint16_t)v;
	if (get_word(ld, s, &sc, "on_fail", on_fail_words, &iv) == GOT_OK)
		p.on_fail = (enum on_fail)iv;
	if (get_int(ld, s, &sc, "window", r_window, &v, &p.line_window) == GOT_OK)
		p.window = (uint32_t)v;
	p.has_window = config_setting_get_member(s, "window") != NULL;
	get_bool(ld, s, &sc, "replay", &p.replay);
	if (get_int(ld, s, &sc, "replay_ttl", r_replay_ttl, &v, &p.line_replay_ttl) == GOT_OK) {
		p.replay_ttl = (uint32_t)v;
		has_ttl = true;
	}
	if (get_strings(ld, s, &sc, "addresses", &arr) == GOT_OK)
		load_addresses(ld, arr, &p);

	if (ld->nerr != before)
		return;
	if (!has_ttl)
		p.replay_ttl = default_replay_ttl(p.mode, p.window);
	c->protect[c->nprotect++] = p;
}

static void load_knock(struct loader *ld, const config_setting_t *s)
{
	static const char *const names[] = { "dst", "port", "mode", "key", "integrity_len",
					     "window", NULL };
	static const struct scope sc = { "knock", true };
	struct conf *c = ld->c;
	struct conf_knock k;
	config_setting_t *m;
	size_t before = ld->nerr;
	const char *str;
	long long v;
	int iv;

	memset(&k, 0, sizeof(k));
	k.line = setting_line(s);
	k.window = DEFAULT_WINDOW;
	k.key = -1;
	if (!config_setting_is_group(s)) {
		lerr(ld, s, "\"knock\" entries must be groups { dst = ...; ... }");
		return;
	}
	check_unknown(ld, s, names, "knock");

	switch (get_string(ld, s, &sc, "dst", &str, &m)) {
	case GOT_NONE:
		lerr(ld, s, "knock entry is missing \"dst\"");
		break;
	case GOT_OK:
		k.line_dst = setting_line(m);
		load_prefix(ld, m, "dst", str, &k.dst);
		break;
	case GOT_BAD:
		break;
	}
	switch (get_int(ld, s, &sc, "port", r_port, &v, &k.line_port)) {
	case GOT_NONE:
		lerr(ld, s, "knock entry is missing \"port\"");
		break;
	case GOT_OK:
		k.port = (uint16_t)v;
		break;
	case GOT_BAD:
		break;
	}
	switch (get_word(ld, s, &sc, "mode", mode_words, &iv)) {
	case GOT_NONE:
		lerr(ld, s, "knock entry is missing \"mode\"");
		break;
	case GOT_OK:
		k.mode = (enum kg_mode)iv;
		break;
	case GOT_BAD:
		break;
	}
	switch (get_string(ld, s, &sc, "key", &str, &m)) {
	case GOT_NONE:
		lerr(ld, s, "knock entry is missing \"key\"");
		break;
	case GOT_OK:
		k.line_key = setting_line(m);
		k.key = find_key(c, str);
		if (k.key < 0)
			lerr(ld, m, "knock entry names unknown key \"%s\"", str);
		break;
	case GOT_BAD:
		break;
	}
	if (get_int(ld, s, &sc, "integrity_len", r_integrity_len, &v, &k.line_integrity_len) ==
	    GOT_OK)
		k.integrity_len = (uint16_t)v;
	if (get_int(ld, s, &sc, "window", r_window, &v, &k.line_window) == GOT_OK)
		k.window = (uint32_t)v;
	k.has_window = config_setting_get_member(s, "window") != NULL;

	if (ld->nerr != before)
		return;
	c->knock[c->nknock++] = k;
}

static void load_root(struct loader *ld, const config_setting_t *root)
{
	static const char *const names[] = { "queue", "rules", "log_level", "translate",
					     "closed_ports", "control_socket", "limits", "guessing",
					     "keys", "protect", "knock", NULL };
	const config_setting_t *list;

	check_unknown(ld, root, names, NULL);
	load_globals(ld, root);
	/* Keys first, wherever they are written: entries refer to them by name. */
	load_keys(ld, root);

	list = get_list(ld, root, "protect", CONF_MAX_PROTECT);
	for (int i = 0; list && i < config_setting_length(list) && i < CONF_MAX_PROTECT; i++)
		load_protect(ld, config_setting_get_elem(list, (unsigned)i));
	list = get_list(ld, root, "knock", CONF_MAX_KNOCK);
	for (int i = 0; list && i < config_setting_length(list) && i < CONF_MAX_KNOCK; i++)
		load_knock(ld, config_setting_get_elem(list, (unsigned)i));
}

/* An "@include" line: where it is in its file and the name it quotes. */
struct incl {
	int line;
	size_t start, end;	/* the whole line, its newline included */
	size_t name, name_len;	/* between the quotes */
};

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/*
 * One "@include "FILE"" line at p, which libconfig 1.5's scanner only takes
 * at the start of a line (blanks before it).  The name is taken verbatim:
 * no backslash, no newline; blanks and a comment may follow it, nothing
 * else.  Any other '@' is refused here rather than left to libconfig, which
 * would open the file itself, past every check of this file.  Returns where
 * the line ends, or NULL with the reason in *why.
 */
static const char *scan_include(const char *t, const char *p, const char *bol, int line,
				struct incl *ret, const char **why)
{
	static const char word[] = "@include";
	const char *name;

	for (const char *q = bol; q < p; q++) {
		if (!blank(*q)) {
			*why = "'@' may only start a line of the form @include \"FILE\"";
			return NULL;
		}
	}
	if (strncmp(p, word, sizeof(word) - 1) != 0 || !blank(p[sizeof(word) - 1])) {
		*why = "'@' may only start a line of the form @include \"FILE\"";
		return NULL;
	}
	for (p += sizeof(word) - 1; blank(*p); p++)
		;
	if (*p != '"') {
		*why = "@include needs a quoted file name";
		return NULL;
	}
	name = ++p;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' || *p == '\n') {
			*why = "@include file name must be one line without backslashes";
			return NULL;
		}
	}
	if (!*p) {
		*why = "unterminated string";
		return NULL;
	}
	if (p == name) {
		*why = "@include file name is empty";
		return NULL;
	}
	ret->line = line;
	ret->start = (size_t)(bol - t);
	ret->name = (size_t)(name - t);
	ret->name_len = (size_t)(p - name);
	for (p++; blank(*p) || *p == '\r'; p++)
		;
	if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
		while (*p && *p != '\n')
			p++;
	}
	if (*p && *p != '\n') {
		*why = "text after @include \"FILE\" on its line";
		return NULL;
	}
	ret->end = (size_t)(p - t) + (*p == '\n');
	return p;
}

/*
 * Checks libconfig 1.5 gets wrong without a word, on the text of each file
 * before it is joined: an integer literal without the L suffix is converted
 * with atoi()-style wrap-around, so "port = 4294967318;" would load as port
 * 22 (no setting here takes more than 31 bits, so any such literal is
 * refused); an unterminated block comment silently swallows the rest of the
 * file; and an unterminated string, besides being a syntax error, leaks the
 * scanner's buffer.  Comments, strings and names are skipped the way
 * libconfig's scanner skips them.  The @include lines it finds go to incs
 * (at most max, *ret_n of them).  Returns the number of errors reported (0
 * or 1).
 */
static int prescan(const char *t, const char *path, struct conf_errors *errs,
		   struct incl *incs, size_t max, size_t *ret_n)
{
	const char *p = t, *bol = t;
	const char *why;
	int line = 1;

	*ret_n = 0;
	while (*p) {
		if (*p == '\n') {
			line++;
			p++;
			bol = p;
		} else if (*p == '@') {
			struct incl inc;

			p = scan_include(t, p, bol, line, &inc, &why);
			if (!p) {
				conf_error(errs, path, line, "%s", why);
				return 1;
			}
			if (*ret_n == max) {
				conf_error(errs, path, line, "more than %d @include files",
					   CONF_MAX_INCLUDES);
				return 1;
			}
			incs[(*ret_n)++] = inc;
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			int start = line;

			for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
				line += *p == '\n';
			if (!*p) {
				conf_error(errs, path, start, "unterminated /* comment");
				return 1;
			}
			p += 2;
		} else if (*p == '"') {
			int start = line;

			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				line += *p == '\n';
			}
			if (!*p) {
				conf_error(errs, path, start, "unterminated string");
				return 1;
			}
			p++;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '*') {
			while (is_alnum(*p) || *p == '-' || *p == '_' || *p == '*')
				p++;
		} else if ((*p >= '0' && *p <= '9') ||
			   ((*p == '-' || *p == '+') && p[1] >= '0' && p[1] <= '9')) {
			const char *tok = p;
			unsigned long long v = 0, limit = 0x7fffffffull;
			bool hex, wide = false;

			if (*p == '-' || *p == '+') {
				if (*p == '-')
					limit++;
				p++;
			}
			hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
			      isxdigit((unsigned char)p[2]);
			if (hex) {
				limit = 0x7fffffffull;
				for (p += 2; isxdigit((unsigned char)*p); p++) {
					unsigned d = *p <= '9' ? (unsigned)(*p - '0') :
								 (unsigned)((*p | 0x20) - 'a' + 10);

					v = v * 16 + d;
					wide |= v > limit;
				}
			} else {
				for (; *p >= '0' && *p <= '9'; p++) {
					v = v * 10 + (unsigned)(*p - '0');
					wide |= v > limit;
				}
			}
			if (*p == 'L')
				continue;	/* 64-bit literal: libconfig keeps it whole */
			if (!hex && (*p == '.' || *p == 'e' || *p == 'E')) {
				while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
				       *p == 'E' || *p == '-' || *p == '+')
					p++;
				continue;	/* a float, never an integer setting */
			}
			if (wide) {
				int len = (int)(p - tok);

				conf_error(errs, path, line, "integer %.*s out of range",
					   len > 40 ? 40 : len, tok);
				return 1;
			}
		} else {
			p++;
		}
	}
	return 0;
}

/* -errno of the call that just failed, and never 0 even if it left errno alone. */
static int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * The whole file, NUL-terminated, in *ret (ret_len bytes before the NUL),
 * and the fstat of what was read in *ret_st.  Reading it ourselves rather
 * than with config_read_file() lets the checks below see exactly the text
 * libconfig parses.  On failure the reason is in why.
 */
static int read_text(const char *path, char **ret, size_t *ret_len, struct stat *ret_st,
		     char *why, size_t whylen)
{
	struct stat st;
	char *text;
	size_t n = 0, cap;
	int fd, r;

	/* O_NONBLOCK: a FIFO named as config must be refused, not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = neg_errno();
		snprintf(why, whylen, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = neg_errno();
		snprintf(why, whylen, "cannot stat: %s", strerror(-r));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		r = -EINVAL;
		goto fail;
	}
	if (st.st_size > CONF_FILE_MAX) {
		snprintf(why, whylen, "larger than %d bytes", CONF_FILE_MAX);
		r = -EFBIG;
		goto fail;
	}
	/* One byte spare to notice a file that grew since fstat, one for the NUL. */
	cap = (size_t)st.st_size + 2;
	text = malloc(cap);
	if (!text) {
		snprintf(why, whylen, "out of memory");
		r = -ENOMEM;
		goto fail;
	}
	while (n < cap - 1) {
		ssize_t got = read(fd, text + n, cap - 1 - n);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = neg_errno();
			snprintf(why, whylen, "cannot read: %s", strerror(-r));
			sodium_memzero(text, cap);
			free(text);
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (n == cap - 1) {
		snprintf(why, whylen, "changed while being read");
		sodium_memzero(text, cap);
		free(text);
		return -EAGAIN;
	}
	text[n] = '\0';
	*ret = text;
	*ret_len = n;
	*ret_st = st;
	return 0;
fail:
	close(fd);
	return r;
}

/* libconfig stops at a NUL; a config holding one is corrupt, not shorter. */
static int find_nul(const char *text, size_t n)
{
	const char *z = memchr(text, '\0', n);
	int line = 1;

	if (!z)
		return 0;
	for (const char *p = text; p < z; p++)
		line += *p == '\n';
	return line;
}

/* Appends to the joined text, which may hold secrets: an old buffer is wiped. */
static int emit(struct srcmap *m, const char *text, size_t n)
{
	if (m->cap - m->len <= n) {
		size_t cap = m->cap ? m->cap : 4096;
		char *out;

		while (cap - m->len <= n)
			cap *= 2;
		out = malloc(cap);
		if (!out)
			return -ENOMEM;
		if (m->out) {
			memcpy(out, m->out, m->len);
			sodium_memzero(m->out, m->cap);
			free(m->out);
		}
		m->out = out;
		m->cap = cap;
	}
	memcpy(m->out + m->len, text, n);
	m->len += n;
	m->out[m->len] = '\0';
	for (size_t i = 0; i < n; i++)
		m->out_line += text[i] == '\n';
	return 0;
}

static void add_segment(struct srcmap *m, int file, int line)
{
	/* One per file and two per @include: the array fits them all. */
	m->seg[m->nseg++] = (struct segment){ m->out_line, file, line };
}

/* Ownership and mode of a configuration file: whoever may write it owns the firewall. */
static int check_conf_file(const struct source *src, struct conf_errors *errs)
{
	uid_t euid = geteuid();

	switch (file_rule_check(&src->st, euid, FILE_CONFIG_FORBIDDEN)) {
	case FILE_OK:
		return 0;
	case FILE_NOT_REGULAR:
		conf_error(errs, src->path, 0, "not a regular file");
		return -EINVAL;
	case FILE_OWNER:
		if (euid == 0)
			conf_error(errs, src->path, 0,
				   "configuration file is owned by uid %u; it must be owned by root",
				   (unsigned)src->st.st_uid);
		else
			conf_error(errs, src->path, 0,
				   "configuration file is owned by uid %u; "
				   "it must be owned by root or uid %u",
				   (unsigned)src->st.st_uid, (unsigned)euid);
		return -EPERM;
	case FILE_MODE:
		conf_error(errs, src->path, 0,
			   "configuration file is writable by group or others (mode %04o); "
			   "chmod go-w it",
			   (unsigned)(src->st.st_mode & 07777));
		return -EPERM;
	}
	return -EINVAL;
}

static int join_file(struct srcmap *m, struct conf_errors *errs, int file, int depth,
		     const char *ifile, int iline, const char *iname);

/*
 * The @include at inc of file, which is depth files deep: resolved against
 * the including file's directory (as key files are), counted, and joined.
 */
static int join_include(struct srcmap *m, struct conf_errors *errs, int file, int depth,
			const char *text, const struct incl *inc)
{
	const char *ipath = m->src[file].path;
	char name[PATH_MAX], resolved[PATH_MAX];
	struct source *src;

	if (inc->name_len >= sizeof(name)) {
		conf_error(errs, ipath, inc->line, "@include file name is too long");
		return -ENAMETOOLONG;
	}
	memcpy(name, text + inc->name, inc->name_len);
	name[inc->name_len] = '\0';
	if (resolve_path(resolved, ipath, name) < 0) {
		conf_error(errs, ipath, inc->line, "@include \"%s\": path is too long", name);
		return -ENAMETOOLONG;
	}
	if (depth >= CONF_MAX_DEPTH) {
		conf_error(errs, ipath, inc->line,
			   "@include \"%s\" nests more than %d files deep", name, CONF_MAX_DEPTH);
		return -ELOOP;
	}
	if (m->nsrc > CONF_MAX_INCLUDES) {
		conf_error(errs, ipath, inc->line, "more than %d @include files",
			   CONF_MAX_INCLUDES);
		return -E2BIG;
	}
	src = &m->src[m->nsrc];
	memset(src, 0, sizeof(*src));
	snprintf(src->path, sizeof(src->path), "%s", resolved);
	src->parent = file;
	return join_file(m, errs, (int)m->nsrc++, depth + 1, ipath, inc->line, name);
}

/*
 * Reads file (m->src[file].path), checks it as the main file is checked,
 * and appends it to the joined text with its own @include lines replaced by
 * the files they name.  ifile:iline is the @include line that named it
 * (NULL for the main file), where problems of reaching it are reported.
 */
static int join_file(struct srcmap *m, struct conf_errors *errs, int file, int depth,
		     const char *ifile, int iline, const char *iname)
{
	struct source *src = &m->src[file];
	struct incl incs[CONF_MAX_INCLUDES];
	char why[256];
	char *text = NULL;
	size_t len = 0, ninc, pos = 0;
	int r, line;

	r = read_text(src->path, &text, &len, &src->st, why, sizeof(why));
	if (r < 0) {
		if (ifile)
			conf_error(errs, ifile, iline, "@include \"%s\": %s", iname, why);
		else
			conf_error(errs, src->path, 0, "%s", why);
		return r;
	}
	r = check_conf_file(src, errs);
	if (r < 0)
		goto out;
	/* A file that is already open further up would include itself again and again. */
	for (int a = src->parent; a >= 0; a = m->src[a].parent) {
		if (m->src[a].st.st_dev == src->st.st_dev && m->src[a].st.st_ino == src->st.st_ino) {
			conf_error(errs, ifile, iline,
				   "@include \"%s\" is an include cycle (\"%s\" is already being read)",
				   iname, m->src[a].path);
			r = -ELOOP;
			goto out;
		}
	}
	m->total += len;
	if (m->total > CONF_FILE_MAX) {
		conf_error(errs, ifile ? ifile : src->path, iline,
			   "the configuration's files are larger than %d bytes in all",
			   CONF_FILE_MAX);
		r = -EFBIG;
		goto out;
	}
	line = find_nul(text, len);
	if (line) {
		conf_error(errs, src->path, line, "contains a NUL byte");
		r = -EINVAL;
		goto out;
	}
	if (prescan(text, src->path, errs, incs, CONF_MAX_INCLUDES, &ninc)) {
		r = -EINVAL;
		goto out;
	}

	add_segment(m, file, 1);
	for (size_t i = 0; i < ninc; i++) {
		r = emit(m, text + pos, incs[i].start - pos);
		if (r < 0)
			goto oom;
		r = join_include(m, errs, file, depth, text, &incs[i]);
		if (r < 0)
			goto out;
		/* The included text ends its own last line. */
		if (m->len > 0 && m->out[m->len - 1] != '\n') {
			r = emit(m, "\n", 1);
			if (r < 0)
				goto oom;
		}
		pos = incs[i].end;
		add_segment(m, file, incs[i].line + 1);
	}
	r = emit(m, text + pos, len - pos);
	if (r < 0)
		goto oom;
	goto out;
oom:
	conf_error(errs, src->path, 0, "out of memory");
out:
	/* The text may hold secret = "..." lines. */
	sodium_memzero(text, len + 1);
	free(text);
	return r;
}

static void remap(const struct srcmap *m, int *line)
{
	int f;

	*line = map_line(m, *line, &f);
}

/* The struct's lines, numbers in the joined text until now, become lines of their own files. */
static void remap_lines(struct conf *c, const struct srcmap *m)
{
	int *global[] = { &c->line_queue_num, &c->line_queue_count, &c->line_queue_maxlen,
			  &c->line_table, &c->line_control_socket, &c->line_flows,
			  &c->line_replay, &c->line_hold_bytes, &c->line_hold_flow_bytes,
			  &c->line_integrity_timeout, &c->line_mark_mask, &c->line_ct_mark_bit };

	for (size_t i = 0; i < sizeof(global) / sizeof(global[0]); i++)
		remap(m, global[i]);
	for (size_t i = 0; i < c->nkeys; i++)
		remap(m, &c->keys[i].line);
	for (size_t i = 0; i < c->nprotect; i++) {
		struct conf_protect *p = &c->protect[i];

		remap(m, &p->line);
		remap(m, &p->line_port);
		remap(m, &p->line_keys);
		remap(m, &p->line_integrity_len);
		remap(m, &p->line_window);
		remap(m, &p->line_replay_ttl);
	}
	for (size_t i = 0; i < c->nknock; i++) {
		struct conf_knock *k = &c->knock[i];

		remap(m, &k->line);
		remap(m, &k->line_dst);
		remap(m, &k->line_port);
		remap(m, &k->line_key);
		remap(m, &k->line_integrity_len);
		remap(m, &k->line_window);
	}
}

int conf_load(const char *path, struct conf *c, struct conf_errors *errs)
{
	struct loader ld = { c, errs, 0, NULL };
	struct srcmap *m;
	config_t cfg;
	int r;

	errs->n = 0;
	errs->overflow = false;
	conf_defaults(c);
	if (strlen(path) >= sizeof(c->path)) {
		conf_error(errs, "knockgw", 0, "configuration path is too long");
		return -ENAMETOOLONG;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);

	m = calloc(1, sizeof(*m));
	if (!m) {
		conf_error(errs, path, 0, "out of memory");
		return -ENOMEM;
	}
	m->nsrc = 1;
	m->out_line = 1;
	snprintf(m->src[0].path, sizeof(m->src[0].path), "%s", path);
	m->src[0].parent = -1;
	r = join_file(m, errs, 0, 1, NULL, 0, NULL);
	if (r == 0 && !m->out)
		r = emit(m, "", 0);	/* an empty file is an empty config */
	if (r < 0)
		goto out;

	/*
	 * No include directory is set: the joined text has no @include left,
	 * and libconfig must not open a file of its own.
	 */
	config_init(&cfg);
	if (!config_read_string(&cfg, m->out)) {
		int f, line = map_line(m, config_error_line(&cfg), &f);

		conf_error(errs, m->src[f].path, line, "%s", config_error_text(&cfg));
		config_destroy(&cfg);
		r = -EINVAL;
		goto out;
	}
	ld.map = m;
	load_root(&ld, config_root_setting(&cfg));
	config_destroy(&cfg);

	ld.nerr += validate(c, errs, m);
	r = ld.nerr ? -EINVAL : 0;
	if (r == 0) {
		remap_lines(c, m);
		kgw_marks_make(c->mark_mask, c->ct_mark_bit, &c->marks);	/* validated */
	}
out:
	/* The joined text may hold secret = "..." lines. */
	if (m->out) {
		sodium_memzero(m->out, m->cap);
		free(m->out);
	}
	free(m);
	if (r < 0) {
		conf_free(c);
		return r;
	}
	keyring_seal(&c->keyring);
	return 0;
}

const struct conf_knock *conf_find_knock(const struct conf *c, int family, const uint8_t *dst,
					 uint16_t port)
{
	const struct conf_knock *best = NULL;

	for (size_t i = 0; i < c->nknock; i++) {
		const struct conf_knock *k = &c->knock[i];

		if (k->port == port && prefix_contains(&k->dst, family, dst) &&
		    (!best || k->dst.len > best->dst.len))
			best = k;
	}
	return best;
}
