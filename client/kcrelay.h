/*
 * kcrelay.h - knock-connect's side of the connection: the bytes an
 * integrity knock covers, the TCP connect with a deadline, and the relay
 * between stdin/stdout and the socket.  Messages go to stderr.
 */
#ifndef KNOCKGW_KCRELAY_H
#define KNOCKGW_KCRELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "kc.h"

enum { KC_RELAY_BUF = 65536 };

/*
 * Reads stdin until buf holds want bytes (*have counts them, across
 * calls); never reads beyond.  0, -ENODATA when stdin ended first, -errno.
 */
int kc_read_head(uint8_t *buf, size_t *have, size_t want);

/* Binds s to port 0 of the any-address: the kernel picks the local port now. */
int kc_bind_any(int s, int family);

/* Connects non-blocking s: 0 or -errno; -ETIMEDOUT when wait_ms passed (or the kernel gave up). */
int kc_connect_wait(int s, const struct sockaddr *sa, socklen_t salen, int wait_ms);

/*
 * stdin -> socket and socket -> stdout until both directions have ended,
 * head_len bytes of head (at most KC_RELAY_BUF) going first; half-close:
 * stdin's end shuts the socket's sending side, the socket's end closes
 * stdout.  stdin and stdout stay blocking: O_NONBLOCK would belong to the
 * open file description, which a shell or terminal shares with us.  They
 * are read only after poll() says so, and stdout is written at most
 * PIPE_BUF at a time once writable, which a pipe takes without blocking.
 * The socket is ours and non-blocking.  host and port are for messages.
 * Returns KC_OK or KC_ERROR.
 */
int kc_relay(int s, const char *host, const char *port, const uint8_t *head, size_t head_len);

#endif
