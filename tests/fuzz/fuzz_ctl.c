/*
 * fuzz_ctl - libFuzzer target: the control socket's line protocol
 * (ctlproto.c), which reads what any local user sends.
 *
 * Every input is parsed as a request (exactly as received, on an exact-size
 * heap copy so ASan sees a stray byte) and as a reply.  Beyond the
 * sanitizers it checks: an accepted request is well formed (family, port,
 * payload bounds), formats back to a line no longer than CTL_LINE_MAX that
 * parses to the same request; a refused one leaves the result untouched;
 * and an accepted reply's numbers are in range.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ctl/ctlproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { INPUT_MAX = 2 * CTL_LINE_MAX };

static void check_request(const uint8_t *data, size_t size)
{
	static struct ctl_request req, again, untouched;
	static char line[CTL_LINE_MAX + 1];
	enum ctl_parse p;
	int n;

	memset(&req, 0x5a, sizeof(req));
	memset(&untouched, 0x5a, sizeof(untouched));
	p = ctlproto_parse_request(data, size, &req);
	if ((unsigned)p >= CTL_PARSE_MAX)
		abort();
	if (p != CTL_PARSE_OK) {
		if (memcmp(&req, &untouched, sizeof(req)) != 0)
			abort();	/* ret_* written only on success */
		return;
	}
	if (size > CTL_LINE_MAX || data[size - 1] != '\n')
		abort();
	/* STATUS and METRICS name no flow. */
	if (req.cmd != CTL_CMD_STATUS && req.cmd != CTL_CMD_METRICS) {
		if ((req.family != AF_INET && req.family != AF_INET6) || req.port == 0)
			abort();
	}
	if (req.cmd == CTL_CMD_INTENT) {
		if (req.payload_len == 0 || req.payload_len > INTEG_MAX_LEN)
			abort();
	} else if (req.payload_len != 0) {
		abort();
	}
	n = ctlproto_format_request(line, sizeof(line), &req);
	if (n <= 0 || (size_t)n > CTL_LINE_MAX || strlen(line) != (size_t)n)
		abort();
	if (ctlproto_parse_request((const uint8_t *)line, (size_t)n, &again) != CTL_PARSE_OK)
		abort();
	if (again.cmd != req.cmd || again.family != req.family || again.port != req.port ||
	    memcmp(again.addr, req.addr, sizeof(req.addr)) != 0 ||
	    again.payload_len != req.payload_len ||
	    memcmp(again.payload, req.payload, req.payload_len) != 0)
		abort();
}

static void check_reply(const char *text, size_t size)
{
	bool knock = false;
	unsigned integ = 0;
	enum ctl_status s = ctlproto_parse_reply(text, size, &knock, &integ);
	char buf[CTL_REPLY_MAX];

	if ((unsigned)s >= CTL_S_MAX)
		abort();
	if (s == CTL_S_OK && knock && integ > INTEG_MAX_LEN)
		abort();
	if (ctlproto_format_status(buf, sizeof(buf), s) <= 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (size > INPUT_MAX)
		return 0;
	/* Exact size, so a read past the end is an ASan report, not luck. */
	copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	check_request(copy, size);
	check_reply((const char *)copy, size);
	free(copy);
	return 0;
}
