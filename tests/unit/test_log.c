/*
 * test_log.c - messages a queue thread holds until its verdicts are out
 * (log.h, log_later): nothing is written before log_later_flush(), then
 * every held line in the order it came; the rate limit's turn and the
 * level are taken when the message is held; the event's strings are
 * copies; a full holder writes at once.  Messages go to stderr, which the
 * test points at a file of its own and reads back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "unit.h"

static FILE *out;	/* what stderr writes, read back */

/* Everything written to stderr since the last call. */
static const char *written(void)
{
	static char buf[16384];
	size_t n;

	fflush(stderr);
	n = fread(buf, 1, sizeof(buf) - 1, out);
	buf[n] = '\0';
	clearerr(out);
	return buf;
}

static unsigned lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int main(void)
{
	static struct log_later l;
	struct log_ratelimit rl = { .interval = 10, .burst = 100 };
	char src[64] = "192.0.2.1";
	char path[] = "/tmp/test_log.XXXXXX";
	int fd = mkstemp(path);
	const char *w;

	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0 || !(out = fopen(path, "r"))) {
		perror("test_log: stderr to a file");
		return 1;
	}
	unlink(path);
	log_init(1, LOG_INFO, "test_log");

	/* Held, not written; then written, in order, once. */
	log_peer_event_later(&l, &rl, 100, LOG_INFO,
			     &(struct log_event){ LOG_EV_KNOCK_ACCEPTED, src, 22, "alice" },
			     "knock from %s accepted", src);
	log_peer_event_later(&l, &rl, 100, LOG_INFO, NULL, "second %d", 2);
	CHECK_EQ_U(l.n, 2, "two messages held");
	CHECK(strcmp(written(), "") == 0, "nothing written before the flush");
	/* The event's strings are the holder's copies. */
	strcpy(src, "203.0.113.9");
	CHECK(l.m[0].has_event && l.m[0].ev.source == l.m[0].source &&
		      strcmp(l.m[0].ev.source, "192.0.2.1") == 0 && l.m[0].ev.port == 22 &&
		      strcmp(l.m[0].ev.key, "alice") == 0,
	      "the event's fields are copies, as they were at the call");
	CHECK(!l.m[1].has_event, "a message without an event has none");
	log_later_flush(&l);
	w = written();
	CHECK(strcmp(w, "knock from 192.0.2.1 accepted\nsecond 2\n") == 0,
	      "the flush writes both, in order (got \"%s\")", w);
	CHECK_EQ_U(l.n, 0, "the flush empties the holder");
	log_later_flush(&l);
	CHECK(strcmp(written(), "") == 0, "a second flush writes nothing");

	/* Below the level: neither held nor written. */
	log_peer_event_later(&l, &rl, 100, LOG_DEBUG, NULL, "debug");
	CHECK_EQ_U(l.n, 0, "a message below the level is not held");

	/* The rate limit's turn is taken when the message is held. */
	{
		struct log_ratelimit tight = { .interval = 10, .burst = 2 };

		for (int i = 0; i < 5; i++)
			log_peer_event_later(&l, &tight, 200, LOG_INFO, NULL, "limited %d", i);
		CHECK_EQ_U(l.n, 2, "the burst (2) is held, the rest suppressed");
		log_later_flush(&l);
		w = written();
		CHECK(strcmp(w, "limited 0\nlimited 1\n") == 0, "only the burst is written (got \"%s\")",
		      w);
	}

	/* Full: the next message goes out at once, the held ones at the flush. */
	for (int i = 0; i < LOG_LATER_MAX; i++)
		log_peer_event_later(&l, &rl, 300, LOG_INFO, NULL, "held %d", i);
	CHECK(strcmp(written(), "") == 0, "a full holder has written nothing yet");
	log_peer_event_later(&l, &rl, 300, LOG_INFO, NULL, "at once");
	CHECK(strcmp(written(), "at once\n") == 0, "past its room a message is written at once");
	CHECK_EQ_U(l.n, LOG_LATER_MAX, "the holder keeps what it held");
	log_later_flush(&l);
	CHECK_EQ_U(lines(written()), LOG_LATER_MAX, "the flush writes the held ones");

	/* A long message is cut to the holder's line, not past it. */
	{
		char big[LOG_LATER_LEN * 2];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		log_peer_event_later(&l, &rl, 400, LOG_INFO, NULL, "%s", big);
		log_later_flush(&l);
		w = written();
		CHECK_EQ_U(strlen(w), LOG_LATER_LEN, "a long message: %u characters and a newline",
			   LOG_LATER_LEN - 1);
	}
	return unit_done("log");
}
