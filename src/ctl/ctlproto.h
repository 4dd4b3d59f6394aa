/*
 * ctlproto.h - the control socket's line protocol, parsed and formatted.
 *
 * One request per connection, one line of printable ASCII ending in LF:
 *   QUERY <dst-address> <port>
 *   INTENT <dst-address> <port> <hex payload>   (+ one fd in SCM_RIGHTS)
 *   STATUS
 *   METRICS                                     (STATUS's text and more lines)
 * Replies: "OK\n", "OK knock integrity=<N>\n", "ERR <word>\n", and for
 * STATUS and METRICS any number of text lines ended by "END\n".
 *
 * Tokens are separated by exactly one space; no leading or trailing blanks,
 * no CR, nothing after the LF.  Addresses are what inet_pton() takes (no zone
 * index), ports are decimal 1..65535 without leading zeros, the payload is
 * 1..INTEG_MAX_LEN bytes as an even number of hex digits (either case).  A
 * daemon that is strict here never has to guess what a request meant.
 *
 * Pure: no I/O, no allocation, no logging.  Every parse failure is a named
 * enum value and a counter; on the wire they are all "ERR bad-request".
 */
#ifndef KNOCKGW_CTLPROTO_H
#define KNOCKGW_CTLPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/isn.h"

enum {
	/*
	 * The longest valid request: "INTENT " + a 45-character IPv6 address
	 * + " 65535 " + 2 * INTEG_MAX_LEN hex digits + LF is 4156 bytes, so
	 * 4096 cannot be the limit; the next round size above it is.
	 */
	CTL_LINE_MAX = 4224,
	CTL_REPLY_MAX = 64,		/* every single-line reply fits */
};

enum ctl_cmd { CTL_CMD_QUERY, CTL_CMD_INTENT, CTL_CMD_STATUS, CTL_CMD_METRICS };

/* Why a request was refused as "bad-request"; (enum, counter name, meaning). */
#define CTL_PARSE_ERRORS(X)                                                         \
	X(OK, "ok", "parsed")                                                       \
	X(EMPTY, "empty", "nothing before the LF, or nothing at all")              \
	X(NO_NEWLINE, "no_newline", "the connection ended before an LF")           \
	X(TOO_LONG, "too_long", "no LF within CTL_LINE_MAX bytes")                 \
	X(BAD_CHAR, "bad_char", "a byte that is not printable ASCII, or data after the LF") \
	X(UNKNOWN_COMMAND, "unknown_command", "not QUERY, INTENT, STATUS or METRICS")       \
	X(ARGS, "args", "wrong number of arguments, or not single spaces")        \
	X(BAD_ADDRESS, "bad_address", "not an IPv4 or IPv6 address")               \
	X(BAD_PORT, "bad_port", "port not 1..65535")                               \
	X(BAD_PAYLOAD, "bad_payload", "payload not an even number of hex digits")  \
	X(PAYLOAD_TOO_LONG, "payload_too_long", "payload over INTEG_MAX_LEN bytes")

enum ctl_parse {
#define X(name, counter, desc) CTL_PARSE_##name,
	CTL_PARSE_ERRORS(X)
#undef X
	CTL_PARSE_MAX
};

/*
 * The word after "ERR" in a reply.  The wire carries the words, so the order
 * is free; each value is also a counter of struct ctl.  UNKNOWN never goes
 * on the wire: it is what a client makes of a word it does not know.
 */
#define CTL_STATUSES(X)                                                         \
	X(OK, "ok")                                                             \
	X(BAD_REQUEST, "bad-request")                                           \
	X(NO_KNOCK, "no-knock")                                                 \
	X(BAD_LENGTH, "bad-length")                                             \
	X(NOT_YOUR_SOCKET, "not-your-socket")                                   \
	X(BAD_SOCKET, "bad-socket")                                             \
	X(NOT_ROOT, "not-root")                                                 \
	X(BUSY, "busy")                                                         \
	X(INTERNAL, "internal")                                                 \
	X(UNKNOWN, "unknown")

enum ctl_status {
#define X(name, word) CTL_S_##name,
	CTL_STATUSES(X)
#undef X
	CTL_S_MAX
};

struct ctl_request {
	enum ctl_cmd cmd;
	int family;			/* AF_INET or AF_INET6 (QUERY, INTENT) */
	uint8_t addr[16];		/* network order; IPv4 in the first 4 */
	uint16_t port;			/* host order */
	size_t payload_len;		/* INTENT: 1..INTEG_MAX_LEN */
	uint8_t payload[INTEG_MAX_LEN];
};

/*
 * Parses everything a client sent, len bytes (no NUL needed): exactly one
 * line ending in its LF.  Fills *ret and returns CTL_PARSE_OK, or returns
 * why not and leaves *ret alone.
 */
enum ctl_parse ctlproto_parse_request(const uint8_t *buf, size_t len, struct ctl_request *ret);

/*
 * Formats a request into buf (NUL-terminated, the LF included); returns the
 * length without the NUL, or -ENOSPC / -EINVAL.  The inverse of the parser.
 */
int ctlproto_format_request(char *buf, size_t buflen, const struct ctl_request *req);

/* "OK\n", "ERR <word>\n", and "OK knock integrity=<N>\n"; length or -ENOSPC. */
int ctlproto_format_status(char *buf, size_t buflen, enum ctl_status s);
int ctlproto_format_knock(char *buf, size_t buflen, unsigned integrity_len);

/*
 * Client side: a reply line (LF optional, len bytes).  Returns CTL_S_OK for
 * "OK" and "OK knock integrity=<N>" (then *ret_has_knock, *ret_integrity_len
 * are written), the status for a known "ERR <word>", and CTL_S_UNKNOWN for
 * anything else, which includes an "ERR" word this version does not know.
 */
enum ctl_status ctlproto_parse_reply(const char *buf, size_t len, bool *ret_has_knock,
				     unsigned *ret_integrity_len);

/* Counter names: "no_newline"; and the reply word: "not-your-socket". */
const char *ctlproto_parse_name(enum ctl_parse p);
const char *ctlproto_status_word(enum ctl_status s);

#endif
