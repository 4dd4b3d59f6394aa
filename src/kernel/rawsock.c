/*
 * rawsock.c - see rawsock.h.
 */
#include <errno.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/rst.h"
#include "kernel/rawsock.h"

#ifndef IPV6_HDRINCL
#define IPV6_HDRINCL 36
#endif

enum {
	HOPLIMIT_CACHE = 16,
	MS_PER_DAY = 24 * 60 * 60 * 1000,
	RST_BATCH = 64,			/* answers sent with one sendmmsg() */
};

/* One answer waiting for the batch's sendmmsg(). */
struct outgoing {
	uint8_t pkt[RST_MAX_LEN];
	union {
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} to;
};

struct rawsock {
	int fd4, fd6;
	struct outgoing out4[RST_BATCH], out6[RST_BATCH];
	struct mmsghdr msgs[RST_BATCH];
	struct iovec iov[RST_BATCH];
	unsigned n4, n6;
	size_t len4[RST_BATCH], len6[RST_BATCH];
	uint64_t send_errors;
	uint64_t refreshed;
	struct rst_params rp4, rp6;	/* rp6.ttl unused: per interface */
	int hop_default;
	struct {
		uint32_t ifindex;
		int hop;
	} hops[HOPLIMIT_CACHE];
};

static long read_sysctl(const char *path, long dflt)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

static void refresh(struct rawsock *rs, uint64_t now)
{
	long auto_fl, reflect;

	if (rs->refreshed == now && now != 0)
		return;
	rs->refreshed = now;
	rs->rp4.ttl = (uint8_t)read_sysctl("/proc/sys/net/ipv4/ip_default_ttl", 64);
	auto_fl = read_sysctl("/proc/sys/net/ipv6/auto_flowlabels", 1);
	reflect = read_sysctl("/proc/sys/net/ipv6/flowlabel_reflect", 0);
	/* 1 (opt-out) and 3 (forced) label a socket that did not opt out. */
	rs->rp6.flowlabel_auto = auto_fl == 1 || auto_fl == 3;
	rs->rp6.flowlabel_reflect = (reflect & 2) != 0;
	rs->rp6.flowlabel_state_ranges =
		read_sysctl("/proc/sys/net/ipv6/flowlabel_state_ranges", 0) != 0;
	rs->hop_default = (int)read_sysctl("/proc/sys/net/ipv6/conf/default/hop_limit", 64);
	memset(rs->hops, 0, sizeof(rs->hops));
}

static uint8_t hop_limit(struct rawsock *rs, uint32_t ifindex)
{
	char name[IF_NAMESIZE], path[96];
	size_t slot = ifindex % HOPLIMIT_CACHE;

	if (ifindex == 0)
		return (uint8_t)rs->hop_default;
	if (rs->hops[slot].ifindex == ifindex)
		return (uint8_t)rs->hops[slot].hop;
	if (!if_indextoname(ifindex, name))
		return (uint8_t)rs->hop_default;
	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/hop_limit", name);
	rs->hops[slot].ifindex = ifindex;
	rs->hops[slot].hop = (int)read_sysctl(path, rs->hop_default);
	return (uint8_t)rs->hops[slot].hop;
}

struct rawsock *rawsock_open(void)
{
	struct rawsock *rs = calloc(1, sizeof(*rs));
	int one = 1;

	if (!rs)
		return NULL;
	rs->fd4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	rs->fd6 = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (rs->fd4 < 0 || rs->fd6 < 0 ||
	    setsockopt(rs->fd6, IPPROTO_IPV6, IPV6_HDRINCL, &one, sizeof(one)) < 0) {
		int saved = errno;

		rawsock_close(rs);
		errno = saved;
		return NULL;
	}
	/* Raw sockets also receive; we never read, so take nothing in. */
	shutdown(rs->fd4, SHUT_RD);
	shutdown(rs->fd6, SHUT_RD);
	randombytes_buf(rs->rp6.flowlabel_key, sizeof(rs->rp6.flowlabel_key));
	refresh(rs, 0);
	return rs;
}

void rawsock_close(struct rawsock *rs)
{
	if (!rs)
		return;
	if (rs->fd4 >= 0)
		close(rs->fd4);
	if (rs->fd6 >= 0)
		close(rs->fd6);
	sodium_memzero(rs, sizeof(*rs));
	free(rs);
}

/* Sends one family's queued answers in one system call. */
static int send_batch(int fd, struct outgoing *out, unsigned n, struct mmsghdr *msgs,
		      struct iovec *iov, socklen_t tolen, size_t *lens)
{
	unsigned sent = 0;
	int failed = 0;

	for (unsigned i = 0; i < n; i++) {
		iov[i] = (struct iovec){ .iov_base = out[i].pkt, .iov_len = lens[i] };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &out[i].to,
							 .msg_namelen = tolen,
							 .msg_iov = &iov[i],
							 .msg_iovlen = 1 } };
	}
	/* Bounded: each round sends at least one or counts it as failed. */
	while (sent < n) {
		int r = sendmmsg(fd, msgs + sent, n - sent, MSG_DONTWAIT);

		if (r <= 0) {
			failed++;
			sent++;
		} else {
			sent += (unsigned)r;
		}
	}
	return failed;
}

int rawsock_flush(struct rawsock *rs)
{
	int failed = 0;

	if (rs->n4)
		failed += send_batch(rs->fd4, rs->out4, rs->n4, rs->msgs, rs->iov,
				     sizeof(struct sockaddr_in), rs->len4);
	if (rs->n6)
		failed += send_batch(rs->fd6, rs->out6, rs->n6, rs->msgs, rs->iov,
				     sizeof(struct sockaddr_in6), rs->len6);
	rs->n4 = rs->n6 = 0;
	rs->send_errors += (uint64_t)failed;
	return failed;
}

/* The time an IPv4 timestamp option records: ms since midnight UTC (RFC 791). */
static uint32_t ip_timestamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)(((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000) % MS_PER_DAY);
}

int rawsock_answer_closed(struct rawsock *rs, const uint8_t *pkt, const struct pkt_view *v,
			  uint32_t indev, uint32_t skbinfo, uint64_t now)
{
	struct outgoing *o;
	size_t len;

	refresh(rs, now);
	/*
	 * With GSO queues the kernel hands us local packets before their sum;
	 * without CSUM_NOTVERIFIED it has checked the sum already (the NIC, or
	 * conntrack in prerouting), and its TCP will not look again.
	 */
	rs->rp4.csum_unfinished = rs->rp6.csum_unfinished = (skbinfo & NFQA_SKB_CSUMNOTREADY) != 0;
	rs->rp4.csum_unverified = rs->rp6.csum_unverified =
		(skbinfo & NFQA_SKB_CSUM_NOTVERIFIED) != 0;
	if (v->family == AF_INET)
		rs->rp4.ip_ts_ms = ip_timestamp();
	if (rs->n4 == RST_BATCH || rs->n6 == RST_BATCH)
		rawsock_flush(rs);
	if (v->family == AF_INET) {
		o = &rs->out4[rs->n4];
		len = rst_build(pkt, v, &rs->rp4, o->pkt);
		if (len == 0)
			return 0;
		o->to.in4 = (struct sockaddr_in){ .sin_family = AF_INET };
		memcpy(&o->to.in4.sin_addr, pkt_src(pkt, v), 4);
		rs->len4[rs->n4++] = len;
	} else {
		o = &rs->out6[rs->n6];
		rs->rp6.ttl = hop_limit(rs, indev);
		len = rst_build(pkt, v, &rs->rp6, o->pkt);
		if (len == 0)
			return 0;
		o->to.in6 = (struct sockaddr_in6){ .sin6_family = AF_INET6 };
		memcpy(&o->to.in6.sin6_addr, pkt_src(pkt, v), 16);
		o->to.in6.sin6_scope_id = indev;	/* needed for link-local peers */
		rs->len6[rs->n6++] = len;
	}
	return 1;
}
