/*
 * synflood.c - a bounded generator of invalid SYNs for the benchmark.
 *
 *   synflood --dst ADDR --dport N [--src ADDR] [--nsrc N] [--count N]
 *            [--seconds S] [--rate PPS] [--batch N] [--seed N]
 *
 * IPv4 SYNs with Linux-like options (MSS, SACK_PERM, timestamps, window
 * scale) and random ISNs and TSvals, sent with sendmmsg() on a raw socket.
 * Every packet has its own 4-tuple: source address --src + (i mod nsrc)
 * (default 1 address), source port cycling through 1024..65535.  Stops after
 * --count packets (default 100000) or --seconds (default 10), whichever comes
 * first; --rate paces it (packets per second, 0 = as fast as it goes).
 * Prints "sent=N errors=N seconds=S rate=PPS".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../tests/unit/pktbuild.h"

enum { PKT_LEN = 60, MAX_BATCH = 1024 };

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A SYN as Linux sends it, from src to dst (host order). */
static void build(uint8_t *p, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	uint8_t s[4], d[4], opt[20];
	uint16_t ipid = (uint16_t)(rnd() & 0xffff);
	uint32_t isn = rnd();

	pb_put32(s, src);
	pb_put32(d, dst);
	pb_build(p, &(struct pb_spec){
		.family = AF_INET, .src = s, .dst = d, .ip_id = ipid, .sport = sport,
		.dport = dport, .seq = isn, .flags = 0x02, .window = 64240, .opt = opt,
		.opt_len = pb_opt_linux_syn(opt, rnd()) }, NULL);
}

static void usage(void)
{
	fprintf(stderr, "usage: synflood --dst ADDR --dport N [--src ADDR] [--nsrc N] [--count N] "
			"[--seconds S] [--rate PPS] [--batch N] [--seed N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dst", required_argument, NULL, 'd' }, { "dport", required_argument, NULL, 'p' },
		{ "src", required_argument, NULL, 's' }, { "nsrc", required_argument, NULL, 'n' },
		{ "count", required_argument, NULL, 'c' }, { "seconds", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' }, { "batch", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 'S' }, { NULL, 0, NULL, 0 }
	};
	static uint8_t pkts[MAX_BATCH][PKT_LEN];
	static struct mmsghdr msgs[MAX_BATCH];
	static struct iovec iovs[MAX_BATCH];
	struct in_addr src = { htonl(0xc0000201) }, dst = { 0 };
	struct sockaddr_in to = { .sin_family = AF_INET };
	unsigned long long count = 100000, sent = 0, errors = 0, i = 0;
	unsigned nsrc = 1, batch = 64, dport = 0;
	double seconds = 10, rate = 0;
	uint64_t start, deadline, t;
	int fd, ch, sndbuf = 4 << 20;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'd': if (inet_pton(AF_INET, optarg, &dst) != 1) usage(); break;
		case 's': if (inet_pton(AF_INET, optarg, &src) != 1) usage(); break;
		case 'p': dport = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'n': nsrc = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'c': count = strtoull(optarg, NULL, 0); break;
		case 't': seconds = strtod(optarg, NULL); break;
		case 'r': rate = strtod(optarg, NULL); break;
		case 'b': batch = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'S': rng_state ^= strtoull(optarg, NULL, 0) * 0x2545f4914f6cdd1dULL; break;
		default: usage();
		}
	}
	if (!dst.s_addr || dport == 0 || dport > 65535 || nsrc == 0 || batch == 0 ||
	    batch > MAX_BATCH || seconds <= 0 || seconds > 600 || rate < 0)
		usage();
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		perror("synflood: raw socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	shutdown(fd, SHUT_RD);
	to.sin_addr = dst;
	for (unsigned k = 0; k < batch; k++) {
		iovs[k].iov_base = pkts[k];
		iovs[k].iov_len = PKT_LEN;
		msgs[k].msg_hdr.msg_iov = &iovs[k];
		msgs[k].msg_hdr.msg_iovlen = 1;
		msgs[k].msg_hdr.msg_name = &to;
		msgs[k].msg_hdr.msg_namelen = sizeof(to);
	}

	start = now_ns();
	deadline = start + (uint64_t)(seconds * 1e9);
	while (sent + errors < count && (t = now_ns()) < deadline) {
		unsigned n = batch;

		if (count - sent - errors < n)
			n = (unsigned)(count - sent - errors);
		if (rate > 0) {
			uint64_t due = start + (uint64_t)((double)(sent + errors) * 1e9 / rate);

			if (due > t) {
				struct timespec ts = { (time_t)(due / 1000000000ULL),
						       (long)(due % 1000000000ULL) };

				if (due > deadline)
					break;
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			}
		}
		for (unsigned k = 0; k < n; k++, i++)
			build(pkts[k], ntohl(src.s_addr) + (uint32_t)(i % nsrc), ntohl(dst.s_addr),
			      (uint16_t)(1024 + (i / nsrc) % 64512), (uint16_t)dport);
		int r = sendmmsg(fd, msgs, n, 0);
		if (r < 0) {
			errors += n;
			if (errno != ENOBUFS && errno != EAGAIN && errno != EPERM) {
				perror("synflood: sendmmsg");
				break;
			}
			continue;
		}
		sent += (unsigned)r;
		errors += n - (unsigned)r;
	}
	double secs = (double)(now_ns() - start) / 1e9;
	printf("sent=%llu errors=%llu seconds=%.3f rate=%.0f\n", sent, errors, secs,
	       secs > 0 ? (double)sent / secs : 0.0);
	close(fd);
	return 0;
}
