/*
 * synprobe.c - raw-socket SYN (and scan probe) prober for the benchmark,
 * IPv4 and IPv6.
 *
 *   synprobe rtt   --src A --dst B --list FILE [--sport-base N] [--gap-us N]
 *                  [--timeout-ms N]
 *   synprobe batch --src A --dst B --list FILE [--sport-base N] [--gap-us N]
 *                  [--retry-ms N] [--timeout-ms N]
 *   synprobe connect --src A --dst B --list FILE [--gap-us N] [--timeout-ms N]
 *
 * FILE has one probe per line: "LABEL DPORT ISN TSVAL [FLAGS]" (numbers
 * decimal or 0x-hex; FLAGS the TCP flags as letters of FSRPAU, "-" for
 * none, default S); probe i uses source port sport-base + i (default
 * 40000).  A and B are both IPv4 or both IPv6.  Each SYN looks like Linux's
 * (MSS, SACK_PERM, TS, NOP, WS); any other probe is a bare header as nmap
 * sends it, ISN as its sequence number and ACK flag or not, an
 * acknowledgement number of ISN ^ 0x5a5a5a5a.  Answers are read on a raw
 * TCP socket bound to A with kernel receive timestamps (SO_TIMESTAMPNS), so
 * the time is the answer's arrival in this namespace, not when this program
 * got to run.
 *
 * rtt:   one probe at a time, in file order, gap-us (default 200) apart;
 *        prints "LABEL FLAGS RTT_NS" per probe (FLAGS SA, R, RA, ... or "-"
 *        and RTT -1 when nothing came within timeout-ms, default 1000).
 * batch: sends the probes gap-us (default 10000) apart without waiting,
 *        resends a probe once (same ISN and TSval, as a kernel's SYN
 *        retransmission) if nothing came after retry-ms (default 1000, 0 =
 *        never), stops timeout-ms (default 3000) after a probe's first SYN;
 *        prints "LABEL FLAGS RTT_NS TRIES" per probe, then
 *        "summary: probes=N synack=N synack_first_try=N rst=N none=N".
 * connect: no raw sockets: an ordinary blocking connect() per line (its
 *        DPORT; ISN and TSVAL are ignored), timed with CLOCK_MONOTONIC from
 *        the call to its return, then closed with an RST (SO_LINGER 0) so no
 *        TIME_WAIT piles up; prints "LABEL ok|fail NS".  This is what an
 *        application sees, client-role knocking included.
 * The host's own TCP answers the SYN-ACKs with RSTs (no socket here), which
 * cleans up the server side.  Every loop is bounded by count and time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../tests/unit/pktbuild.h"

enum { PKT_MAX = 80, MAX_PROBES = 100000, LABEL_LEN = 24, TCP_SYN = 0x02 };

struct probe {
	char label[LABEL_LEN];
	uint16_t dport, sport;
	uint32_t isn, tsval;
	uint8_t out_flags;		/* the probe's TCP flags */
	int64_t first_sent, last_sent;	/* CLOCK_REALTIME ns */
	int64_t rtt;			/* from the latest SYN, -1 none */
	int tries;
	uint8_t flags;			/* of the answer */
	int done;
};

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The probe from src to dst (family's addresses): a SYN as Linux sends it, or a scan probe. */
static size_t build(uint8_t *p, int family, const uint8_t *src, const uint8_t *dst,
		    const struct probe *pr, uint16_t ipid)
{
	uint8_t opt[20];
	int syn = pr->out_flags == TCP_SYN;

	return pb_build(p, &(struct pb_spec){
		.family = family, .src = src, .dst = dst, .ip_id = ipid, .sport = pr->sport,
		.dport = pr->dport, .seq = pr->isn, .ack = syn ? 0 : pr->isn ^ 0x5a5a5a5au,
		.flags = pr->out_flags, .window = syn ? 64240 : 1024, .opt = opt,
		.opt_len = syn ? pb_opt_linux_syn(opt, pr->tsval) : 0 }, NULL);
}

/* "S", "FPU", "-": TCP flag bits; -1 for a letter that is none. */
static int parse_flags(const char *s)
{
	static const char names[] = "FSRPAU";
	int f = 0;

	if (strcmp(s, "-") == 0)
		return 0;
	for (; *s; s++) {
		const char *c = strchr(names, *s);

		if (!c)
			return -1;
		f |= 1 << (c - names);
	}
	return f;
}

static const char *flagstr(uint8_t f, char out[9])
{
	static const char names[] = "FSRPAUEC";
	size_t n = 0;

	for (int i = 0; i < 8; i++)
		if (f & (1 << i))
			out[n++] = names[i];
	if (n == 0)
		out[n++] = '-';
	out[n] = '\0';
	return out;
}

struct ctx {
	int tx, rx;
	int family;
	uint8_t src[16], dst[16];
	struct probe *p;
	size_t n;
	uint16_t sport_base;
	uint16_t ipid;
};

static int send_probe(struct ctx *c, struct probe *pr)
{
	uint8_t pkt[PKT_MAX];
	struct sockaddr_in to4 = { .sin_family = AF_INET };
	struct sockaddr_in6 to6 = { .sin6_family = AF_INET6 };
	size_t len = build(pkt, c->family, c->src, c->dst, pr, c->ipid++);
	int r;

	memcpy(&to4.sin_addr, c->dst, 4);
	memcpy(&to6.sin6_addr, c->dst, 16);
	pr->last_sent = realtime_ns();
	if (!pr->tries)
		pr->first_sent = pr->last_sent;
	pr->tries++;
	if (c->family == AF_INET)
		r = (int)sendto(c->tx, pkt, len, 0, (struct sockaddr *)&to4, sizeof(to4));
	else
		r = (int)sendto(c->tx, pkt, len, 0, (struct sockaddr *)&to6, sizeof(to6));
	if (r < 0) {
		perror("synprobe: sendto");
		return -1;
	}
	return 0;
}

/*
 * Reads answers for up to wait_ms; records each in its probe.  Returns the
 * number of answers recorded, -1 on error.
 */
static int receive(struct ctx *c, int wait_ms)
{
	uint8_t buf[2048];
	char cbuf[256];
	struct pollfd pfd = { .fd = c->rx, .events = POLLIN };
	int got = 0;

	if (poll(&pfd, 1, wait_ms) <= 0)
		return 0;
	for (;;) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		ssize_t len = recvmsg(c->rx, &mh, MSG_DONTWAIT);
		int64_t when = -1;

		if (len < 0)
			return errno == EAGAIN ? got : -1;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				when = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
			}
		}
		if (when < 0)
			when = realtime_ns();
		/* An IPv4 raw socket reads the IP header too; an IPv6 one does not. */
		size_t ihl = 0;
		if (c->family == AF_INET) {
			if (len < 40 || (buf[0] >> 4) != 4)
				continue;
			ihl = (size_t)(buf[0] & 15) * 4;
			if ((size_t)len < ihl + 20 || buf[9] != 6)
				continue;
		} else if (len < 20) {
			continue;
		}
		const uint8_t *t = buf + ihl;
		uint16_t sport = (uint16_t)(t[0] << 8 | t[1]), dport = (uint16_t)(t[2] << 8 | t[3]);
		uint16_t idx = (uint16_t)(dport - c->sport_base);

		if (idx >= c->n)
			continue;
		struct probe *pr = &c->p[idx];
		if (pr->done || !pr->tries || pr->dport != sport)
			continue;
		pr->flags = t[13];
		pr->rtt = when - pr->last_sent;
		pr->done = 1;
		got++;
	}
}

static size_t load(const char *path, struct probe *p, uint16_t sport_base)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t n = 0;

	if (!f) {
		perror(path);
		exit(1);
	}
	while (n < MAX_PROBES && n + sport_base < 65536 && fgets(line, sizeof(line), f)) {
		char label[LABEL_LEN], flags[8] = "S";
		unsigned long dport, isn, tsval;
		int fl;

		if (sscanf(line, "%23s %li %li %li %7s", label, (long *)&dport, (long *)&isn,
			   (long *)&tsval, flags) < 4 || (fl = parse_flags(flags)) < 0)
			continue;
		memset(&p[n], 0, sizeof(p[n]));
		p[n].out_flags = (uint8_t)fl;
		snprintf(p[n].label, sizeof(p[n].label), "%s", label);
		p[n].dport = (uint16_t)dport;
		p[n].isn = (uint32_t)isn;
		p[n].tsval = (uint32_t)tsval;
		p[n].sport = (uint16_t)(sport_base + n);
		p[n].rtt = -1;
		n++;
	}
	fclose(f);
	return n;
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_us(long us);

static int run_connect(const struct ctx *c, long gap_us, long timeout_ms)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct probe *pr = &c->p[i];
		struct sockaddr_in me4 = { .sin_family = AF_INET };
		struct sockaddr_in to4 = { .sin_family = AF_INET, .sin_port = htons(pr->dport) };
		struct sockaddr_in6 me6 = { .sin6_family = AF_INET6 };
		struct sockaddr_in6 to6 = { .sin6_family = AF_INET6, .sin6_port = htons(pr->dport) };
		int v4 = c->family == AF_INET;
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
		struct linger lg = { 1, 0 };
		int fd = socket(c->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int64_t t0, t1;
		int r;

		memcpy(&me4.sin_addr, c->src, 4);
		memcpy(&to4.sin_addr, c->dst, 4);
		memcpy(&me6.sin6_addr, c->src, 16);
		memcpy(&to6.sin6_addr, c->dst, 16);
		if (fd < 0 || bind(fd, v4 ? (struct sockaddr *)&me4 : (struct sockaddr *)&me6,
				   v4 ? sizeof(me4) : sizeof(me6)) < 0) {
			perror("synprobe: socket");
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		t0 = mono_ns();
		r = connect(fd, v4 ? (struct sockaddr *)&to4 : (struct sockaddr *)&to6,
			    v4 ? sizeof(to4) : sizeof(to6));
		t1 = mono_ns();
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
		printf("%s %s %lld\n", pr->label, r == 0 ? "ok" : "fail", (long long)(t1 - t0));
		sleep_us(gap_us);
	}
	return 0;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "src", required_argument, NULL, 's' }, { "dst", required_argument, NULL, 'd' },
		{ "list", required_argument, NULL, 'l' }, { "sport-base", required_argument, NULL, 'b' },
		{ "gap-us", required_argument, NULL, 'g' }, { "retry-ms", required_argument, NULL, 'r' },
		{ "timeout-ms", required_argument, NULL, 't' }, { NULL, 0, NULL, 0 }
	};
	const char *src = NULL, *dst = NULL;
	const char *list = NULL;
	long gap_us = -1, retry_ms = 1000, timeout_ms = -1;
	unsigned long sport_base = 40000;
	int ch, batch, one = 1, rcvbuf = 4 << 20;
	struct ctx c = { 0 };
	char fs[9];

	if (argc < 2 || (strcmp(argv[1], "rtt") && strcmp(argv[1], "batch") &&
			  strcmp(argv[1], "connect"))) {
		fprintf(stderr, "usage: synprobe rtt|batch|connect --src A --dst B --list FILE [...]\n");
		return 2;
	}
	batch = strcmp(argv[1], "batch") == 0;
	int conn = strcmp(argv[1], "connect") == 0;
	optind = 2;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'l': list = optarg; break;
		case 'b': sport_base = strtoul(optarg, NULL, 0); break;
		case 'g': gap_us = strtol(optarg, NULL, 0); break;
		case 'r': retry_ms = strtol(optarg, NULL, 0); break;
		case 't': timeout_ms = strtol(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!src || !dst || !list || sport_base == 0 || sport_base > 65000) {
		fprintf(stderr, "synprobe: --src, --dst and --list are required\n");
		return 2;
	}
	c.family = strchr(src, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(c.family, src, c.src) != 1 || inet_pton(c.family, dst, c.dst) != 1) {
		fprintf(stderr, "synprobe: --src and --dst: two addresses of one family\n");
		return 2;
	}
	if (gap_us < 0)
		gap_us = batch ? 10000 : 200;
	if (timeout_ms < 0)
		timeout_ms = batch ? 3000 : 1000;
	if (gap_us > 1000000 || timeout_ms > 10000 || retry_ms < 0) {
		fprintf(stderr, "synprobe: gap or timeout out of range\n");
		return 2;
	}
	c.sport_base = (uint16_t)sport_base;
	c.p = calloc(MAX_PROBES, sizeof(*c.p));
	if (!c.p)
		return 1;
	c.n = load(list, c.p, c.sport_base);
	if (conn)
		return run_connect(&c, gap_us, timeout_ms);

	struct sockaddr_in me4 = { .sin_family = AF_INET }, peer4 = { .sin_family = AF_INET };
	struct sockaddr_in6 me6 = { .sin6_family = AF_INET6 }, peer6 = { .sin6_family = AF_INET6 };
	int v4 = c.family == AF_INET;
	socklen_t alen = v4 ? sizeof(me4) : sizeof(me6);

	memcpy(&me4.sin_addr, c.src, 4);
	memcpy(&peer4.sin_addr, c.dst, 4);
	memcpy(&me6.sin6_addr, c.src, 16);
	memcpy(&peer6.sin6_addr, c.dst, 16);
	/* IPPROTO_RAW sends whole packets, IP header included, in either family. */
	c.tx = socket(c.family, SOCK_RAW, IPPROTO_RAW);
	c.rx = socket(c.family, SOCK_RAW, IPPROTO_TCP);
	if (c.tx < 0 || c.rx < 0 ||
	    bind(c.rx, v4 ? (struct sockaddr *)&me4 : (struct sockaddr *)&me6, alen) < 0 ||
	    connect(c.rx, v4 ? (struct sockaddr *)&peer4 : (struct sockaddr *)&peer6, alen) < 0 ||
	    setsockopt(c.rx, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0) {
		perror("synprobe: raw sockets");
		return 1;
	}
	setsockopt(c.rx, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	shutdown(c.tx, SHUT_RD);

	if (!batch) {
		for (size_t i = 0; i < c.n; i++) {
			struct probe *pr = &c.p[i];
			int64_t deadline;

			if (send_probe(&c, pr) < 0)
				return 1;
			deadline = pr->last_sent + timeout_ms * 1000000LL;
			while (!pr->done) {
				int64_t left = deadline - realtime_ns();

				if (left <= 0 || receive(&c, (int)(left / 1000000 + 1)) < 0)
					break;
			}
			printf("%s %s %lld\n", pr->label, pr->done ? flagstr(pr->flags, fs) : "-",
			       (long long)pr->rtt);
			sleep_us(gap_us);
		}
		return 0;
	}

	/* batch: one timeline of first sends, retries and answers. */
	size_t next = 0;
	int64_t start = realtime_ns();
	for (;;) {
		int64_t now = realtime_ns(), wake = INT64_MAX;
		size_t open = 0;

		if (next < c.n && now >= start + (int64_t)next * gap_us * 1000) {
			if (send_probe(&c, &c.p[next]) < 0)
				return 1;
			next++;
		}
		if (next < c.n)
			wake = start + (int64_t)next * gap_us * 1000;
		for (size_t i = 0; i < next; i++) {
			struct probe *pr = &c.p[i];
			int64_t end = pr->first_sent + timeout_ms * 1000000LL;

			if (pr->done || now >= end)
				continue;
			open++;
			if (retry_ms > 0 && pr->tries == 1) {
				int64_t due = pr->first_sent + retry_ms * 1000000LL;

				if (now >= due) {
					if (send_probe(&c, pr) < 0)
						return 1;
				} else if (due < wake) {
					wake = due;
				}
			}
			if (end < wake)
				wake = end;
		}
		if (next >= c.n && open == 0)
			break;
		now = realtime_ns();
		long wait_ms = wake > now ? (long)((wake - now) / 1000000) : 0;
		if (wait_ms > 50)
			wait_ms = 50;
		if (receive(&c, (int)wait_ms) < 0)
			break;
		if (now - start > (int64_t)(c.n * (size_t)gap_us * 1000) + 2 * timeout_ms * 1000000LL)
			break;	/* hard bound */
	}
	size_t synack = 0, first = 0, rst = 0, none = 0;
	for (size_t i = 0; i < c.n; i++) {
		struct probe *pr = &c.p[i];

		printf("%s %s %lld %d\n", pr->label, pr->done ? flagstr(pr->flags, fs) : "-",
		       (long long)pr->rtt, pr->tries);
		if (!pr->done)
			none++;
		else if ((pr->flags & 0x12) == 0x12) {
			synack++;
			if (pr->tries == 1)
				first++;
		} else if (pr->flags & 0x04)
			rst++;
	}
	printf("summary: probes=%zu synack=%zu synack_first_try=%zu rst=%zu none=%zu\n", c.n, synack,
	       first, rst, none);
	return 0;
}
