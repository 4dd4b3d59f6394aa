/*
 * sockkill.h - abort a local TCP socket (SOCK_DESTROY over sock_diag).
 *
 * Integrity failures and timeouts must reset the connection on both sides,
 * the local service's socket included.  SOCK_DESTROY makes the kernel abort
 * the socket (tcp_abort): the service sees ECONNABORTED and the peer gets an
 * RST carrying the socket's own sequence numbers.  A listening socket is
 * never aborted, even when the connection has no socket of its own (any
 * more) and the kernel's lookup would fall back to the port's listener.
 * Needs CAP_NET_ADMIN and
 * CONFIG_INET_DIAG_DESTROY.  The only module that speaks sock_diag.
 */
#ifndef KNOCKGW_SOCKKILL_H
#define KNOCKGW_SOCKKILL_H

#include <stdint.h>

struct sockkill;

struct sockkill *sockkill_open(void);
void sockkill_close(struct sockkill *sk);

/*
 * Aborts the local socket of the connection local:lport <-> remote:rport
 * (addresses 4 or 16 bytes by family, ports host order).  0, or -ENOENT when
 * no such socket exists, or another -errno.
 */
int sockkill_destroy(struct sockkill *sk, int family, const uint8_t *local, uint16_t lport,
		     const uint8_t *remote, uint16_t rport);

#endif
