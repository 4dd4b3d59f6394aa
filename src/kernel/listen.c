/*
 * listen.c - see listen.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/listen.h"

enum {
	TCP_LISTEN_STATE = 0x0a,	/* TCP_LISTEN in the kernel's st column */
	TABLE_MAX = 4 << 20,		/* bytes of a table read, at most */
};

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Hex digits from *p up to a char not one: the value (<= max), or -1. */
static long hex_field(const char **p, const char *end, long max)
{
	long v = 0;
	int n = 0, d;

	while (*p < end && (d = hexval(**p)) >= 0) {
		v = v * 16 + d;
		if (v > max)
			return -1;
		(*p)++;
		n++;
	}
	return n ? v : -1;
}

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* One socket line: "  N: ADDR:PORT ADDR:PORT ST ..."; its port if it listens, else -1. */
static long listening_port(const char *p, const char *end)
{
	long port, st;

	p = skip_spaces(p, end);
	while (p < end && *p != ':')	/* the slot number */
		p++;
	if (p == end)
		return -1;
	p = skip_spaces(p + 1, end);
	while (p < end && hexval(*p) >= 0)	/* local address */
		p++;
	if (p == end || *p++ != ':')
		return -1;
	port = hex_field(&p, end, 0xffff);
	if (port < 0 || p == end || *p != ' ')
		return -1;
	p = skip_spaces(p, end);
	while (p < end && *p != ' ')	/* remote address:port */
		p++;
	p = skip_spaces(p, end);
	st = hex_field(&p, end, 0xff);
	return st == TCP_LISTEN_STATE ? port : -1;
}

bool listen_text_has(const char *text, size_t len, uint16_t port)
{
	const char *p = text, *end = text + len;
	bool header = true;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		if (!header && listening_port(p, eol) == port)
			return true;
		header = false;
		p = nl ? nl + 1 : end;
	}
	return false;
}

/* The file's text, up to TABLE_MAX bytes; NULL with errno set. */
static char *read_table(const char *path, size_t *ret_len)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0) {
		int e = errno;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb = cap < TABLE_MAX ? realloc(buf, cap * 2) : NULL;

			if (!nb)
				break;	/* what was read is checked */
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*ret_len = len;
	return buf;
}

int listen_port_used(uint16_t port)
{
	static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	int read_one = 0, err = ENOENT;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		size_t len = 0;
		char *text = read_table(tables[i], &len);
		bool has;

		if (!text) {
			err = errno;
			continue;
		}
		read_one = 1;
		has = listen_text_has(text, len, port);
		free(text);
		if (has)
			return 1;
	}
	return read_one ? 0 : -err;
}
