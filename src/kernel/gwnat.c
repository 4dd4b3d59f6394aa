/*
 * gwnat.c - see gwnat.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel/gwnat.h"

int gwnat_source(int family, const uint8_t *dst, uint8_t *ret)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, r = 0;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(9);
		memcpy(&sin->sin_addr, dst, 4);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(9);
		memcpy(&sin6->sin6_addr, dst, 16);
		len = sizeof(*sin6);
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A UDP connect only routes: the kernel picks the source, sends nothing. */
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		r = -errno;
	else if (family == AF_INET)
		memcpy(ret, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	else
		memcpy(ret, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	close(fd);
	return r;
}
