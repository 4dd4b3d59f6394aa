/*
 * test_ctlclient - the control socket's client (ctlclient.c) against its
 * server (ctl.c, ctlserve.c), in one thread and without root.
 *
 * Part 1, table rows: the STATUS reader, fed a reply in pieces of every
 * size.  Part 2, numbered steps: a real socket in a temporary directory.
 * A unix stream connect() completes as soon as the listener's backlog has
 * room, and a request fits the socket buffer, so the client connects and
 * sends, ctl_handle() serves, and the client reads, in turn; nothing
 * sleeps.  The deadlines are checked against the clock read around them.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "config/conf.h"
#include "ctl/ctl.h"
#include "ctl/ctlclient.h"
#include "datapath/client/intent.h"
#include "unit.h"

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* Part 1: the STATUS reader */

struct collect {
	char text[8192];
	size_t len;
	unsigned calls;
	unsigned stop_at;		/* 0: never; n: return -ECANCELED at call n */
};

static int collect_line(const char *line, size_t len, void *arg)
{
	struct collect *c = arg;

	c->calls++;
	if (c->stop_at && c->calls == c->stop_at)
		return -ECANCELED;
	if (c->len + len < sizeof(c->text)) {
		memcpy(c->text + c->len, line, len);
		c->len += len;
	}
	return 0;
}

struct status_row {
	int n;
	const char *reply;		/* NULL: built by the row (long lines) */
	bool eof;			/* the connection ends after the reply */
	unsigned stop_at;
	int want_r;
	enum ctl_status want_status;
	const char *want_text;		/* what fn got, concatenated */
	unsigned want_calls;
};

static const struct status_row status_rows[] = {
	{ 1, "a 1\nb 2\nEND\n", true, 0, 0, CTL_S_OK, "a 1\nb 2\n", 2 },
	{ 2, "END\n", true, 0, 0, CTL_S_OK, "", 0 },
	{ 3, "ERR not-root\n", true, 0, 0, CTL_S_NOT_ROOT, "", 0 },
	{ 4, "OK\na\nEND\n", true, 0, 0, CTL_S_OK, "a\n", 1 },
	{ 5, "a\nb", true, 0, -EPROTO, CTL_S_OK, "a\n", 1 },
	{ 6, "", true, 0, -EPROTO, CTL_S_OK, "", 0 },
	{ 7, "ERR bogus-word\n", true, 0, -EPROTO, CTL_S_OK, "", 0 },
	/* Only the first line can be the refusal; later ones are text. */
	{ 8, "a\nERR not-root\nOK\nEND\n", true, 0, 0, CTL_S_OK, "a\nERR not-root\nOK\n", 3 },
	/* Whatever follows END is not read. */
	{ 9, "END\nmore\n", false, 0, 0, CTL_S_OK, "", 0 },
	{ 10, "a\nb\nc\nEND\n", true, 2, -ECANCELED, CTL_S_OK, "a\n", 2 },
	{ 11, "x\nEND", true, 0, -EPROTO, CTL_S_OK, "x\n", 1 },
	{ 12, "a\r\nEND\r\n", true, 0, -EPROTO, CTL_S_OK, "a\r\nEND\r\n", 2 },
};

static void status_row_run(const struct status_row *row, const char *reply, size_t len,
			   size_t piece, const char *want_text, size_t want_len)
{
	static struct ctlclient_status_reader rd;
	struct collect got = { .stop_at = row->stop_at };
	enum ctl_status s = CTL_S_UNKNOWN;
	int r = 1;

	ctlclient_status_reader_init(&rd);
	for (size_t off = 0; off < len && r == 1; off += piece)
		r = ctlclient_status_feed(&rd, reply + off, len - off < piece ? len - off : piece,
					  collect_line, &got, &s);
	if (r == 1 && row->eof)
		r = ctlclient_status_feed(&rd, NULL, 0, collect_line, &got, &s);
	CHECK(r == row->want_r, "status row %d, pieces of %zu: r=%d, want %d", row->n, piece, r,
	      row->want_r);
	if (row->want_r == 0)
		CHECK(s == row->want_status, "status row %d, pieces of %zu: status %s", row->n,
		      piece, ctlproto_status_word(s));
	CHECK(got.len == want_len && memcmp(got.text, want_text, want_len) == 0,
	      "status row %d, pieces of %zu: text \"%.*s\"", row->n, piece, (int)got.len,
	      got.text);
	if (row->want_calls)
		CHECK_EQ_U(got.calls, row->want_calls, "status row %d, pieces of %zu: calls",
			   row->n, piece);
}

static void test_status_reader(void)
{
	static const size_t pieces[] = { 1, 2, 3, 7, 4096, 10000 };
	static char reply[3 * CTLCLIENT_LINE_MAX], text[3 * CTLCLIENT_LINE_MAX];

	for (size_t i = 0; i < sizeof(status_rows) / sizeof(status_rows[0]); i++)
		for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++)
			status_row_run(&status_rows[i], status_rows[i].reply,
				       strlen(status_rows[i].reply), pieces[p],
				       status_rows[i].want_text, strlen(status_rows[i].want_text));

	/*
	 * Row 13: a line longer than CTLCLIENT_LINE_MAX comes in two pieces;
	 * its second piece is "END\n" only by the look of it: the reply ends at
	 * the END that starts a line.
	 */
	const struct status_row long_row = { 13, NULL, true, 0, 0, CTL_S_OK, NULL, 2 };
	size_t n = 0, t;

	memset(reply, 'x', CTLCLIENT_LINE_MAX);
	n = CTLCLIENT_LINE_MAX;
	memcpy(reply + n, "END\nEND\n", 8);
	n += 8;
	t = CTLCLIENT_LINE_MAX + 4;
	memcpy(text, reply, t);
	for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++)
		status_row_run(&long_row, reply, n, pieces[p], text, t);
}

/* ------------------------------------------------------------------ */
/* Part 2: against the daemon's side */

static struct conf conf;		/* static: it is large */

static int tcp_bound(int family)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);

	if (s >= 0 && bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(s);
		s = -1;
	}
	return s;
}

/* Connects, sends line (with fd unless -1), lets ctl serve, reads the reply. */
static int exchange(struct ctl *c, struct intent_table *it, const char *path, const char *line,
		    int fd, char *reply, size_t size)
{
	struct ctlclient cc;
	size_t got = 0;
	int r = ctlclient_open(&cc, path, 1000);

	if (r < 0)
		return r;
	r = ctlclient_send(&cc, line, strlen(line), &fd, fd >= 0 ? 1 : 0);
	if (r == 0) {
		ctl_handle(c, &conf, it, 0, NULL, NULL);
		r = ctlclient_read(&cc, reply, size - 1, &got);
		reply[got] = '\0';
	}
	ctlclient_close(&cc);
	return r;
}

static void test_against_ctl(void)
{
	char dir[] = "/tmp/kgw-test-ctlclient-XXXXXX", path[128], reply[256];
	struct intent_table *it = intent_new(16);
	struct ctl c;
	struct ctlclient cc, silent;
	uint64_t t0, t1, d;
	int r, fd;

	conf_defaults(&conf);
	conf.nknock = 1;
	conf.knock[0].port = 24;
	conf.knock[0].integrity_len = 4;
	conf.knock[0].dst = (struct prefix){ .family = AF_INET, .addr = { 127, 0, 0, 1 },
					     .len = 32 };
	CHECK(it != NULL, "step 0: intent table");
	CHECK(mkdtemp(dir) != NULL, "step 0: mkdtemp");
	snprintf(path, sizeof(path), "%s/ctl/control.sock", dir);

	/* 1: nobody listens yet: "not running" to knock-connect. */
	r = ctlclient_open(&cc, path, 1000);
	CHECK(r < 0 && ctlclient_no_daemon(r), "step 1: no daemon: r=%d", r);

	/* 2: open; no connection, no deadline. */
	CHECK(ctl_open(&c, path) == 0, "step 2: ctl_open");
	CHECK(ctl_next_deadline_ms(&c) == UINT64_MAX, "step 2: no deadline");
	CHECK(ctl_timeout_ms(&c, mono_ms()) == -1, "step 2: poll forever");

	/* 3: QUERY, answered; the connection is gone again. */
	r = exchange(&c, it, path, "QUERY 127.0.0.1 24\n", -1, reply, sizeof(reply));
	CHECK(r == 0 && strcmp(reply, "OK knock integrity=4\n") == 0, "step 3: r=%d \"%s\"", r,
	      reply);
	CHECK(ctl_next_deadline_ms(&c) == UINT64_MAX, "step 3: no deadline after the reply");

	/* 4: a deadline that has passed: nothing is tried. */
	{
		struct ctl_request req = { .cmd = CTL_CMD_QUERY, .family = AF_INET,
					   .addr = { 127, 0, 0, 2 }, .port = 24 };
		struct ctlclient_answer ans;

		r = ctlclient_ask(path, 0, &req, -1, &ans);
		CHECK(r == -ETIMEDOUT, "step 4: a deadline of 0 ms: r=%d", r);
		CHECK(ctl_next_deadline_ms(&c) == UINT64_MAX, "step 4: nobody connected");
	}

	/* 5: INTENT with our own bound socket: accepted; without one: refused. */
	fd = tcp_bound(AF_INET);
	CHECK(fd >= 0, "step 5: tcp socket");
	r = exchange(&c, it, path, "INTENT 127.0.0.1 24 53534821\n", fd, reply, sizeof(reply));
	CHECK(r == 0 && strcmp(reply, "OK\n") == 0, "step 5: r=%d \"%s\"", r, reply);
	r = exchange(&c, it, path, "INTENT 127.0.0.1 24 53534821\n", -1, reply, sizeof(reply));
	CHECK(r == 0 && strcmp(reply, "ERR bad-request\n") == 0, "step 5: no fd: \"%s\"", reply);
	r = exchange(&c, it, path, "QUERY 127.0.0.1 24\n", fd, reply, sizeof(reply));
	CHECK(r == 0 && strcmp(reply, "ERR bad-request\n") == 0, "step 5: stray fd: \"%s\"",
	      reply);
	close(fd);

	/* 6: STATUS: the text and END for root, ERR not-root for others. */
	{
		static struct ctlclient_status_reader rd;
		struct collect got = { 0 };
		enum ctl_status s = CTL_S_UNKNOWN;

		r = exchange(&c, it, path, "STATUS\n", -1, reply, sizeof(reply));
		CHECK(r == 0, "step 6: r=%d", r);
		ctlclient_status_reader_init(&rd);
		r = ctlclient_status_feed(&rd, reply, strlen(reply), collect_line, &got, &s);
		CHECK(r == 0, "step 6: complete: r=%d \"%s\"", r, reply);
		CHECK(s == (getuid() == 0 ? CTL_S_OK : CTL_S_NOT_ROOT), "step 6: %s",
		      ctlproto_status_word(s));
	}

	/* 6b: METRICS, the same way. */
	{
		static struct ctlclient_status_reader rd;
		struct collect got = { 0 };
		enum ctl_status s = CTL_S_UNKNOWN;

		r = exchange(&c, it, path, "METRICS\n", -1, reply, sizeof(reply));
		CHECK(r == 0, "step 6b: r=%d", r);
		ctlclient_status_reader_init(&rd);
		r = ctlclient_status_feed(&rd, reply, strlen(reply), collect_line, &got, &s);
		CHECK(r == 0, "step 6b: complete: r=%d \"%s\"", r, reply);
		CHECK(s == (getuid() == 0 ? CTL_S_OK : CTL_S_NOT_ROOT), "step 6b: %s",
		      ctlproto_status_word(s));
	}

	/* 7: a silent client: its deadline is what ctl_next_deadline_ms() says. */
	t0 = mono_ms();
	CHECK(ctlclient_open(&silent, path, 1000) == 0, "step 7: connect");
	ctl_handle(&c, &conf, it, 0, NULL, NULL);
	t1 = mono_ms();
	d = ctl_next_deadline_ms(&c);
	CHECK(d >= t0 + CTL_TIMEOUT_MS && d <= t1 + CTL_TIMEOUT_MS,
	      "step 7: deadline %llu in [%llu, %llu]", (unsigned long long)d,
	      (unsigned long long)(t0 + CTL_TIMEOUT_MS), (unsigned long long)(t1 + CTL_TIMEOUT_MS));
	CHECK(ctl_timeout_ms(&c, d - 5) == 5, "step 7: 5 ms before it");
	CHECK(ctl_timeout_ms(&c, d) == 0, "step 7: at it");
	CHECK(ctl_timeout_ms(&c, d + 1000) == 0, "step 7: past it");
	ctlclient_close(&silent);
	ctl_handle(&c, &conf, it, 0, NULL, NULL);	/* EOF: served (bad-request), closed */
	CHECK(ctl_next_deadline_ms(&c) == UINT64_MAX, "step 7: no deadline once it left");

	/* 8: a reply longer than the buffer: -EMSGSIZE, the first bytes kept. */
	{
		char small[4];
		size_t got = 0;

		CHECK(ctlclient_open(&cc, path, 1000) == 0, "step 8: connect");
		CHECK(ctlclient_send(&cc, "HELLO\n", 6, NULL, 0) == 0, "step 8: send");
		ctl_handle(&c, &conf, it, 0, NULL, NULL);
		r = ctlclient_read(&cc, small, sizeof(small), &got);
		CHECK(r == -EMSGSIZE && got == 4 && memcmp(small, "ERR ", 4) == 0,
		      "step 8: r=%d got=%zu", r, got);
		ctlclient_close(&cc);
	}

	/* 9: closing removes the socket file: "not running" again. */
	ctl_close(&c);
	r = ctlclient_open(&cc, path, 1000);
	CHECK(r < 0 && ctlclient_no_daemon(r), "step 9: after ctl_close: r=%d", r);
	CHECK(access(path, F_OK) < 0, "step 9: the file is gone");

	snprintf(path, sizeof(path), "%s/ctl", dir);
	rmdir(path);
	rmdir(dir);
	intent_free(it);
}

int main(void)
{
	if (sodium_init() < 0) {
		printf("not ok: sodium_init\n");
		return 1;
	}
	log_init(1, LOG_ERR, "test_ctlclient");
	test_status_reader();
	test_against_ctl();
	return unit_done("ctlclient");
}
