/*
 * ctlreq - sends one request line to knockgw's control socket and prints
 * the reply, for the namespace tests.
 *
 *   ctlreq [-u UID[:GID]] [-l] [-t 4|6] [-n COUNT] [-d MS] SOCKET 'REQUEST'
 *
 *   -t 4|6   create a TCP socket of that family, bind it to port 0 and pass
 *            it with the request (SCM_RIGHTS); its port is printed to stderr
 *   -u UID   switch to UID (and GID, default UID) before talking; the TCP
 *            socket is created before the switch, so it still belongs to
 *            root (what a user stealing root's socket would look like) ...
 *   -l       ... unless -l: then it is created after the switch, as UID's own
 *   -n COUNT pass the socket COUNT times (more than one is refused)
 *   -d MS    wait MS milliseconds after connecting before sending
 *
 * The request gets its LF appended.  Exit 0 once a reply (possibly empty,
 * when the daemon closed without one) has been printed; 1 on local errors,
 * and when the daemon neither answered nor closed within the deadline
 * (ctlclient.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl/ctlclient.h"

enum { MAX_COPIES = CTLCLIENT_FDS_MAX };

static void usage(void)
{
	fprintf(stderr, "usage: ctlreq [-u UID[:GID]] [-l] [-t 4|6] [-n COUNT] [-d MS] SOCKET "
			"'REQUEST'\n");
}

static int tcp_socket(int family)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	int r;

	if (s < 0)
		return -1;
	if (family == AF_INET)
		r = bind(s, (struct sockaddr *)&sin, sizeof(sin));
	else
		r = bind(s, (struct sockaddr *)&sin6, sizeof(sin6));
	if (r < 0 || getsockname(s, (struct sockaddr *)&ss, &len) < 0) {
		close(s);
		return -1;
	}
	fprintf(stderr, "ctlreq: local port %u\n",
		ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port));
	return s;
}

static int drop_to(const char *spec)
{
	char *end;
	unsigned long uid = strtoul(spec, &end, 10), gid = uid;

	if (*end == ':')
		gid = strtoul(end + 1, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (setgroups(0, NULL) < 0 || setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) < 0 ||
	    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) < 0)
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	const char *user = NULL;
	bool late = false;
	int family = 0, copies = 1, delay_ms = 0, tcp = -1, ch;
	struct ctlclient cc;
	static char line[8192], reply[65536];
	int fds[MAX_COPIES];
	size_t got = 0;
	int r;

	while ((ch = getopt(argc, argv, "u:lt:n:d:")) != -1) {
		switch (ch) {
		case 'u':
			user = optarg;
			break;
		case 'l':
			late = true;
			break;
		case 't':
			family = strcmp(optarg, "6") == 0 ? AF_INET6 : AF_INET;
			break;
		case 'n':
			copies = atoi(optarg);
			break;
		case 'd':
			delay_ms = atoi(optarg);
			break;
		default:
			usage();
			return 1;
		}
	}
	if (argc - optind != 2 || copies < 1 || copies > MAX_COPIES ||
	    strlen(argv[optind]) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
	    strlen(argv[optind + 1]) + 2 > sizeof(line)) {
		usage();
		return 1;
	}
	snprintf(line, sizeof(line), "%s\n", argv[optind + 1]);

	if (family && !late && (tcp = tcp_socket(family)) < 0) {
		perror("ctlreq: tcp socket");
		return 1;
	}
	if (user && drop_to(user) < 0) {
		fprintf(stderr, "ctlreq: cannot become \"%s\"\n", user);
		return 1;
	}
	if (family && late && (tcp = tcp_socket(family)) < 0) {
		perror("ctlreq: tcp socket");
		return 1;
	}

	/* The deadline covers the delay asked for, and as long again as a client would wait. */
	r = ctlclient_open(&cc, argv[optind], delay_ms + CTLCLIENT_WAIT_MS);
	if (r < 0) {
		fprintf(stderr, "ctlreq: connect: %s\n", strerror(-r));
		return 1;
	}
	if (delay_ms > 0) {
		struct timespec ts = { delay_ms / 1000, (long)(delay_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < copies; i++)
		fds[i] = tcp;
	r = ctlclient_send(&cc, line, strlen(line), fds, tcp >= 0 ? (size_t)copies : 0);
	/* A daemon that already dropped us: print the (empty) reply all the same. */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET) {
		fprintf(stderr, "ctlreq: send: %s\n", strerror(-r));
		return 1;
	}
	r = ctlclient_read(&cc, reply, sizeof(reply), &got);
	if (r < 0 && r != -EMSGSIZE && r != -ECONNRESET) {
		fprintf(stderr, "ctlreq: receive: %s\n", strerror(-r));
		return 1;
	}
	ctlclient_close(&cc);
	fwrite(reply, 1, got, stdout);
	return 0;
}
