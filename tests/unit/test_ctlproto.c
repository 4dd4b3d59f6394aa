/*
 * test_ctlproto - the control socket's line protocol (src/ctl/ctlproto.c).
 *
 * Request rows give the bytes a client sent and what the parser must make
 * of them; every refused row also checks that the result struct was left
 * alone, and every accepted row goes through format and parse again and
 * must come back the same.  Then the reply formats and the client's reply
 * parser, row by row.
 */
#include <sys/socket.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ctl/ctlproto.h"
#include "unit.h"

#define LONGEST_V6 "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"

struct req_row {
	int n;
	const char *in;
	size_t len;			/* 0: strlen(in) */
	enum ctl_parse want;
	enum ctl_cmd cmd;
	const char *addr;		/* expected, as text; NULL for STATUS */
	uint16_t port;
	const char *payload;		/* expected bytes, as text */
};

/* A refused row: the bytes (len 0: strlen) and the reason. */
#define BAD(n, in, len, why) { n, in, len, why, CTL_CMD_QUERY, NULL, 0, NULL }

static const struct req_row req_rows[] = {
	{ 1, "QUERY 192.0.2.10 22\n", 0, CTL_PARSE_OK, CTL_CMD_QUERY, "192.0.2.10", 22, NULL },
	{ 2, "QUERY 2001:db8::2a:2a 4242\n", 0, CTL_PARSE_OK, CTL_CMD_QUERY, "2001:db8::2a:2a",
	  4242, NULL },
	{ 3, "QUERY ::ffff:192.0.2.1 22\n", 0, CTL_PARSE_OK, CTL_CMD_QUERY, "::ffff:192.0.2.1", 22,
	  NULL },
	{ 4, "STATUS\n", 0, CTL_PARSE_OK, CTL_CMD_STATUS, NULL, 0, NULL },
	{ 5, "INTENT 192.0.2.10 22 5353482d\n", 0, CTL_PARSE_OK, CTL_CMD_INTENT, "192.0.2.10", 22,
	  "SSH-" },
	{ 6, "INTENT 2001:db8::1 2222 4a4B\n", 0, CTL_PARSE_OK, CTL_CMD_INTENT, "2001:db8::1",
	  2222, "JK" },
	{ 7, "QUERY 192.0.2.10 65535\n", 0, CTL_PARSE_OK, CTL_CMD_QUERY, "192.0.2.10", 65535,
	  NULL },
	{ 8, "QUERY " LONGEST_V6 " 1\n", 0, CTL_PARSE_OK, CTL_CMD_QUERY, LONGEST_V6, 1, NULL },
	{ 9, "METRICS\n", 0, CTL_PARSE_OK, CTL_CMD_METRICS, NULL, 0, NULL },

	BAD(10, "", 0, CTL_PARSE_EMPTY),
	BAD(11, "\n", 0, CTL_PARSE_EMPTY),
	BAD(12, "QUERY 192.0.2.10 22", 0, CTL_PARSE_NO_NEWLINE),
	BAD(13, "QUERY 192.0.2.10 22\r\n", 0, CTL_PARSE_BAD_CHAR),
	BAD(14, "QUERY 192.0.2.10 22\n\n", 0, CTL_PARSE_BAD_CHAR),
	BAD(15, "QUERY 192.0.2.10 22\nSTATUS\n", 0, CTL_PARSE_BAD_CHAR),
	BAD(16, "QUERY\t192.0.2.10 22\n", 0, CTL_PARSE_BAD_CHAR),
	BAD(17, "QUERY 192.0.2.10\0 22\n", 21, CTL_PARSE_BAD_CHAR),
	BAD(18, "QUERY 192.0.2.10 22\xff\n", 0, CTL_PARSE_BAD_CHAR),
	BAD(19, "QUERY 192.0.2.10 22\n\0", 21, CTL_PARSE_BAD_CHAR),

	BAD(20, "QUERY  192.0.2.10 22\n", 0, CTL_PARSE_ARGS),
	BAD(21, " QUERY 192.0.2.10 22\n", 0, CTL_PARSE_ARGS),
	BAD(22, "QUERY 192.0.2.10 22 \n", 0, CTL_PARSE_ARGS),
	BAD(23, "QUERY 192.0.2.10\n", 0, CTL_PARSE_ARGS),
	BAD(24, "QUERY 192.0.2.10 22 33\n", 0, CTL_PARSE_ARGS),
	BAD(25, "STATUS now\n", 0, CTL_PARSE_ARGS),
	BAD(26, "INTENT 192.0.2.10 22\n", 0, CTL_PARSE_ARGS),
	BAD(27, "INTENT 192.0.2.10 22 00 00\n", 0, CTL_PARSE_ARGS),
	BAD(28, " \n", 0, CTL_PARSE_ARGS),
	BAD(29, "METRICS keys\n", 0, CTL_PARSE_ARGS),

	BAD(30, "query 192.0.2.10 22\n", 0, CTL_PARSE_UNKNOWN_COMMAND),
	BAD(31, "HELLO\n", 0, CTL_PARSE_UNKNOWN_COMMAND),
	BAD(32, "QUERYX 192.0.2.10 22\n", 0, CTL_PARSE_UNKNOWN_COMMAND),
	BAD(33, "STATU\n", 0, CTL_PARSE_UNKNOWN_COMMAND),
	BAD(34, "metrics\n", 0, CTL_PARSE_UNKNOWN_COMMAND),

	BAD(40, "QUERY 192.0.2.256 22\n", 0, CTL_PARSE_BAD_ADDRESS),
	BAD(41, "QUERY 192.0.2 22\n", 0, CTL_PARSE_BAD_ADDRESS),
	BAD(42, "QUERY fe80::1%eth0 22\n", 0, CTL_PARSE_BAD_ADDRESS),
	BAD(43, "QUERY example.com 22\n", 0, CTL_PARSE_BAD_ADDRESS),
	BAD(44, "QUERY 192.0.2.10/32 22\n", 0, CTL_PARSE_BAD_ADDRESS),
	BAD(45, "QUERY 0" LONGEST_V6 " 22\n", 0, CTL_PARSE_BAD_ADDRESS),
	BAD(46, "QUERY 2001:db8:::1 22\n", 0, CTL_PARSE_BAD_ADDRESS),

	BAD(50, "QUERY 192.0.2.10 0\n", 0, CTL_PARSE_BAD_PORT),
	BAD(51, "QUERY 192.0.2.10 65536\n", 0, CTL_PARSE_BAD_PORT),
	BAD(52, "QUERY 192.0.2.10 022\n", 0, CTL_PARSE_BAD_PORT),
	BAD(53, "QUERY 192.0.2.10 +22\n", 0, CTL_PARSE_BAD_PORT),
	BAD(54, "QUERY 192.0.2.10 123456\n", 0, CTL_PARSE_BAD_PORT),
	BAD(55, "QUERY 192.0.2.10 ssh\n", 0, CTL_PARSE_BAD_PORT),
	BAD(56, "QUERY 192.0.2.10 0x16\n", 0, CTL_PARSE_BAD_PORT),
	BAD(57, "INTENT 192.0.2.10 99999 00\n", 0, CTL_PARSE_BAD_PORT),

	BAD(60, "INTENT 192.0.2.10 22 abc\n", 0, CTL_PARSE_BAD_PAYLOAD),
	BAD(61, "INTENT 192.0.2.10 22 zz\n", 0, CTL_PARSE_BAD_PAYLOAD),
	BAD(62, "INTENT 192.0.2.10 22 0x00\n", 0, CTL_PARSE_BAD_PAYLOAD),
	BAD(63, "INTENT 192.0.2.10 22 -1\n", 0, CTL_PARSE_BAD_PAYLOAD),
	BAD(64, "INTENT bad 22 zz\n", 0, CTL_PARSE_BAD_ADDRESS),	/* first error wins */
};

static size_t hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 0xf];
	}
	out[2 * n] = '\0';
	return 2 * n;
}

static bool same_request(const struct ctl_request *a, const struct ctl_request *b)
{
	return a->cmd == b->cmd && a->family == b->family &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0 && a->port == b->port &&
	       a->payload_len == b->payload_len &&
	       memcmp(a->payload, b->payload, a->payload_len) == 0;
}

/* An accepted request formats to a line that parses to the same request. */
static void check_round_trip(int n, const struct ctl_request *req)
{
	static struct ctl_request again;
	static char line[CTL_LINE_MAX + 1];
	int len = ctlproto_format_request(line, sizeof(line), req);

	CHECK(len > 0, "row %d: formats (%d)", n, len);
	if (len <= 0)
		return;
	CHECK_EQ_U(strlen(line), (size_t)len, "row %d: length returned", n);
	CHECK_EQ_U(ctlproto_parse_request((const uint8_t *)line, (size_t)len, &again), CTL_PARSE_OK,
		   "row %d: formatted line \"%s\" parses", n, line);
	CHECK(same_request(req, &again), "row %d: round trip", n);
}

static void check_row(const struct req_row *r, const uint8_t *in, size_t len)
{
	static struct ctl_request req, untouched;
	enum ctl_parse got;

	memset(&req, 0xa5, sizeof(req));
	memset(&untouched, 0xa5, sizeof(untouched));
	got = ctlproto_parse_request(in, len, &req);
	CHECK_EQ_U(got, r->want, "row %d: \"%.40s\": %s", r->n, (const char *)in,
		   ctlproto_parse_name(got));
	if (r->want != CTL_PARSE_OK) {
		CHECK(memcmp(&req, &untouched, sizeof(req)) == 0, "row %d: result untouched", r->n);
		return;
	}
	if (got != CTL_PARSE_OK)
		return;
	CHECK_EQ_U(req.cmd, r->cmd, "row %d: command", r->n);
	if (r->addr) {
		uint8_t a[16] = { 0 };
		int fam = strchr(r->addr, ':') ? AF_INET6 : AF_INET;

		inet_pton(fam, r->addr, a);
		CHECK_EQ_U(req.family, fam, "row %d: family", r->n);
		CHECK(memcmp(req.addr, a, sizeof(a)) == 0, "row %d: address", r->n);
		CHECK_EQ_U(req.port, r->port, "row %d: port", r->n);
	}
	if (r->payload) {
		CHECK_EQ_U(req.payload_len, strlen(r->payload), "row %d: payload length", r->n);
		CHECK(memcmp(req.payload, r->payload, strlen(r->payload)) == 0, "row %d: payload",
		      r->n);
	} else {
		CHECK_EQ_U(req.payload_len, 0, "row %d: no payload", r->n);
	}
	check_round_trip(r->n, &req);
}

static void test_requests(void)
{
	for (size_t i = 0; i < sizeof(req_rows) / sizeof(req_rows[0]); i++) {
		const struct req_row *r = &req_rows[i];

		check_row(r, (const uint8_t *)r->in, r->len ? r->len : strlen(r->in));
	}
}

/* Rows too long to write out: the limits around INTEG_MAX_LEN and CTL_LINE_MAX. */
static void test_limits(void)
{
	static char line[CTL_LINE_MAX + 64];
	static uint8_t payload[INTEG_MAX_LEN + 1];
	static struct ctl_request req;
	struct req_row r = { 0 };
	size_t i, n;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);

	/* 70: the longest valid request fits CTL_LINE_MAX. */
	n = (size_t)snprintf(line, sizeof(line), "INTENT %s 65535 ", LONGEST_V6);
	n += hex(line + n, payload, INTEG_MAX_LEN);
	line[n++] = '\n';
	CHECK(n <= CTL_LINE_MAX, "row 70: longest request is %zu bytes", n);
	CHECK_EQ_U(ctlproto_parse_request((uint8_t *)line, n, &req), CTL_PARSE_OK, "row 70");
	CHECK_EQ_U(req.payload_len, INTEG_MAX_LEN, "row 70: payload length");
	CHECK(memcmp(req.payload, payload, INTEG_MAX_LEN) == 0, "row 70: payload");
	check_round_trip(70, &req);

	/* 71: one payload byte more. */
	n = (size_t)snprintf(line, sizeof(line), "INTENT 192.0.2.1 22 ");
	n += hex(line + n, payload, INTEG_MAX_LEN + 1);
	line[n++] = '\n';
	r.n = 71;
	r.want = CTL_PARSE_PAYLOAD_TOO_LONG;
	check_row(&r, (uint8_t *)line, n);

	/* 72: CTL_LINE_MAX bytes and no LF; 73: one more byte, LF last. */
	memset(line, 'A', sizeof(line));
	r.n = 72;
	r.want = CTL_PARSE_TOO_LONG;
	check_row(&r, (uint8_t *)line, CTL_LINE_MAX);
	line[CTL_LINE_MAX] = '\n';
	r.n = 73;
	check_row(&r, (uint8_t *)line, CTL_LINE_MAX + 1);

	/* 74: LF exactly at CTL_LINE_MAX: a line of the maximum length (unknown command). */
	line[CTL_LINE_MAX - 1] = '\n';
	r.n = 74;
	r.want = CTL_PARSE_UNKNOWN_COMMAND;
	check_row(&r, (uint8_t *)line, CTL_LINE_MAX);

	/* 75: a single payload byte, the smallest INTENT. */
	r = (struct req_row){ 75, "INTENT 192.0.2.1 22 00\n", 0, CTL_PARSE_OK, CTL_CMD_INTENT,
			      "192.0.2.1", 22, NULL };
	CHECK_EQ_U(ctlproto_parse_request((const uint8_t *)r.in, strlen(r.in), &req), CTL_PARSE_OK,
		   "row 75");
	CHECK(req.payload_len == 1 && req.payload[0] == 0, "row 75: one zero byte");
}

static void test_format_errors(void)
{
	static struct ctl_request req;
	char small[8], line[CTL_LINE_MAX + 1];

	memset(&req, 0, sizeof(req));
	req.cmd = CTL_CMD_QUERY;
	req.family = AF_INET;
	req.port = 22;
	CHECK_EQ_U(ctlproto_format_request(small, sizeof(small), &req), (unsigned long long)-ENOSPC,
		   "row 80: small buffer");
	CHECK_EQ_U(ctlproto_format_request(line, sizeof(line), &req), strlen("QUERY 0.0.0.0 22\n"),
		   "row 81: QUERY 0.0.0.0 formats");
	req.family = 0;
	CHECK_EQ_U(ctlproto_format_request(line, sizeof(line), &req), (unsigned long long)-EINVAL,
		   "row 82: no family");
	req.family = AF_INET6;
	req.port = 0;
	CHECK_EQ_U(ctlproto_format_request(line, sizeof(line), &req), (unsigned long long)-EINVAL,
		   "row 83: port 0");
	req.port = 22;
	req.cmd = CTL_CMD_INTENT;
	CHECK_EQ_U(ctlproto_format_request(line, sizeof(line), &req), (unsigned long long)-EINVAL,
		   "row 84: INTENT without payload");
	req.payload_len = INTEG_MAX_LEN + 1;
	CHECK_EQ_U(ctlproto_format_request(line, sizeof(line), &req), (unsigned long long)-EINVAL,
		   "row 85: INTENT payload too long");
	req.payload_len = INTEG_MAX_LEN;
	CHECK_EQ_U(ctlproto_format_request(line, 4000, &req), (unsigned long long)-ENOSPC,
		   "row 86: INTENT does not fit");
	req.cmd = CTL_CMD_STATUS;
	CHECK_EQ_U(ctlproto_format_request(small, sizeof(small), &req), 7, "row 87: STATUS");
	CHECK(strcmp(small, "STATUS\n") == 0, "row 87: STATUS text");
	req.cmd = CTL_CMD_METRICS;
	CHECK_EQ_U(ctlproto_format_request(small, sizeof(small), &req),
		   (unsigned long long)-ENOSPC, "row 88: METRICS does not fit in 8");
	CHECK_EQ_U(ctlproto_format_request(line, sizeof(line), &req), 8, "row 89: METRICS");
	CHECK(strcmp(line, "METRICS\n") == 0, "row 89: METRICS text");
}

static void test_replies(void)
{
	static const struct {
		int n;
		enum ctl_status s;
		const char *text;
	} fmt[] = {
		{ 90, CTL_S_OK, "OK\n" },
		{ 91, CTL_S_BAD_REQUEST, "ERR bad-request\n" },
		{ 92, CTL_S_NO_KNOCK, "ERR no-knock\n" },
		{ 93, CTL_S_BAD_LENGTH, "ERR bad-length\n" },
		{ 94, CTL_S_NOT_YOUR_SOCKET, "ERR not-your-socket\n" },
		{ 95, CTL_S_BAD_SOCKET, "ERR bad-socket\n" },
		{ 96, CTL_S_NOT_ROOT, "ERR not-root\n" },
		{ 97, CTL_S_BUSY, "ERR busy\n" },
		{ 98, CTL_S_INTERNAL, "ERR internal\n" },
		{ 99, (enum ctl_status)1000, "ERR internal\n" },
	};
	static const struct {
		int n;
		const char *text;
		enum ctl_status want;
		bool knock;
		unsigned integrity;
	} parse[] = {
		{ 110, "OK\n", CTL_S_OK, false, 0 },
		{ 111, "OK", CTL_S_OK, false, 0 },
		{ 112, "OK knock integrity=0\n", CTL_S_OK, true, 0 },
		{ 113, "OK knock integrity=28\n", CTL_S_OK, true, 28 },
		{ 114, "OK knock integrity=2048", CTL_S_OK, true, 2048 },
		{ 115, "OK knock integrity=2049\n", CTL_S_UNKNOWN, false, 0 },
		{ 116, "OK knock integrity=028\n", CTL_S_UNKNOWN, false, 0 },
		{ 117, "OK knock integrity=\n", CTL_S_UNKNOWN, false, 0 },
		{ 118, "OK knock integrity=1 \n", CTL_S_UNKNOWN, false, 0 },
		{ 119, "OK \n", CTL_S_UNKNOWN, false, 0 },
		{ 120, "ERR no-knock\n", CTL_S_NO_KNOCK, false, 0 },
		{ 121, "ERR not-your-socket\n", CTL_S_NOT_YOUR_SOCKET, false, 0 },
		{ 122, "ERR bad-length", CTL_S_BAD_LENGTH, false, 0 },
		{ 123, "ERR busy\n", CTL_S_BUSY, false, 0 },
		{ 124, "ERR bogus\n", CTL_S_UNKNOWN, false, 0 },
		{ 125, "ERR ok\n", CTL_S_UNKNOWN, false, 0 },
		{ 126, "ERR unknown\n", CTL_S_UNKNOWN, false, 0 },
		{ 127, "ERR \n", CTL_S_UNKNOWN, false, 0 },
		{ 128, "", CTL_S_UNKNOWN, false, 0 },
		{ 129, "ERR no-knock\n\n", CTL_S_UNKNOWN, false, 0 },
		{ 130, "OKAY\n", CTL_S_UNKNOWN, false, 0 },
	};
	char buf[CTL_REPLY_MAX];
	size_t i;

	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		int n = ctlproto_format_status(buf, sizeof(buf), fmt[i].s);
		bool k = true;
		unsigned integ = 99;

		CHECK(n > 0 && (size_t)n == strlen(fmt[i].text) && strcmp(buf, fmt[i].text) == 0,
		      "row %d: \"%s\"", fmt[i].n, fmt[i].text);
		/* What the daemon writes, the client reads back as the same status. */
		if (fmt[i].n != 99)
			CHECK_EQ_U(ctlproto_parse_reply(buf, (size_t)n, &k, &integ), fmt[i].s,
				   "row %d: parses back", fmt[i].n);
	}
	CHECK_EQ_U(ctlproto_format_status(buf, 5, CTL_S_NO_KNOCK), (unsigned long long)-ENOSPC,
		   "row 100: small buffer");
	CHECK_EQ_U(ctlproto_format_knock(buf, sizeof(buf), 2048),
		   strlen("OK knock integrity=2048\n"), "row 101: knock reply");
	CHECK(strcmp(buf, "OK knock integrity=2048\n") == 0, "row 101: knock text");
	CHECK_EQ_U(ctlproto_format_knock(buf, 10, 0), (unsigned long long)-ENOSPC,
		   "row 102: small buffer");

	for (i = 0; i < sizeof(parse) / sizeof(parse[0]); i++) {
		bool k = !parse[i].knock;
		unsigned integ = 12345;
		enum ctl_status s = ctlproto_parse_reply(parse[i].text, strlen(parse[i].text), &k,
							 &integ);

		CHECK_EQ_U(s, parse[i].want, "row %d: \"%s\"", parse[i].n, parse[i].text);
		if (parse[i].want == CTL_S_OK) {
			CHECK_EQ_U(k, parse[i].knock, "row %d: knock", parse[i].n);
			CHECK_EQ_U(integ, parse[i].integrity, "row %d: integrity", parse[i].n);
		} else {
			CHECK(k == !parse[i].knock && integ == 12345, "row %d: outputs untouched",
			      parse[i].n);
		}
	}
}

static void test_names(void)
{
	CHECK(strcmp(ctlproto_parse_name(CTL_PARSE_NO_NEWLINE), "no_newline") == 0, "row 140");
	CHECK(strcmp(ctlproto_parse_name(CTL_PARSE_MAX), "unknown") == 0, "row 141");
	CHECK(strcmp(ctlproto_status_word(CTL_S_NOT_YOUR_SOCKET), "not-your-socket") == 0,
	      "row 142");
	CHECK(strcmp(ctlproto_status_word(CTL_S_MAX), "unknown") == 0, "row 143");
}

int main(void)
{
	test_requests();
	test_limits();
	test_format_errors();
	test_replies();
	test_names();
	return unit_done("ctlproto");
}
