/*
 * connrate.c - new TCP connections per second, for the benchmark (IPv4).
 *
 *   connrate serve --port P [--seconds S]
 *   connrate run   --dst A --port P [--src A] [--nsrc N] [--sport-base N]
 *                  [--count N] [--inflight K] [--seconds S]
 *
 * serve: a plain listener (backlog 4096) on 0.0.0.0:P that accepts and
 *        closes in a loop, for at most S seconds (default 1800).
 * run:   opens --count connections (default 20000) to A:P, --inflight
 *        (default 64) at a time: nonblocking connect(), epoll for
 *        writability, SO_ERROR; a connection whose handshake completed is
 *        closed at once with an RST (SO_LINGER 0), so neither side keeps a
 *        TIME_WAIT.  Source addresses rotate over --src .. --src + nsrc - 1
 *        (default 1).  Without --sport-base the kernel picks each port
 *        (IP_BIND_ADDRESS_NO_PORT); with it, connection i binds source
 *        address i % nsrc and port 1024 + (base + i / nsrc) % 64512, so
 *        consecutive runs given consecutive bases never reuse a 4-tuple
 *        whose conntrack entry (10 s in CLOSE after the RST) still exists.
 *        Stops after --seconds (default 10) whatever is left;
 *        a connection still in flight then counts as unfinished.
 *        Prints one line:
 *        "conns=N ok=N fail=N unfinished=N usecs=T rate=R" (rate = ok/s).
 * Every loop is bounded by count and time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

enum { MAX_INFLIGHT = 4096, MAX_NSRC = 254 };

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: connrate serve --port P [--seconds S]\n"
			"       connrate run --dst A --port P [--src A] [--nsrc N] [--count N]\n"
			"                    [--inflight K] [--seconds S]\n");
	exit(2);
}

static int serve(uint16_t port, long seconds)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4096) < 0) {
		perror("connrate serve");
		return 1;
	}
	printf("ready: port %u\n", port);
	fflush(stdout);
	alarm((unsigned)seconds);	/* SIGALRM ends the process */
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c >= 0)
			close(c);
		else if (errno != EINTR && errno != ECONNABORTED && errno != EMFILE &&
			 errno != ENFILE && errno != ENOBUFS && errno != ENOMEM)
			break;
	}
	perror("connrate serve: accept");
	return 1;
}

struct runctx {
	int ep;
	struct sockaddr_in dst;
	uint32_t src;		/* host order, 0 = any */
	unsigned nsrc;
	long sport_base;	/* -1: the kernel picks */
	long started, ok, fail;
};

/* start_one: a nonblocking connect in flight; 0, or -1 (counted as a fail). */
static int start_one(struct runctx *r)
{
	int one = 1, s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct epoll_event ev = { .events = EPOLLOUT };

	r->started++;
	if (s < 0)
		goto fail;
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (r->src) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		long i = r->started - 1;

		a.sin_addr.s_addr = htonl(r->src + (uint32_t)(i % r->nsrc));
		if (r->sport_base >= 0)
			a.sin_port = htons((uint16_t)(1024 + (r->sport_base + i / r->nsrc) % 64512));
		else
			setsockopt(s, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0)
			goto fail;
	}
	if (connect(s, (struct sockaddr *)&r->dst, sizeof(r->dst)) < 0 && errno != EINPROGRESS)
		goto fail;
	ev.data.fd = s;
	if (epoll_ctl(r->ep, EPOLL_CTL_ADD, s, &ev) < 0)
		goto fail;
	return 0;
fail:
	if (s >= 0)
		close(s);
	r->fail++;
	return -1;
}

static int run(const char *dst, uint16_t port, const char *src, unsigned nsrc, long sport_base,
	       long count, int inflight, long seconds)
{
	struct runctx r = { .nsrc = nsrc, .sport_base = sport_base };
	struct epoll_event evs[256];
	struct in_addr sa;
	int64_t t0, deadline, t1;
	long live = 0;

	r.dst.sin_family = AF_INET;
	r.dst.sin_port = htons(port);
	if (inet_pton(AF_INET, dst, &r.dst.sin_addr) != 1)
		usage();
	if (src) {
		if (inet_pton(AF_INET, src, &sa) != 1)
			usage();
		r.src = ntohl(sa.s_addr);
	}
	r.ep = epoll_create1(EPOLL_CLOEXEC);
	if (r.ep < 0) {
		perror("epoll_create1");
		return 1;
	}
	t0 = mono_ns();
	deadline = t0 + (int64_t)seconds * 1000000000;
	while (r.started < count && live < inflight)
		if (start_one(&r) == 0)
			live++;
	while (live > 0) {
		int64_t now = mono_ns();
		int n, i, ms;

		if (now >= deadline)
			break;
		ms = (int)((deadline - now) / 1000000) + 1;
		n = epoll_wait(r.ep, evs, 256, ms);
		if (n < 0 && errno != EINTR) {
			perror("epoll_wait");
			break;
		}
		for (i = 0; i < n; i++) {
			int s = evs[i].data.fd, err = 0;
			socklen_t len = sizeof(err);

			if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
				err = errno;
			if (err == 0)
				r.ok++;
			else
				r.fail++;
			close(s);	/* SO_LINGER 0: an RST, no TIME_WAIT */
			live--;
		}
		while (r.started < count && live < inflight && mono_ns() < deadline)
			if (start_one(&r) == 0)
				live++;
	}
	t1 = mono_ns();
	printf("conns=%ld ok=%ld fail=%ld unfinished=%ld usecs=%lld rate=%.0f\n", r.started, r.ok,
	       r.fail, live, (long long)((t1 - t0) / 1000),
	       (double)r.ok / ((double)(t1 - t0) / 1e9));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "dst", required_argument, NULL, 'd' },
		{ "src", required_argument, NULL, 's' },
		{ "nsrc", required_argument, NULL, 'n' },
		{ "sport-base", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{ "inflight", required_argument, NULL, 'k' },
		{ "seconds", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dst = NULL, *src = NULL;
	long port = 0, count = 20000, inflight = 64, seconds = -1, nsrc = 1, sport_base = -1;
	int o;

	if (argc < 2)
		usage();
	while ((o = getopt_long(argc - 1, argv + 1, "", opts, NULL)) != -1) {
		switch (o) {
		case 'p': port = strtol(optarg, NULL, 10); break;
		case 'd': dst = optarg; break;
		case 's': src = optarg; break;
		case 'n': nsrc = strtol(optarg, NULL, 10); break;
		case 'b': sport_base = strtol(optarg, NULL, 10); break;
		case 'c': count = strtol(optarg, NULL, 10); break;
		case 'k': inflight = strtol(optarg, NULL, 10); break;
		case 't': seconds = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (port < 1 || port > 65535 || nsrc < 1 || nsrc > MAX_NSRC || count < 1 ||
	    inflight < 1 || inflight > MAX_INFLIGHT || (sport_base >= 0 && !src))
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "serve") == 0)
		return serve((uint16_t)port, seconds > 0 ? seconds : 1800);
	if (strcmp(argv[1], "run") == 0 && dst)
		return run(dst, (uint16_t)port, src, (unsigned)nsrc, sport_base, count, (int)inflight,
			   seconds > 0 ? seconds : 10);
	usage();
	return 2;
}
