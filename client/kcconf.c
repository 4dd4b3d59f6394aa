/*
 * kcconf.c - where knock-connect finds the control socket (see kcconf.h):
 * the config module's lenient reader, conf_peek(), and knock-connect's
 * words for what it found.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config/conf.h"
#include "kcconf.h"

int kc_socket_from_conf(const char *path, bool explicit, char *out, size_t outlen)
{
	struct conf_peek p;

	conf_peek(path, &p);
	if (p.failed) {
		fprintf(stderr, "knock-connect: out of memory\n");
		return -ENOMEM;
	}
	/* The default file is a hint: whatever is wrong with it leaves the default socket. */
	if (p.socket_why[0] || strlen(p.control_socket) >= outlen) {
		if (!explicit)
			return 0;
		if (p.socket_why[0])
			fprintf(stderr, "knock-connect: %s (use -s SOCKET)\n", p.socket_why);
		else
			fprintf(stderr, "knock-connect: %s: control_socket \"%s\" does not fit a "
				"socket address\n", path, p.control_socket);
		return -EINVAL;
	}
	snprintf(out, outlen, "%s", p.control_socket);
	return 0;
}
