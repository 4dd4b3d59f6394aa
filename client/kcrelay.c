/*
 * kcrelay.c - knock-connect's connection and relay (see kcrelay.h).
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kcrelay.h"

int kc_read_head(uint8_t *buf, size_t *have, size_t want)
{
	while (*have < want) {
		ssize_t r = read(STDIN_FILENO, buf + *have, want - *have);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		*have += (size_t)r;
	}
	return 0;
}

int kc_bind_any(int s, int family)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };

	/* Port 0: the kernel picks the local port now, before connect(). */
	if (family == AF_INET)
		return bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 ? -errno : 0;
	return bind(s, (struct sockaddr *)&sin6, sizeof(sin6)) < 0 ? -errno : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int kc_connect_wait(int s, const struct sockaddr *sa, socklen_t salen, int wait_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)wait_ms;
	struct pollfd p = { .fd = s, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0;

	if (connect(s, sa, salen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	for (;;) {
		uint64_t t = now_ms();
		int r;

		if (t >= deadline)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(deadline - t));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			break;
	}
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	return -err;
}

struct relay_buf {
	uint8_t data[KC_RELAY_BUF];
	size_t off, len;
};

/* Half-close towards our reader: a socket as stdout gets a FIN, a pipe EOF. */
static void close_stdout(void)
{
	shutdown(STDOUT_FILENO, SHUT_WR);	/* ENOTSOCK for a pipe: fine */
	close(STDOUT_FILENO);
}

int kc_relay(int s, const char *host, const char *port, const uint8_t *head, size_t head_len)
{
	static struct relay_buf up, down;
	bool in_eof = false, sock_eof = false, wr_shut = false, out_closed = false;

	memcpy(up.data, head, head_len);	/* the bytes the knock covers go first */
	up.off = 0;
	up.len = head_len;
	down.off = down.len = 0;

	for (;;) {
		struct pollfd p[3];
		int r;

		if (in_eof && up.len == 0 && !wr_shut) {
			shutdown(s, SHUT_WR);
			wr_shut = true;
		}
		if (sock_eof && down.len == 0 && !out_closed) {
			close_stdout();
			out_closed = true;
		}
		if (wr_shut && out_closed)
			return KC_OK;

		p[0].fd = !in_eof && up.len == 0 ? STDIN_FILENO : -1;
		p[0].events = POLLIN;
		p[1].fd = s;
		p[1].events = (short)((up.len ? POLLOUT : 0) | (!sock_eof && down.len == 0 ? POLLIN : 0));
		if (!p[1].events)
			p[1].fd = -1;
		p[2].fd = down.len ? STDOUT_FILENO : -1;
		p[2].events = POLLOUT;
		r = poll(p, 3, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "knock-connect: poll: %s\n", strerror(errno));
			return KC_ERROR;
		}

		if (p[0].fd >= 0 && p[0].revents) {
			ssize_t n = read(STDIN_FILENO, up.data, sizeof(up.data));

			if (n > 0) {
				up.off = 0;
				up.len = (size_t)n;
			} else if (n == 0) {
				in_eof = true;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: stdin: %s\n", strerror(errno));
				return KC_ERROR;
			}
		}
		if (p[1].fd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP)) && up.len) {
			ssize_t n = send(s, up.data + up.off, up.len, MSG_NOSIGNAL | MSG_DONTWAIT);

			if (n >= 0) {
				up.off += (size_t)n;
				up.len -= (size_t)n;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: %s port %s: %s\n", host, port,
					strerror(errno));
				return KC_ERROR;
			}
		}
		if (p[1].fd >= 0 && (p[1].revents & (POLLIN | POLLERR | POLLHUP)) && !sock_eof &&
		    down.len == 0) {
			ssize_t n = recv(s, down.data, sizeof(down.data), MSG_DONTWAIT);

			if (n > 0) {
				down.off = 0;
				down.len = (size_t)n;
			} else if (n == 0) {
				sock_eof = true;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: %s port %s: %s\n", host, port,
					strerror(errno));
				return KC_ERROR;
			}
		}
		if (p[2].fd >= 0 && p[2].revents && down.len) {
			size_t chunk = down.len < PIPE_BUF ? down.len : PIPE_BUF;
			ssize_t n = write(STDOUT_FILENO, down.data + down.off, chunk);

			if (n >= 0) {
				down.off += (size_t)n;
				down.len -= (size_t)n;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: stdout: %s\n", strerror(errno));
				return KC_ERROR;
			}
		}
	}
}
