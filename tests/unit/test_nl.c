/*
 * test_nl.c - the batch acknowledgement ledger of the netlink transport
 * (nl.h): which answers make an install succeed.
 *
 * Each row is a script of what the socket gives, one event per receive:
 * a datagram of acknowledgements, "nothing yet" (woken with nothing to
 * read), "lost" (ENOBUFS: the kernel dropped answers), "timeout" (nothing
 * within the wait).  nl_acks_collect() reads the script as it reads the
 * socket; nl_acks_result() says what the install returns and names the
 * message.  No socket, no root, no clock: the script ends in a timeout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "kernel/nl.h"
#include "unit.h"

enum { NMSG = 5, MAX_EVENTS = 8, MAX_ACKS = 8, BEGIN_SEQ = 1000, BUF_BYTES = 4096 };

/* Message i of the batch; BEGIN is the batch's BEGIN, STALE another seq. */
enum { BEGIN = -1, STALE = -2, END_ACKS = -99 };

static const char *const names[NMSG] = {
	"table (create)",
	"chain input",
	"knock rule for port 22 (protect entry at line 4)",
	"closed-port rule for port 22 (protect entry at line 4)",
	"client knock rule for port 2200 (knock entry at line 9)",
};

enum ev_kind { EV_END, EV_ACKS, EV_NOTHING_YET, EV_LOST, EV_TIMEOUT };

struct ack_spec {
	int msg;		/* message index, BEGIN, STALE or END_ACKS */
	int error;		/* 0 or -errno */
	const char *extmsg;	/* the kernel's reason (NLMSGERR_ATTR_MSG) */
	bool short_msg;		/* shorter than an nlmsgerr: not an answer */
};

struct event {
	enum ev_kind kind;
	struct ack_spec acks[MAX_ACKS];
};

struct row {
	const char *name;
	struct event ev[MAX_EVENTS];
	int want_ret;		/* of nl_acks_result */
	const char *want_err;	/* a substring of its message, or NULL */
	const char *want_err2;
};

#define OK(i) { (i), 0, NULL, false }
#define ERR(i, e) { (i), (e), NULL, false }
#define ALL_OK { OK(0), OK(1), OK(2), OK(3), OK(4), { END_ACKS, 0, NULL, false } }
#define FIRST4_OK { OK(0), OK(1), OK(2), OK(3), { END_ACKS, 0, NULL, false } }
#define ACKS(...) { EV_ACKS, { __VA_ARGS__, { END_ACKS, 0, NULL, false } } }
#define ACKS_LIST(l) { EV_ACKS, l }
#define NOTHING_YET { EV_NOTHING_YET, { { END_ACKS, 0, NULL, false } } }
#define LOST { EV_LOST, { { END_ACKS, 0, NULL, false } } }

static const struct row rows[] = {
	/* 1 */ { "every message answered, one datagram", { ACKS_LIST(ALL_OK) }, 0, NULL, NULL },
	/* 2 */ { "every message answered, one datagram each",
		  { ACKS(OK(0)), ACKS(OK(1)), ACKS(OK(2)), ACKS(OK(3)), ACKS(OK(4)) }, 0, NULL, NULL },
	/* 3 */ { "an answer missing: the install fails naming that rule",
		  { ACKS(OK(0), OK(1), OK(3), OK(4)) }, -ETIMEDOUT, names[2], "no answer" },
	/* 4 */ { "the last rule's error arrives late: failure naming it",
		  { ACKS_LIST(FIRST4_OK), NOTHING_YET, NOTHING_YET, ACKS(ERR(4, -EOPNOTSUPP)) },
		  -EOPNOTSUPP, names[4], "Operation not supported" },
	/* 5 */ { "the last rule's answer never comes",
		  { ACKS_LIST(FIRST4_OK), NOTHING_YET }, -ETIMEDOUT, names[4], "1 of 5" },
	/* 6 */ { "answers lost (ENOBUFS), the last rule's error still queued: named",
		  { ACKS(OK(0), OK(1)), LOST, ACKS(OK(2), OK(3), ERR(4, -EINVAL)) },
		  -EINVAL, names[4], "Invalid argument" },
	/* 7 */ { "answers lost (ENOBUFS), the last rule's answer among them: fails",
		  { ACKS_LIST(FIRST4_OK), LOST }, -ENOBUFS, names[4], "lost" },
	/* 8 */ { "the batch refused as a whole",
		  { ACKS(ERR(BEGIN, -EPERM)) }, -EPERM, "refused the batch", "not permitted" },
	/* 9 */ { "a repeated answer does not count twice (the first one stands)",
		  { ACKS(OK(0), OK(1), OK(2), OK(3), ERR(0, -EEXIST)) }, -ETIMEDOUT, names[4], NULL },
	/* 10 */ { "answers to another batch are not ours",
		   { ACKS(OK(0), OK(1), OK(2), OK(3), OK(STALE)) }, -ETIMEDOUT, names[4], NULL },
	/* 11 */ { "a truncated answer is no answer",
		   { ACKS(OK(0), OK(1), OK(2), OK(3), { 4, 0, NULL, true }) }, -ETIMEDOUT,
		   names[4], NULL },
	/* 12 */ { "the kernel's reason is reported with the first failure",
		   { ACKS(OK(0), { 1, -EINVAL, "bad hook", false }, OK(2), OK(3),
			  { 4, -ENOENT, "later reason", false }) },
		   -EINVAL, "chain input: Invalid argument: bad hook", NULL },
	/* 13 */ { "the earliest failing message is named, whatever order",
		   { ACKS(ERR(4, -ENOENT), OK(0), OK(1)), ACKS(ERR(2, -EBUSY), OK(3)) },
		   -EBUSY, names[2], "busy" },
	/* 14 */ { "an error for a rule before an answer missing: the error wins",
		   { ACKS(OK(0), ERR(1, -EEXIST), OK(3), OK(4)) }, -EEXIST, names[1], NULL },
};

/* Appends one acknowledgement as the kernel writes it (capped, maybe with TLVs). */
static size_t put_ack(uint8_t *buf, size_t off, const struct ack_spec *a)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + off);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED;
	nlh->nlmsg_seq = a->msg == BEGIN ? BEGIN_SEQ
			 : a->msg == STALE ? BEGIN_SEQ + 500
					   : BEGIN_SEQ + 1 + (uint32_t)a->msg;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = a->error;
	e->msg.nlmsg_len = 64;
	e->msg.nlmsg_seq = nlh->nlmsg_seq;
	if (a->extmsg) {
		nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, a->extmsg);
	}
	if (a->short_msg)
		nlh->nlmsg_len = sizeof(*nlh) + 2;
	return off + NLMSG_ALIGN(nlh->nlmsg_len);
}

struct script {
	const struct event *ev;
	size_t next, reads;
};

static ssize_t script_recv(void *src, void *buf, size_t len, int timeout_ms)
{
	struct script *s = src;
	const struct event *e;
	size_t off = 0;

	(void)timeout_ms;
	s->reads++;
	if (s->next >= MAX_EVENTS || s->ev[s->next].kind == EV_END)
		return -ETIMEDOUT;
	e = &s->ev[s->next++];
	switch (e->kind) {
	case EV_NOTHING_YET:
		return -EAGAIN;
	case EV_LOST:
		return -ENOBUFS;
	case EV_TIMEOUT:
	case EV_END:
		return -ETIMEDOUT;
	case EV_ACKS:
		break;
	}
	for (size_t i = 0; i < MAX_ACKS && e->acks[i].msg != END_ACKS; i++) {
		if (off + 256 > len)
			return -EMSGSIZE;
		off = put_ack(buf, off, &e->acks[i]);
	}
	return (ssize_t)off;
}

static void run_row(size_t k, const struct row *r)
{
	struct nl_acks a;
	struct script s = { .ev = r->ev };
	char err[256] = "";
	int ret;

	nl_acks_init(&a, BEGIN_SEQ);
	for (size_t i = 0; i < NMSG; i++)
		CHECK_EQ_U(nl_acks_add(&a, names[i]), BEGIN_SEQ + 1 + i, "row %zu seq of message %zu",
			   k, i);
	/* A long wait: the script answers at once, and ends in a timeout. */
	nl_acks_collect(&a, script_recv, &s, 60000);
	ret = nl_acks_result(&a, err, sizeof(err));
	CHECK(ret == r->want_ret, "row %zu (%s): returned %d (%s), want %d", k, r->name, ret, err,
	      r->want_ret);
	if (r->want_err)
		CHECK(strstr(err, r->want_err) != NULL, "row %zu (%s): \"%s\" names \"%s\"", k,
		      r->name, err, r->want_err);
	if (r->want_err2)
		CHECK(strstr(err, r->want_err2) != NULL, "row %zu (%s): \"%s\" says \"%s\"", k,
		      r->name, err, r->want_err2);
	nl_acks_free(&a);
}

/* The loop stops reading once every message is answered. */
static void test_stops_when_complete(void)
{
	static const struct event ev[MAX_EVENTS] = { ACKS_LIST(ALL_OK), NOTHING_YET, LOST };
	struct script s = { .ev = ev };
	struct nl_acks a;

	nl_acks_init(&a, BEGIN_SEQ);
	for (size_t i = 0; i < NMSG; i++)
		nl_acks_add(&a, names[i]);
	CHECK(nl_acks_collect(&a, script_recv, &s, 60000) == 0, "complete: collect returns 0");
	CHECK_EQ_U(s.reads, 1, "complete after one datagram: nothing more read");
	CHECK(nl_acks_complete(&a), "complete");
	nl_acks_free(&a);
}

/* An empty batch (nothing but its BEGIN and END) is complete at once. */
static void test_empty(void)
{
	struct nl_acks a;
	char err[64];

	nl_acks_init(&a, BEGIN_SEQ);
	CHECK(nl_acks_complete(&a), "empty batch complete");
	CHECK(nl_acks_result(&a, err, sizeof(err)) == 0, "empty batch succeeds");
	nl_acks_free(&a);
}

int main(void)
{
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
		run_row(k + 1, &rows[k]);
	test_stops_when_complete();
	test_empty();
	return unit_done("nl");
}
