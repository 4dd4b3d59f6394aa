/*
 * qguard.c - the queue guard (see qguard.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

#include "common/log.h"
#include "common/marks.h"
#include "kernel/qguard.h"

enum {
	RX_BYTES = 1 << 17,		/* larger than any queue message (64 KiB copy at most) */
	TX_BYTES = 256,
	MAX_QUEUES = 64,
	MAX_ROUNDS = 64,		/* reads of one socket, each until it is empty */
	MAX_MSGS = 100000,		/* messages answered in all */
};

struct guard {
	struct marks m;
	bool fail_open;			/* the configuration's: no rule rejects a no-connection segment */
	char *rx;
	unsigned answered;
};

static void send_verdict(int fd, uint16_t queue, int type, uint32_t id, int verdict,
			 const uint32_t *mark)
{
	char buf[TX_BYTES];
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, type, queue);

	nfq_nlmsg_verdict_put(nlh, (int)id, verdict);
	if (mark)
		nfq_nlmsg_verdict_put_mark(nlh, *mark);
	/* Nothing to do about a failure: the queue is dropped at close either way. */
	if (send(fd, nlh, nlh->nlmsg_len, MSG_DONTWAIT) < 0)
		return;
}

struct qguard_answer qguard_decide(const struct marks *m, bool fail_open, uint32_t mark)
{
	uint32_t code = marks_code(m, mark);

	if (code == m->newsyn && code != 0)
		return (struct qguard_answer){ .verdict = NF_ACCEPT, .set_mark = true,
					       .mark = marks_own(m, mark) };
	if (code == m->noconn && code != 0 && !fail_open)
		return (struct qguard_answer){ .verdict = NF_ACCEPT };
	return (struct qguard_answer){ .verdict = NF_DROP };
}

/* What the rules' bypass would do with one queued packet, done by verdict. */
static void answer(struct guard *g, int fd, const struct nlmsghdr *nlh)
{
	struct nlattr *attr[NFQA_MAX + 1] = { 0 };
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	const struct nfqnl_msg_packet_hdr *ph;
	struct qguard_answer a;
	uint32_t mark = 0;

	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR])
		return;
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	if (attr[NFQA_MARK])
		mark = ntohl(mnl_attr_get_u32(attr[NFQA_MARK]));
	a = qguard_decide(&g->m, g->fail_open, mark);
	g->answered++;
	send_verdict(fd, ntohs(nfg->res_id), NFQNL_MSG_VERDICT, ntohl(ph->packet_id), a.verdict,
		     a.set_mark ? &a.mark : NULL);
}

/*
 * Answers what one socket holds, round by round until it is empty.  The
 * packets the daemon had read and not answered carry smaller ids than the
 * first one waiting: they are sent round again, once, so they come back.
 */
static void answer_socket(struct guard *g, int fd)
{
	bool repeated = false;

	for (int round = 0; round < MAX_ROUNDS && g->answered < MAX_MSGS; round++) {
		bool any = false;
		ssize_t n;

		while (g->answered < MAX_MSGS &&
		       (n = recv(fd, g->rx, RX_BYTES, MSG_DONTWAIT)) > 0) {
			int len = (int)n;

			for (const struct nlmsghdr *nlh = (const void *)g->rx; mnl_nlmsg_ok(nlh, len);
			     nlh = mnl_nlmsg_next(nlh, &len)) {
				struct nlattr *attr[NFQA_MAX + 1] = { 0 };

				if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_QUEUE ||
				    NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_PACKET)
					continue;
				if (!repeated && nfq_nlmsg_parse(nlh, attr) >= 0 &&
				    attr[NFQA_PACKET_HDR]) {
					const struct nfqnl_msg_packet_hdr *ph =
						mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
					const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
					uint32_t first = ntohl(ph->packet_id);

					repeated = true;
					if (first > 1)
						send_verdict(fd, ntohs(nfg->res_id),
							     NFQNL_MSG_VERDICT_BATCH, first - 1,
							     NF_REPEAT, NULL);
				}
				answer(g, fd, nlh);
				any = true;
			}
		}
		if (!any)
			break;
	}
}

static void guard_main(int rfd, const int *fds, size_t n, struct guard *g)
{
	sigset_t all;
	char b;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "knockgw-guard", 0, 0, 0);
	while (read(rfd, &b, 1) < 0 && errno == EINTR)
		;
	/* EOF (or a byte nobody sends): the daemon is gone. */
	/*
	 * Each socket closed as soon as it is answered: its queue goes with
	 * it, and the bypass answers from then on.  Left to the exit, the
	 * close would wait for this process's memory to go (a copy of the
	 * daemon's), the very window the guard is for.
	 */
	for (size_t i = 0; i < n; i++) {
		answer_socket(g, fds[i]);
		close(fds[i]);
	}
}

/* Closes every descriptor but keep[0..n) (sorted or not). */
static void close_others(const int *keep, size_t n)
{
	int maxfd = (int)sysconf(_SC_OPEN_MAX);

	if (maxfd < 0 || maxfd > 65536)
		maxfd = 65536;
	for (int fd = 0; fd < maxfd; fd++) {
		bool kept = false;

		for (size_t i = 0; i < n && !kept; i++)
			kept = keep[i] == fd;
		if (!kept)
			close(fd);
	}
}

int qguard_start(const int *fds, size_t n, struct conf *c)
{
	int p[2], keep[MAX_QUEUES + 1], r;
	pid_t mid;

	if (n == 0 || n > MAX_QUEUES)
		return -EINVAL;
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		log_warn("queue guard: pipe");
		return r;
	}
	mid = fork();
	if (mid < 0) {
		r = -errno;
		log_warn("queue guard: fork");
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (mid == 0) {
		/* The middle process: forks the guard and goes, so it is nobody's child. */
		struct guard g = { .m = c->marks, .fail_open = c->fail_open };

		conf_free(c);	/* the copy of the keys, wiped */
		close(p[1]);
		if (fork() != 0)
			_exit(0);
		memcpy(keep, fds, n * sizeof(*fds));
		keep[n] = p[0];
		close_others(keep, n + 1);
		g.rx = malloc(RX_BYTES);
		if (g.rx)
			guard_main(p[0], fds, n, &g);
		_exit(0);
	}
	close(p[0]);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	return p[1];
}
