/*
 * listen.h - is a local TCP port listened on?  For rules.refuse_port: the
 * nat rule sends every refused SYN there, so that the kernel answers it as
 * the closed port it must be; a socket listening there would take those
 * SYNs instead.
 *
 * listen_text_has() is pure: it reads the text of /proc/net/tcp or
 * /proc/net/tcp6 (a header line, then one socket per line: "sl
 * local_address rem_address st ...", the address as HEX:PORT in hex, st 0A
 * for LISTEN).  Lines it cannot read are skipped: the kernel writes them.
 */
#ifndef KNOCKGW_LISTEN_H
#define KNOCKGW_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Does the table text (len bytes) list a socket listening on port? */
bool listen_text_has(const char *text, size_t len, uint16_t port);

/*
 * Does a socket of this network namespace listen on TCP port (v4 or v6)?
 * 1 yes, 0 no, -errno when neither table could be read.
 */
int listen_port_used(uint16_t port);

#endif
