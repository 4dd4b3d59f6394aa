/*
 * test_listen.c - reading /proc/net/tcp and tcp6 for a listening port
 * (listen.[ch]).  Table-driven, on text as the kernel writes it.
 */
#include <string.h>

#include "kernel/listen.h"
#include "unit.h"

#define HDR "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"

static const struct row {
	const char *what, *text;
	uint16_t port;
	bool want;
} rows[] = {
	{ "v4 listener on 1", HDR "   0: 00000000:0001 00000000:0000 0A 00000000:00000000 00:00000000\n",
	  1, true },
	{ "v4 listener on 22, asked for 1",
	  HDR "   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000\n", 1, false },
	{ "established on 1 is no listener",
	  HDR "   0: 0100007F:0001 0100007F:9C40 01 00000000:00000000 00:00000000\n", 1, false },
	{ "time-wait on 1", HDR "   3: 0100007F:0001 0100007F:9C40 06 00000000:00000000\n", 1, false },
	{ "remote port 1 listening elsewhere is not ours",
	  HDR "   0: 0100007F:9C40 0100007F:0001 01 00000000:00000000\n", 1, false },
	{ "v6 listener on 1",
	  HDR "   0: 00000000000000000000000000000000:0001 00000000000000000000000000000000:0000 0A "
	      "00000000:00000000 00:00000000\n",
	  1, true },
	{ "upper-case hex port", HDR "   1: 00000000:FFFF 00000000:0000 0A 0\n", 65535, true },
	{ "second of several lines",
	  HDR "   0: 00000000:0016 00000000:0000 0A 0\n   1: 00000000:0009 00000000:0000 0A 0\n", 9,
	  true },
	{ "no final newline", HDR "   0: 00000000:0009 00000000:0000 0A", 9, true },
	{ "header only", HDR, 1, false },
	{ "empty", "", 1, false },
	{ "the header line is never a socket", "   0: 00000000:0001 00000000:0000 0A\n", 1, false },
	{ "truncated after the port", HDR "   0: 00000000:0001", 1, false },
	{ "truncated in the address", HDR "   0: 0000", 1, false },
	{ "no colon at all", HDR "garbage line without fields\n", 1, false },
	{ "port too long", HDR "   0: 00000000:10001 00000000:0000 0A\n", 1, false },
	{ "state missing", HDR "   0: 00000000:0001 00000000:0000\n", 1, false },
	{ "state 0A1 is not LISTEN", HDR "   0: 00000000:0001 00000000:0000 0A1\n", 1, false },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		CHECK(listen_text_has(r->text, strlen(r->text), r->port) == r->want,
		      "row %zu: %s", i + 1, r->what);
	}
	/* Every prefix of a table: no read past the end, no false listener. */
	{
		const char *t = HDR "   0: 00000000:0001 00000000:0000 0A 0\n";
		size_t full = strlen(t);

		for (size_t n = 0; n < full; n++) {
			bool got = listen_text_has(t, n, 1);
			/* Only once the state's two digits are in. */
			bool want = n >= (size_t)(strstr(t, " 0A") - t) + 3;

			CHECK(got == want, "prefix of %zu bytes: %d", n, got);
		}
	}
	return unit_done("listen");
}
