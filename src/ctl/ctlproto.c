/*
 * ctlproto.c - the control socket's line protocol (see ctlproto.h).
 *
 * The parser walks the line once to check its bytes, splits it at single
 * spaces, and checks each token completely before anything is written to
 * the caller's struct, so a refused request leaves no half-filled result.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl/ctlproto.h"

enum {
	MAX_TOKENS = 4,			/* INTENT addr port payload */
	ADDR_TEXT_MAX = INET6_ADDRSTRLEN - 1,
	PORT_DIGITS_MAX = 5,
	INTEGRITY_DIGITS_MAX = 5,	/* integrity_len is a uint16_t */
};

static const char *const parse_names[CTL_PARSE_MAX] = {
#define X(name, counter, desc) counter,
	CTL_PARSE_ERRORS(X)
#undef X
};

static const char *const status_words[CTL_S_MAX] = {
#define X(name, word) word,
	CTL_STATUSES(X)
#undef X
};

const char *ctlproto_parse_name(enum ctl_parse p)
{
	return (unsigned)p < CTL_PARSE_MAX ? parse_names[p] : "unknown";
}

const char *ctlproto_status_word(enum ctl_status s)
{
	return (unsigned)s < CTL_S_MAX ? status_words[s] : "unknown";
}

struct token {
	const char *p;
	size_t len;
};

static bool token_is(const struct token *t, const char *word)
{
	return t->len == strlen(word) && memcmp(t->p, word, t->len) == 0;
}

/* Decimal without sign or leading zeros ("0" itself allowed), up to max. */
static bool parse_decimal(const struct token *t, size_t max_digits, unsigned long max,
			  unsigned long *ret)
{
	unsigned long v = 0;
	size_t i;

	if (t->len == 0 || t->len > max_digits || (t->p[0] == '0' && t->len > 1))
		return false;
	for (i = 0; i < t->len; i++) {
		if (t->p[i] < '0' || t->p[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(t->p[i] - '0');
	}
	if (v > max)
		return false;
	*ret = v;
	return true;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static enum ctl_parse check_address(const struct token *t, int *ret_family, uint8_t addr[static 16])
{
	char text[ADDR_TEXT_MAX + 1];

	if (t->len > ADDR_TEXT_MAX)
		return CTL_PARSE_BAD_ADDRESS;
	memcpy(text, t->p, t->len);
	text[t->len] = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, text, addr) == 1) {
		*ret_family = AF_INET;
		return CTL_PARSE_OK;
	}
	if (inet_pton(AF_INET6, text, addr) == 1) {
		*ret_family = AF_INET6;
		return CTL_PARSE_OK;
	}
	return CTL_PARSE_BAD_ADDRESS;
}

static enum ctl_parse check_payload(const struct token *t)
{
	size_t i;

	if (t->len > 2 * (size_t)INTEG_MAX_LEN)
		return CTL_PARSE_PAYLOAD_TOO_LONG;
	if (t->len == 0 || t->len % 2)
		return CTL_PARSE_BAD_PAYLOAD;
	for (i = 0; i < t->len; i++)
		if (hex_value(t->p[i]) < 0)
			return CTL_PARSE_BAD_PAYLOAD;
	return CTL_PARSE_OK;
}

enum ctl_parse ctlproto_parse_request(const uint8_t *buf, size_t len, struct ctl_request *ret)
{
	struct token tok[MAX_TOKENS];
	size_t ntok = 0, i, start;
	enum ctl_cmd cmd;
	enum ctl_parse r;
	int family = 0;
	uint8_t addr[16] = { 0 };
	unsigned long port = 0;
	const uint8_t *lf;

	if (len == 0)
		return CTL_PARSE_EMPTY;
	lf = memchr(buf, '\n', len < CTL_LINE_MAX ? len : CTL_LINE_MAX);
	if (!lf)
		return len >= CTL_LINE_MAX ? CTL_PARSE_TOO_LONG : CTL_PARSE_NO_NEWLINE;
	if (lf != buf + len - 1)
		return CTL_PARSE_BAD_CHAR;	/* one request per connection */
	len--;				/* the LF */
	if (len == 0)
		return CTL_PARSE_EMPTY;
	for (i = 0; i < len; i++)
		if (buf[i] < 0x20 || buf[i] > 0x7e)
			return CTL_PARSE_BAD_CHAR;

	/* Exactly one space between tokens: an empty token is a spacing error. */
	for (start = 0, i = 0; i <= len; i++) {
		if (i < len && buf[i] != ' ')
			continue;
		if (i == start || ntok == MAX_TOKENS)
			return CTL_PARSE_ARGS;
		tok[ntok].p = (const char *)buf + start;
		tok[ntok].len = i - start;
		ntok++;
		start = i + 1;
	}

	if (token_is(&tok[0], "QUERY"))
		cmd = CTL_CMD_QUERY;
	else if (token_is(&tok[0], "INTENT"))
		cmd = CTL_CMD_INTENT;
	else if (token_is(&tok[0], "STATUS"))
		cmd = CTL_CMD_STATUS;
	else if (token_is(&tok[0], "METRICS"))
		cmd = CTL_CMD_METRICS;
	else
		return CTL_PARSE_UNKNOWN_COMMAND;

	bool bare = cmd == CTL_CMD_STATUS || cmd == CTL_CMD_METRICS;	/* no arguments */

	if (ntok != (bare ? 1u : cmd == CTL_CMD_QUERY ? 3u : 4u))
		return CTL_PARSE_ARGS;
	if (!bare) {
		r = check_address(&tok[1], &family, addr);
		if (r != CTL_PARSE_OK)
			return r;
		if (!parse_decimal(&tok[2], PORT_DIGITS_MAX, 65535, &port) || port == 0)
			return CTL_PARSE_BAD_PORT;
	}
	if (cmd == CTL_CMD_INTENT) {
		r = check_payload(&tok[3]);
		if (r != CTL_PARSE_OK)
			return r;
	}

	/* Everything checked: now, and only now, the result. */
	ret->cmd = cmd;
	ret->family = family;
	memcpy(ret->addr, addr, sizeof(ret->addr));
	ret->port = (uint16_t)port;
	ret->payload_len = 0;
	if (cmd == CTL_CMD_INTENT) {
		ret->payload_len = tok[3].len / 2;
		for (i = 0; i < ret->payload_len; i++)
			ret->payload[i] = (uint8_t)(hex_value(tok[3].p[2 * i]) << 4 |
						    hex_value(tok[3].p[2 * i + 1]));
	}
	return CTL_PARSE_OK;
}

/* Appends text at *off; false when it does not fit (with its NUL). */
static bool put(char *buf, size_t buflen, size_t *off, const char *text)
{
	size_t n = strlen(text);

	if (*off >= buflen || buflen - *off <= n)
		return false;
	memcpy(buf + *off, text, n + 1);
	*off += n;
	return true;
}

int ctlproto_format_request(char *buf, size_t buflen, const struct ctl_request *req)
{
	static const char hex[] = "0123456789abcdef";
	char addr[INET6_ADDRSTRLEN], port[8];
	size_t off = 0, i;

	if (req->cmd == CTL_CMD_STATUS)
		return put(buf, buflen, &off, "STATUS\n") ? (int)off : -ENOSPC;
	if (req->cmd == CTL_CMD_METRICS)
		return put(buf, buflen, &off, "METRICS\n") ? (int)off : -ENOSPC;
	if (req->cmd != CTL_CMD_QUERY && req->cmd != CTL_CMD_INTENT)
		return -EINVAL;
	if ((req->family != AF_INET && req->family != AF_INET6) || req->port == 0 ||
	    !inet_ntop(req->family, req->addr, addr, sizeof(addr)))
		return -EINVAL;
	if (req->cmd == CTL_CMD_INTENT &&
	    (req->payload_len == 0 || req->payload_len > INTEG_MAX_LEN))
		return -EINVAL;
	snprintf(port, sizeof(port), "%u", (unsigned)req->port);
	if (!put(buf, buflen, &off, req->cmd == CTL_CMD_QUERY ? "QUERY " : "INTENT ") ||
	    !put(buf, buflen, &off, addr) || !put(buf, buflen, &off, " ") ||
	    !put(buf, buflen, &off, port))
		return -ENOSPC;
	if (req->cmd == CTL_CMD_INTENT) {
		if (!put(buf, buflen, &off, " ") || buflen - off <= 2 * req->payload_len)
			return -ENOSPC;
		for (i = 0; i < req->payload_len; i++) {
			buf[off++] = hex[req->payload[i] >> 4];
			buf[off++] = hex[req->payload[i] & 0xf];
		}
		buf[off] = '\0';
	}
	return put(buf, buflen, &off, "\n") ? (int)off : -ENOSPC;
}

int ctlproto_format_status(char *buf, size_t buflen, enum ctl_status s)
{
	size_t off = 0;

	if ((unsigned)s >= CTL_S_MAX)
		s = CTL_S_INTERNAL;
	if (s == CTL_S_OK)
		return put(buf, buflen, &off, "OK\n") ? (int)off : -ENOSPC;
	if (!put(buf, buflen, &off, "ERR ") || !put(buf, buflen, &off, status_words[s]) ||
	    !put(buf, buflen, &off, "\n"))
		return -ENOSPC;
	return (int)off;
}

int ctlproto_format_knock(char *buf, size_t buflen, unsigned integrity_len)
{
	int n = snprintf(buf, buflen, "OK knock integrity=%u\n", integrity_len);

	return n < 0 || (size_t)n >= buflen ? -ENOSPC : n;
}

enum ctl_status ctlproto_parse_reply(const char *buf, size_t len, bool *ret_has_knock,
				     unsigned *ret_integrity_len)
{
	static const char knock[] = "OK knock integrity=";
	const size_t klen = sizeof(knock) - 1;
	struct token t;
	unsigned long n;
	int s;

	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len == 2 && memcmp(buf, "OK", 2) == 0) {
		*ret_has_knock = false;
		*ret_integrity_len = 0;
		return CTL_S_OK;
	}
	if (len > klen && memcmp(buf, knock, klen) == 0) {
		t.p = buf + klen;
		t.len = len - klen;
		if (!parse_decimal(&t, INTEGRITY_DIGITS_MAX, INTEG_MAX_LEN, &n))
			return CTL_S_UNKNOWN;
		*ret_has_knock = true;
		*ret_integrity_len = (unsigned)n;
		return CTL_S_OK;
	}
	if (len > 4 && memcmp(buf, "ERR ", 4) == 0) {
		t.p = buf + 4;
		t.len = len - 4;
		for (s = CTL_S_OK + 1; s < CTL_S_UNKNOWN; s++)
			if (token_is(&t, status_words[s]))
				return (enum ctl_status)s;
	}
	return CTL_S_UNKNOWN;
}
