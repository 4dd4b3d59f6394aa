/*
 * nfq_min.c - the reference for syn_rate_ratio: the least a program can do
 * with an NFQUEUE queue.  It accepts every packet (-d: drops), with the same queue
 * settings as knockgw (copy range, maxlen, 8 MB forced receive buffer, 10 ms
 * receive timeout, 64 messages per recvmmsg) and one NFQNL_MSG_VERDICT_BATCH
 * per recvmmsg.  libmnl + libnetfilter_queue's nlmsg API, nothing else.
 *
 *   nfq_min [-n QUEUE] [-r COPY_RANGE] [-m MAXLEN] [-s SECONDS] [-d] [-M MARK]
 *
 * -d drops every packet instead (the reference for a daemon that answers
 * with on_fail = "drop").  -M sets the packet mark in each verdict (the
 * reference for a daemon letting a knock through: with the mark knockgw's
 * nat rule spares, connect_added_floor_us).
 * Prints "ready: queue N" once bound; "counters: queued=N verdicts=N
 * enobufs=N" on SIGUSR1 and at exit (SIGTERM/SIGINT, or after SECONDS,
 * default 600, so that it never outlives a benchmark).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

enum {
	BATCH = 64,
	RCVBUF_BYTES = 8 << 20,
	RCV_TIMEOUT_US = 10000,
	MSG_OVERHEAD = 1024,
};

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t dump_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_requested = 1;
	else
		stop_requested = 1;
}

static int cfg_send(struct mnl_socket *nl, struct nlmsghdr *nlh)
{
	char buf[8192];
	unsigned portid = mnl_socket_get_portid(nl);
	int ret;

	nlh->nlmsg_seq = (uint32_t)time(NULL);
	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (ret < 0)
		return -1;
	return mnl_cb_run(buf, (size_t)ret, nlh->nlmsg_seq, portid, NULL, NULL) < 0 ? -1 : 0;
}

static void dump(unsigned long long queued, unsigned long long verdicts, unsigned long long enobufs)
{
	printf("counters: queued=%llu verdicts=%llu enobufs=%llu\n", queued, verdicts, enobufs);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	unsigned qnum = 0, copy_range = 512, maxlen = 4096, seconds = 600, verdict = NF_ACCEPT;
	unsigned long mark = 0;
	int with_mark = 0;
	unsigned long long queued = 0, verdicts = 0, enobufs = 0;
	struct mnl_socket *nl;
	struct sigaction sa = { .sa_handler = on_signal };
	struct timeval tv = { 0, RCV_TIMEOUT_US };
	static struct mmsghdr msgs[BATCH];
	static struct iovec iovs[BATCH];
	char cfg[8192], vbuf[512];
	size_t bufsize;
	uint8_t *rx;
	time_t end;
	int fd, size = RCVBUF_BYTES, ch;

	while ((ch = getopt(argc, argv, "n:r:m:s:dM:")) != -1) {
		switch (ch) {
		case 'n': qnum = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': copy_range = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': maxlen = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': seconds = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': verdict = NF_DROP; break;
		case 'M': mark = strtoul(optarg, NULL, 0); with_mark = 1; break;
		default:
			fprintf(stderr, "usage: nfq_min [-n QUEUE] [-r COPY_RANGE] [-m MAXLEN] [-s SECONDS] [-d] [-M MARK]\n");
			return 2;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	bufsize = copy_range + MSG_OVERHEAD;
	rx = malloc(BATCH * bufsize);
	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!rx || !nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("nfq_min: netlink");
		return 1;
	}
	fd = mnl_socket_get_fd(nl);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		perror("nfq_min: SO_RCVBUFFORCE");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		perror("nfq_min: SO_RCVTIMEO");

	struct nlmsghdr *nlh = nfq_nlmsg_put(cfg, NFQNL_MSG_CONFIG, (int)qnum);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	if (cfg_send(nl, nlh) < 0) {
		perror("nfq_min: bind queue");
		return 1;
	}
	nlh = nfq_nlmsg_put(cfg, NFQNL_MSG_CONFIG, (int)qnum);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, (int)copy_range);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, maxlen);
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(0));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO));
	if (cfg_send(nl, nlh) < 0) {
		perror("nfq_min: configure queue");
		return 1;
	}
	for (unsigned i = 0; i < BATCH; i++) {
		iovs[i].iov_base = rx + i * bufsize;
		iovs[i].iov_len = bufsize;
		msgs[i].msg_hdr.msg_iov = &iovs[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	printf("ready: queue %u\n", qnum);
	fflush(stdout);

	end = time(NULL) + seconds;
	while (!stop_requested && time(NULL) < end) {
		uint32_t last_id = 0;
		unsigned got = 0;
		int n;

		if (dump_requested) {
			dump_requested = 0;
			dump(queued, verdicts, enobufs);
		}
		n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == ENOBUFS)
				enobufs++;
			else if (errno != EAGAIN && errno != EINTR) {
				perror("nfq_min: recvmmsg");
				break;
			}
			continue;
		}
		for (int i = 0; i < n; i++) {
			const struct nlmsghdr *h = iovs[i].iov_base;
			int len = (int)msgs[i].msg_len;

			for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
				struct nlattr *attr[NFQA_MAX + 1] = { 0 };
				const struct nfqnl_msg_packet_hdr *ph;

				if (NFNL_MSG_TYPE(h->nlmsg_type) != NFQNL_MSG_PACKET ||
				    nfq_nlmsg_parse(h, attr) < 0 || !attr[NFQA_PACKET_HDR])
					continue;
				ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
				last_id = ntohl(ph->packet_id);
				got++;
			}
		}
		if (got == 0)
			continue;
		queued += got;
		/* One message answers every queued id up to last_id. */
		nlh = nfq_nlmsg_put(vbuf, NFQNL_MSG_VERDICT_BATCH, (int)qnum);
		nfq_nlmsg_verdict_put(nlh, (int)last_id, (int)verdict);
		if (with_mark)
			nfq_nlmsg_verdict_put_mark(nlh, (uint32_t)mark);
		if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
			perror("nfq_min: verdict");
		else
			verdicts += got;
	}
	dump(queued, verdicts, enobufs);
	nlh = nfq_nlmsg_put(cfg, NFQNL_MSG_CONFIG, (int)qnum);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_UNBIND);
	mnl_socket_sendto(nl, nlh, nlh->nlmsg_len);
	mnl_socket_close(nl);
	free(rx);
	return 0;
}
