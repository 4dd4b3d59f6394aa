/*
 * knock-connect - the companion client of knockgw.
 *
 *   knock-connect [-c FILE] [-s SOCKET] [-w SECONDS] HOST PORT
 *
 * relays stdin/stdout to HOST:PORT through the knock the local knockgw has
 * configured for it, for ssh -o ProxyCommand='knock-connect %h %p'.  It asks
 * the daemon over its control socket (src/ctl/ctlclient.h) whether a knock
 * covers the destination.  For an auth-only knock it simply connects: the
 * daemon's client role gives the SYN its ISN.  For integrity mode the ISN
 * also covers the first integrity_len bytes of the stream, so it reads them
 * from stdin first (ssh sends its banner before it reads the server's),
 * binds a TCP socket, passes that socket and the bytes to the daemon
 * (INTENT; the daemon checks the socket is ours), then connects and sends
 * those bytes first.  Both directions are relayed with half-close
 * (kcrelay.c).
 *
 *   knock-connect isn ...
 *
 * prints the ISN a client puts in its SYN, offline (kcisn.c).
 *
 * Exit codes: kc.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <sodium.h>

#include "ctl/ctlclient.h"
#include "kc.h"
#include "kcargs.h"
#include "kcconf.h"
#include "kcisn.h"
#include "kcrelay.h"

struct dest {
	const char *host, *port;	/* as given, for messages */
	const char *ctl_path;
	int wait_ms;
	int family;
	uint8_t addr[16];
	uint16_t nport;
	char addr_text[INET6_ADDRSTRLEN];
};

/*
 * One request to the daemon, one reply back.  Returns the reply's status
 * (*ret filled), or -KC_* after saying why there is none.
 */
static int ask(const struct dest *d, const struct ctl_request *req, int fd,
	       struct ctlclient_answer *ret)
{
	int r = ctlclient_ask(d->ctl_path, CTLCLIENT_WAIT_MS, req, fd, ret);

	if (r < 0 && ctlclient_no_daemon(r)) {
		fprintf(stderr, "knock-connect: knockgw is not running (no control socket at %s)\n",
			d->ctl_path);
		return -KC_NO_DAEMON;
	}
	if (r == -ETIMEDOUT) {
		fprintf(stderr, "knock-connect: knockgw did not answer within %d s\n",
			CTLCLIENT_WAIT_MS / 1000);
		return -KC_ERROR;
	}
	if (r < 0) {
		fprintf(stderr, "knock-connect: talking to knockgw at %s: %s\n", d->ctl_path,
			strerror(-r));
		return -KC_ERROR;
	}
	if (ret->status == CTL_S_UNKNOWN) {
		fprintf(stderr, "knock-connect: unexpected reply from knockgw: \"%s\"\n", ret->line);
		return -KC_ERROR;
	}
	return (int)ret->status;
}

/*
 * One resolved address with a knock: (intent,) connect, relay.  Returns
 * the exit code; *ret_try_next is set when the failure is this address's
 * alone and the next address may be tried.
 */
static int try_address(struct dest *d, const struct addrinfo *ai, unsigned integrity,
		       const uint8_t *head, size_t head_len, bool *ret_try_next)
{
	int s, r;

	*ret_try_next = false;
	s = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (s < 0) {
		fprintf(stderr, "knock-connect: socket: %s\n", strerror(errno));
		*ret_try_next = true;
		return KC_ERROR;
	}
	if (integrity) {
		static struct ctl_request req;
		struct ctlclient_answer ans;

		r = kc_bind_any(s, ai->ai_family);
		if (r < 0) {
			fprintf(stderr, "knock-connect: bind: %s\n", strerror(-r));
			close(s);
			return KC_ERROR;
		}
		memset(&req, 0, sizeof(req));
		req.cmd = CTL_CMD_INTENT;
		req.family = d->family;
		memcpy(req.addr, d->addr, sizeof(req.addr));
		req.port = d->nport;
		req.payload_len = integrity;
		memcpy(req.payload, head, integrity);
		r = ask(d, &req, s, &ans);
		sodium_memzero(&req, sizeof(req));
		if (r < 0) {
			close(s);
			return -r;
		}
		if (r != CTL_S_OK) {
			fprintf(stderr, "knock-connect: knockgw refused the integrity knock for %s "
				"port %s: %s\n", d->host, d->port,
				ctlproto_status_word((enum ctl_status)r));
			close(s);
			return KC_ERROR;
		}
	}
	r = kc_connect_wait(s, ai->ai_addr, ai->ai_addrlen, d->wait_ms);
	if (r < 0) {
		*ret_try_next = true;
		close(s);
		if (r == -ECONNREFUSED) {
			fprintf(stderr, "knock-connect: %s port %s (%s): connection refused\n",
				d->host, d->port, d->addr_text);
			return KC_REFUSED;
		}
		if (r == -ETIMEDOUT) {
			fprintf(stderr, "knock-connect: %s port %s (%s): connection timed out after "
				"%d s\n", d->host, d->port, d->addr_text, d->wait_ms / 1000);
			return KC_TIMEOUT;
		}
		fprintf(stderr, "knock-connect: %s port %s (%s): %s\n", d->host, d->port,
			d->addr_text, strerror(-r));
		return KC_ERROR;
	}
	r = kc_relay(s, d->host, d->port, head, head_len);
	close(s);
	return r;
}

/* The address of ai into d; false for a family we do not knock. */
static bool dest_set(struct dest *d, const struct addrinfo *ai)
{
	memset(d->addr, 0, sizeof(d->addr));
	if (ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)ai->ai_addr;

		memcpy(d->addr, &sin->sin_addr, 4);
		d->nport = ntohs(sin->sin_port);
	} else if (ai->ai_family == AF_INET6 && ai->ai_addrlen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 =
			(const struct sockaddr_in6 *)(const void *)ai->ai_addr;

		memcpy(d->addr, &sin6->sin6_addr, 16);
		d->nport = ntohs(sin6->sin6_port);
	} else {
		return false;
	}
	d->family = ai->ai_family;
	inet_ntop(d->family, d->addr, d->addr_text, sizeof(d->addr_text));
	return true;
}

static int cmd_connect(int argc, char **argv)
{
	static char ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)] = CONF_DEFAULT_SOCKET;
	static uint8_t head[INTEG_MAX_LEN];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_protocol = IPPROTO_TCP };
	struct addrinfo *res = NULL, *ai;
	struct kc_connect_args args;
	struct dest d = { 0 };
	size_t have = 0;
	bool any_knock = false;
	int r, ret = KC_ERROR;

	r = kc_parse_connect_args(argc, argv, &args);
	if (r != KC_PARSE_RUN)
		return r == KC_PARSE_HELP ? KC_OK : r;
	d.host = args.host;
	d.port = args.port;
	d.wait_ms = (int)args.wait * 1000;

	if (args.sock_path) {
		snprintf(ctl_path, sizeof(ctl_path), "%s", args.sock_path);
	} else if (kc_socket_from_conf(args.conf_path ? args.conf_path : CONF_DEFAULT_PATH,
				    args.conf_path != NULL, ctl_path, sizeof(ctl_path)) < 0) {
		return KC_ERROR;
	}
	d.ctl_path = ctl_path;

	/* A reader that went away must be an error to report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);

	r = getaddrinfo(d.host, d.port, &hints, &res);
	if (r != 0) {
		fprintf(stderr, "knock-connect: %s port %s: %s\n", d.host, d.port,
			r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return KC_ERROR;
	}
	/* In the resolver's order; only addresses with a knock are tried. */
	for (ai = res; ai; ai = ai->ai_next) {
		static struct ctl_request req;
		struct ctlclient_answer ans;
		bool next = false;
		unsigned integrity;

		if (!dest_set(&d, ai))
			continue;
		memset(&req, 0, sizeof(req));
		req.cmd = CTL_CMD_QUERY;
		req.family = d.family;
		memcpy(req.addr, d.addr, sizeof(req.addr));
		req.port = d.nport;
		r = ask(&d, &req, -1, &ans);
		if (r < 0) {
			ret = -r;
			goto out;
		}
		if (r == CTL_S_NO_KNOCK)
			continue;
		if (r != CTL_S_OK || !ans.has_knock) {
			fprintf(stderr, "knock-connect: knockgw refused the query: %s\n",
				ctlproto_status_word((enum ctl_status)r));
			ret = KC_ERROR;
			goto out;
		}
		any_knock = true;
		integrity = ans.integrity_len;	/* the parser holds it to INTEG_MAX_LEN */
		/*
		 * The integrity hash covers the first bytes of the stream, so
		 * they must be known before the SYN; ssh sends its banner first.
		 */
		r = kc_read_head(head, &have, integrity);
		if (r == -ENODATA) {
			fprintf(stderr, "knock-connect: stdin ended after %zu of the %u bytes the "
				"integrity knock for %s port %s covers\n", have, integrity, d.host,
				d.port);
			ret = KC_ERROR;
			goto out;
		} else if (r < 0) {
			fprintf(stderr, "knock-connect: stdin: %s\n", strerror(-r));
			ret = KC_ERROR;
			goto out;
		}
		ret = try_address(&d, ai, integrity, head, have, &next);
		if (!next)
			goto out;
	}
	if (!any_knock) {
		fprintf(stderr, "knock-connect: no knock is configured for %s port %s\n", d.host,
			d.port);
		ret = KC_NO_KNOCK;
	}
out:
	freeaddrinfo(res);
	sodium_memzero(head, sizeof(head));
	return ret;
}

int main(int argc, char **argv)
{
	if (sodium_init() < 0) {
		fprintf(stderr, "knock-connect: libsodium failed to initialise\n");
		return KC_ERROR;
	}
	if (argc >= 2 && strcmp(argv[1], "isn") == 0)
		return kc_cmd_isn(argc - 1, argv + 1);
	return cmd_connect(argc, argv);
}
