/*
 * drainmon.c - times how fast a stopped NFQUEUE reader drains its backlog.
 *
 *   drainmon -p PID -q FIRST_QUEUE [-c COUNT] [-t SECONDS] [-i POLL_US]
 *   drainmon -w SECONDS -q FIRST_QUEUE [-c COUNT]
 *
 * Run in the reader's network namespace while the reader (knockgw or
 * nfq_min) is stopped (SIGSTOP) with packets waiting in its queues.  It
 * reads queue_total of queues FIRST..FIRST+COUNT-1 from
 * /proc/net/netfilter/nfnetlink_queue (packets handed to the reader and not
 * yet given a verdict), sends SIGCONT to PID, and polls every POLL_US
 * (default 500) until the total is 0 or SECONDS (default 10) pass.  Prints
 * "backlog=N per_queue=a,b,.. usecs=T first_us=F rate=PPS timeout=0|1":
 * rate = backlog / time to empty, the end taken halfway between the last
 * poll that saw packets and the first that saw none; first_us = time until
 * the total first fell.  It keeps the file open and sleeps between polls, so
 * it takes little CPU from the reader (which may need both CPUs).
 *
 * With -w it only watches for SECONDS (at most 60) and prints "decided=N
 * seconds=S rate=PPS queue_dropped=N user_dropped=N": packets that got a
 * verdict in the window (ids handed out - dropped at the socket - still
 * waiting, from the same file) and the kernel's drops (queue full, socket
 * full) in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAXQ = 16 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct qsum {
	long long decided, qdropped, udropped;
};

/*
 * Fills totals[0..count-1]; returns their sum, or -1 if unreadable.  sum,
 * if not NULL, gets the verdict and drop counts summed over the queues.
 */
static int proc_fd = -1;

static long long read_totals(unsigned first, unsigned count, unsigned long totals[MAXQ],
			     struct qsum *sum_out)
{
	char buf[16384];
	ssize_t n;
	long long sum = 0;

	if (proc_fd < 0)
		proc_fd = open("/proc/net/netfilter/nfnetlink_queue", O_RDONLY | O_CLOEXEC);
	if (proc_fd < 0)
		return -1;
	n = pread(proc_fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	memset(totals, 0, MAXQ * sizeof(totals[0]));
	if (sum_out)
		memset(sum_out, 0, sizeof(*sum_out));
	for (char *line = buf; line && *line; ) {
		char *next = strchr(line, '\n');
		unsigned long num, portid, total, mode, range, qdrop, udrop, idseq;

		if (next)
			*next++ = '\0';
		if (sscanf(line, "%lu %lu %lu %lu %lu %lu %lu %lu", &num, &portid, &total, &mode,
			   &range, &qdrop, &udrop, &idseq) == 8 && num >= first &&
		    num < first + count) {
			totals[num - first] = total;
			sum += (long long)total;
			if (sum_out) {
				sum_out->decided += (long long)idseq - (long long)udrop -
						    (long long)total;
				sum_out->qdropped += (long long)qdrop;
				sum_out->udropped += (long long)udrop;
			}
		}
		line = next;
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned first = 0, count = 1, poll_us = 500;
	double seconds = 10, watch = 0;
	unsigned long totals[MAXQ];
	pid_t pid = 0;
	long long backlog, cur = 0;
	uint64_t start, first_fall = 0, end, deadline, last_busy;
	int ch, timeout = 0;

	while ((ch = getopt(argc, argv, "p:q:c:t:i:w:")) != -1) {
		switch (ch) {
		case 'p': pid = (pid_t)strtol(optarg, NULL, 10); break;
		case 'q': first = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'c': count = (unsigned)strtoul(optarg, NULL, 0); break;
		case 't': seconds = strtod(optarg, NULL); break;
		case 'i': poll_us = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'w': watch = strtod(optarg, NULL); break;
		default:
			fprintf(stderr, "usage: drainmon -p PID -q FIRST [-c COUNT] [-t S] [-i US]\n");
			return 2;
		}
	}
	if (watch > 0) {
		struct qsum a, b;
		uint64_t t0, t1;

		if (watch > 60 || count == 0 || count > MAXQ) {
			fprintf(stderr, "drainmon: bad arguments\n");
			return 2;
		}
		t0 = now_ns();
		if (read_totals(first, count, totals, &a) < 0) {
			perror("drainmon: /proc/net/netfilter/nfnetlink_queue");
			return 1;
		}
		struct timespec ts = { (time_t)watch, (long)((watch - (double)(time_t)watch) * 1e9) };
		nanosleep(&ts, NULL);
		read_totals(first, count, totals, &b);
		t1 = now_ns();
		double s = (double)(t1 - t0) / 1e9;
		printf("decided=%lld seconds=%.3f rate=%.0f queue_dropped=%lld user_dropped=%lld\n",
		       b.decided - a.decided, s, (double)(b.decided - a.decided) / s,
		       b.qdropped - a.qdropped, b.udropped - a.udropped);
		return 0;
	}
	if (pid <= 0 || count == 0 || count > MAXQ || seconds <= 0 || seconds > 60 || poll_us == 0) {
		fprintf(stderr, "drainmon: bad arguments\n");
		return 2;
	}
	backlog = read_totals(first, count, totals, NULL);
	if (backlog < 0) {
		perror("drainmon: /proc/net/netfilter/nfnetlink_queue");
		return 1;
	}
	printf("backlog=%lld per_queue=", backlog);
	for (unsigned i = 0; i < count; i++)
		printf("%s%lu", i ? "," : "", totals[i]);
	start = now_ns();
	if (kill(pid, SIGCONT) < 0) {
		perror("\ndrainmon: SIGCONT");
		return 1;
	}
	deadline = start + (uint64_t)(seconds * 1e9);
	end = last_busy = start;
	while (backlog > 0) {
		struct timespec ts = { 0, (long)poll_us * 1000 };

		nanosleep(&ts, NULL);
		cur = read_totals(first, count, totals, NULL);
		end = now_ns();
		if (cur < backlog && !first_fall)
			first_fall = end;
		if (cur <= 0) {
			end = last_busy + (end - last_busy) / 2;
			break;
		}
		last_busy = end;
		if (end > deadline) {
			timeout = 1;
			break;
		}
	}
	double us = (double)(end - start) / 1e3;
	printf(" usecs=%.0f first_us=%.0f rate=%.0f timeout=%d\n", us,
	       first_fall ? (double)(first_fall - start) / 1e3 : 0.0,
	       us > 0 ? (double)(backlog - (cur > 0 ? cur : 0)) / us * 1e6 : 0.0, timeout);
	return 0;
}
