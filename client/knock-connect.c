/*
 * knock-connect - the companion client of knockgw.
 *
 *   knock-connect [-c FILE] [-s SOCKET] [-w SECONDS] HOST PORT
 *
 * relays stdin/stdout to HOST:PORT through the knock the local knockgw has
 * configured for it, for ssh -o ProxyCommand='knock-connect %h %p'.  It asks
 * the daemon over its control socket (daemon/ctlproto.h) whether a knock
 * covers the destination.  For an auth-only knock it simply connects: the
 * daemon's client role gives the SYN its ISN.  For integrity mode the ISN
 * also covers the first integrity_len bytes of the stream, so it reads them
 * from stdin first (ssh sends its banner before it reads the server's),
 * binds a TCP socket, passes that socket and the bytes to the daemon
 * (INTENT; the daemon checks the socket is ours), then connects and sends
 * those bytes first.  Both directions are relayed with half-close.
 *
 *   knock-connect isn --mode knock|native (--secret TEXT | --key-file FILE)
 *                     --dst ADDR --port N [--tsval N]
 *                     [--integrity-len N --payload-file FILE]
 *                     [--time UNIX_SECONDS] [--window N]
 *
 * prints the ISN a client puts in its SYN (SPEC section 3), as 8 lowercase hex
 * digits.  --secret exists for Knock-style text secrets and tests; it puts the
 * secret on the command line, where other local users can read it, so real
 * use takes --key-file.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libconfig.h>
#include <sodium.h>

#include "ctlproto.h"
#include "keys.h"
#include "verify.h"

#define DEFAULT_CONF "/etc/knockgw/knockgw.conf"
#define DEFAULT_SOCKET "/run/knockgw/control.sock"

enum { PAYLOAD_MAX = 65535 };

/* Exit codes of the relay, documented in usage(). */
enum {
	KC_OK = 0,
	KC_ERROR = 1,
	KC_USAGE = 2,
	KC_NO_DAEMON = 3,
	KC_NO_KNOCK = 4,
	KC_REFUSED = 5,
	KC_TIMEOUT = 6,
};

enum {
	DEFAULT_WAIT = 10,		/* seconds for connect() */
	MAX_WAIT = 86400,
	CTL_REPLY_WAIT = 5,		/* seconds for the daemon's answer */
	CONF_FILE_MAX = 1 << 20,
	RELAY_BUF = 65536,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: knock-connect [-c FILE] [-s SOCKET] [-w SECONDS] HOST PORT\n"
		"       knock-connect isn --mode knock|native (--secret TEXT | --key-file FILE)\n"
		"                         --dst ADDR --port N [--tsval N]\n"
		"                         [--integrity-len N --payload-file FILE]\n"
		"                         [--time UNIX_SECONDS] [--window N]\n"
		"\n"
		"Relays stdin/stdout to HOST PORT through the knock knockgw has configured\n"
		"for it, e.g. ssh -o ProxyCommand='knock-connect %%h %%p'.\n"
		"  -c FILE     read control_socket from this knockgw.conf (default: "
		DEFAULT_CONF ", if readable)\n"
		"  -s SOCKET   knockgw's control socket (default: " DEFAULT_SOCKET ")\n"
		"  -w SECONDS  connect timeout (default: %d)\n"
		"Exit status: 0 relay ended cleanly, 1 error, 2 usage, 3 knockgw is not running,\n"
		"4 no knock is configured for HOST PORT, 5 connection refused, 6 timed out.\n",
		DEFAULT_WAIT);
}

/* Decimal or 0x-hex, the whole string, within [0, max]; 0 or -EINVAL. */
static int parse_number(const char *s, uint64_t max, uint64_t *ret)
{
	int base = 10;
	char *end;
	unsigned long long v;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull alone would also take white space, a sign, and "0x" again. */
	if (*s == '\0')
		return -EINVAL;
	for (const char *p = s; *p; p++)
		if (base == 16 ? !isxdigit((unsigned char)*p) : !isdigit((unsigned char)*p))
			return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end != '\0' || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Reads exactly n bytes from the start of path into buf. */
static int read_prefix(const char *path, uint8_t *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -errno;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int err = r < 0 ? -errno : -ENODATA;

			close(fd);
			return err;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

struct isn_args {
	const char *mode, *secret, *key_file, *dst, *payload_file;
	uint64_t port, tsval, integrity_len, time, window;
	bool have_port, have_time;
};

static int isn_parse_args(int argc, char **argv, struct isn_args *a)
{
	enum { O_MODE = 1, O_SECRET, O_KEYFILE, O_DST, O_PORT, O_TSVAL, O_ILEN, O_PAYLOAD,
	       O_TIME, O_WINDOW, O_HELP };
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, O_MODE },
		{ "secret", required_argument, NULL, O_SECRET },
		{ "key-file", required_argument, NULL, O_KEYFILE },
		{ "dst", required_argument, NULL, O_DST },
		{ "port", required_argument, NULL, O_PORT },
		{ "tsval", required_argument, NULL, O_TSVAL },
		{ "integrity-len", required_argument, NULL, O_ILEN },
		{ "payload-file", required_argument, NULL, O_PAYLOAD },
		{ "time", required_argument, NULL, O_TIME },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->window = 30;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int r = 0;

		switch (c) {
		case O_MODE:
			a->mode = optarg;
			break;
		case O_SECRET:
			a->secret = optarg;
			break;
		case O_KEYFILE:
			a->key_file = optarg;
			break;
		case O_DST:
			a->dst = optarg;
			break;
		case O_PORT:
			r = parse_number(optarg, 65535, &a->port);
			a->have_port = true;
			break;
		case O_TSVAL:
			r = parse_number(optarg, UINT32_MAX, &a->tsval);
			break;
		case O_ILEN:
			r = parse_number(optarg, PAYLOAD_MAX, &a->integrity_len);
			break;
		case O_PAYLOAD:
			a->payload_file = optarg;
			break;
		case O_TIME:
			r = parse_number(optarg, UINT64_MAX, &a->time);
			a->have_time = true;
			break;
		case O_WINDOW:
			r = parse_number(optarg, UINT32_MAX, &a->window);
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
		if (r < 0) {
			fprintf(stderr, "knock-connect: bad number \"%s\" for --%s\n", optarg,
				opts[c - 1].name);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "knock-connect: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int cmd_isn(int argc, char **argv)
{
	struct isn_args a = { 0 };
	enum kg_mode mode;
	uint8_t dst[16];
	int family;
	uint8_t *raw = NULL;
	size_t rawlen = 0;
	struct kg_key *key = NULL;
	uint8_t *payload = NULL;
	char err[256];
	int ret = 1;

	if (isn_parse_args(argc, argv, &a) < 0)
		return 2;

	if (!a.mode || (strcmp(a.mode, "knock") && strcmp(a.mode, "native"))) {
		fprintf(stderr, "knock-connect: --mode must be \"knock\" or \"native\"\n");
		return 2;
	}
	mode = strcmp(a.mode, "native") == 0 ? KG_MODE_NATIVE : KG_MODE_KNOCK;
	if (!!a.secret == !!a.key_file) {
		fprintf(stderr, "knock-connect: give exactly one of --secret and --key-file\n");
		return 2;
	}
	if (!a.dst) {
		fprintf(stderr, "knock-connect: --dst is required\n");
		return 2;
	}
	if (inet_pton(AF_INET, a.dst, dst) == 1) {
		family = AF_INET;
	} else if (inet_pton(AF_INET6, a.dst, dst) == 1) {
		family = AF_INET6;
	} else {
		fprintf(stderr, "knock-connect: --dst \"%s\" is not an IPv4 or IPv6 address\n", a.dst);
		return 2;
	}
	if (!a.have_port || a.port == 0) {
		fprintf(stderr, "knock-connect: --port 1..65535 is required\n");
		return 2;
	}
	if (!!a.integrity_len != !!a.payload_file) {
		fprintf(stderr, "knock-connect: --integrity-len N (N > 0) and --payload-file go together\n");
		return 2;
	}

	/* Key bytes live in locked memory and are wiped on every path out. */
	raw = sodium_malloc(KG_KEY_MAX);
	key = sodium_malloc(sizeof(*key));
	if (!raw || !key) {
		fprintf(stderr, "knock-connect: out of locked memory\n");
		goto out;
	}
	if (a.key_file) {
		if (keyfile_read(a.key_file, raw, &rawlen, err, sizeof(err)) < 0) {
			fprintf(stderr, "knock-connect: %s\n", err);
			goto out;
		}
	} else {
		rawlen = strlen(a.secret);
		if (rawlen == 0 || rawlen > KG_KNOCK_SECRET_MAX) {
			fprintf(stderr, "knock-connect: --secret must be 1..64 bytes\n");
			goto out;
		}
		memcpy(raw, a.secret, rawlen);
	}
	if (mode == KG_MODE_NATIVE && rawlen != KG_NATIVE_KEY_LEN) {
		fprintf(stderr, "knock-connect: the key is %zu bytes; mode \"native\" needs exactly 32\n",
			rawlen);
		goto out;
	}
	verify_key_init(key, raw, rawlen);

	if (a.integrity_len) {
		payload = malloc(a.integrity_len);
		if (!payload) {
			fprintf(stderr, "knock-connect: out of memory\n");
			goto out;
		}
		int r = read_prefix(a.payload_file, payload, a.integrity_len);
		if (r == -ENODATA) {
			fprintf(stderr, "knock-connect: \"%s\" is shorter than --integrity-len %" PRIu64 "\n",
				a.payload_file, a.integrity_len);
			goto out;
		} else if (r < 0) {
			fprintf(stderr, "knock-connect: cannot read \"%s\": %s\n", a.payload_file,
				strerror(-r));
			goto out;
		}
	}

	struct isn_input in = {
		.family = family, .dst = dst, .port = (uint16_t)a.port, .tsval = (uint32_t)a.tsval,
	};
	uint64_t now = a.have_time ? a.time : (uint64_t)time(NULL);
	uint32_t isn = isn_compute(key, mode, &in, isn_epoch(now, (uint32_t)a.window), payload,
				   a.integrity_len);
	printf("%08" PRIx32 "\n", isn);
	ret = 0;
out:
	free(payload);
	sodium_free(key);	/* sodium_free wipes before freeing */
	sodium_free(raw);
	return ret;
}

/* ------------------------------------------------------------------ */
/* knock-connect HOST PORT */

/*
 * control_socket from a knockgw.conf.  Only that one setting is read, with
 * libconfig directly rather than conf_load(): conf_load() also reads and
 * checks every key file, which are root's alone, and a user only needs to
 * know where the socket is.  The file is read like conf.c does (no FIFO
 * hang, bounded size) and wiped afterwards: it may hold secret = "..." lines.
 * Without -c the default config is consulted only if it is readable, and
 * any problem with it leaves the default socket path.
 */
static int socket_from_conf(const char *path, bool explicit, char *out, size_t outlen)
{
	char dir[PATH_MAX], *text = NULL, *slash;
	const char *sock;
	struct stat st;
	config_t cfg;
	size_t n = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (!explicit)
			return 0;
		fprintf(stderr, "knock-connect: cannot open \"%s\": %s (use -s SOCKET)\n", path,
			strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONF_FILE_MAX) {
		if (explicit)
			fprintf(stderr, "knock-connect: \"%s\" is not a regular file of at most %d "
				"bytes\n", path, CONF_FILE_MAX);
		close(fd);
		return explicit ? -EINVAL : 0;
	}
	text = calloc(1, (size_t)st.st_size + 2);
	if (!text) {
		close(fd);
		fprintf(stderr, "knock-connect: out of memory\n");
		return -ENOMEM;
	}
	while (n <= (size_t)st.st_size) {
		ssize_t r = read(fd, text + n, (size_t)st.st_size + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	text[n < (size_t)st.st_size + 1 ? n : (size_t)st.st_size] = '\0';

	config_init(&cfg);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*(slash == dir ? slash + 1 : slash) = '\0';
		config_set_include_dir(&cfg, dir);
	}
	if (!config_read_string(&cfg, text)) {
		if (explicit)
			fprintf(stderr, "knock-connect: %s:%d: %s\n", path, config_error_line(&cfg),
				config_error_text(&cfg));
		ret = explicit ? -EINVAL : 0;
	} else if (config_lookup_string(&cfg, "control_socket", &sock) == CONFIG_TRUE) {
		if (sock[0] != '/' || strlen(sock) >= outlen) {
			if (explicit)
				fprintf(stderr, "knock-connect: %s: control_socket \"%s\" is not an "
					"absolute path that fits a socket address\n", path, sock);
			ret = explicit ? -EINVAL : 0;
		} else {
			snprintf(out, outlen, "%s", sock);
		}
	}
	config_destroy(&cfg);
	sodium_memzero(text, (size_t)st.st_size + 2);
	free(text);
	return ret;
}

struct dest {
	const char *host, *port;	/* as given, for messages */
	const char *ctl_path;
	int wait_ms;
	int family;
	uint8_t addr[16];
	uint16_t nport;
	char addr_text[INET6_ADDRSTRLEN];
};

/* Whole buffer to a socket; the fd (if >= 0) rides on the first byte. */
static int send_request(int s, const char *buf, size_t len, int fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	size_t off = 0;

	memset(&cbuf, 0, sizeof(cbuf));
	while (off < len) {
		struct iovec iov = { (char *)(uintptr_t)(buf + off), len - off };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t w;

		if (fd >= 0 && off == 0) {
			struct cmsghdr *cm;

			msg.msg_control = cbuf.buf;
			msg.msg_controllen = sizeof(cbuf.buf);
			cm = CMSG_FIRSTHDR(&msg);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		}
		w = sendmsg(s, &msg, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		off += (size_t)w;
	}
	return 0;
}

/*
 * One request to the daemon, one reply line back.  Returns the reply's
 * status, or -KC_* after printing why there is none.
 */
static int ctl_ask(const struct dest *d, const struct ctl_request *req, int fd, bool *ret_knock,
		   unsigned *ret_integrity)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { CTL_REPLY_WAIT, 0 };
	static char line[CTL_LINE_MAX + 1];
	char reply[CTL_REPLY_MAX];
	size_t got = 0;
	int s, n, r, ret;

	n = ctlproto_format_request(line, sizeof(line), req);
	if (n < 0) {
		fprintf(stderr, "knock-connect: cannot format the request: %s\n", strerror(-n));
		return -KC_ERROR;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", d->ctl_path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		fprintf(stderr, "knock-connect: socket: %s\n", strerror(errno));
		return -KC_ERROR;
	}
	if (connect(s, (const struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int err = errno;

		close(s);
		if (err == ENOENT || err == ECONNREFUSED || err == ENOTDIR) {
			fprintf(stderr, "knock-connect: knockgw is not running (no control socket at "
				"%s)\n", d->ctl_path);
			return -KC_NO_DAEMON;
		}
		fprintf(stderr, "knock-connect: cannot connect to %s: %s\n", d->ctl_path,
			strerror(err));
		return -KC_ERROR;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = send_request(s, line, (size_t)n, fd);
	sodium_memzero(line, (size_t)n);	/* INTENT: the first bytes of our stream */
	if (r < 0) {
		close(s);
		fprintf(stderr, "knock-connect: cannot send to knockgw: %s\n", strerror(-r));
		return -KC_ERROR;
	}
	while (got < sizeof(reply) - 1 && !memchr(reply, '\n', got)) {
		ssize_t rd = read(s, reply + got, sizeof(reply) - 1 - got);

		if (rd < 0 && errno == EINTR)
			continue;
		if (rd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			close(s);
			fprintf(stderr, "knock-connect: knockgw did not answer within %d s\n",
				CTL_REPLY_WAIT);
			return -KC_ERROR;
		}
		if (rd < 0) {
			close(s);
			fprintf(stderr, "knock-connect: reading from knockgw: %s\n", strerror(errno));
			return -KC_ERROR;
		}
		if (rd == 0)
			break;
		got += (size_t)rd;
	}
	close(s);
	reply[got] = '\0';
	ret = (int)ctlproto_parse_reply(reply, got, ret_knock, ret_integrity);
	if (ret == CTL_S_UNKNOWN) {
		reply[strcspn(reply, "\r\n")] = '\0';
		fprintf(stderr, "knock-connect: unexpected reply from knockgw: \"%s\"\n", reply);
		return -KC_ERROR;
	}
	return ret;
}

/* Reads stdin until it holds want bytes; extra bytes never read. */
static int read_head(uint8_t *buf, size_t *have, size_t want)
{
	while (*have < want) {
		ssize_t r = read(STDIN_FILENO, buf + *have, want - *have);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ENODATA;
		*have += (size_t)r;
	}
	return 0;
}

static int bind_any(int s, int family)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };

	/* Port 0: the kernel picks the local port now, before connect(). */
	if (family == AF_INET)
		return bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 ? -errno : 0;
	return bind(s, (struct sockaddr *)&sin6, sizeof(sin6)) < 0 ? -errno : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* 0 or -errno; -ETIMEDOUT when wait_ms passed (or the kernel gave up). */
static int connect_wait(int s, const struct sockaddr *sa, socklen_t salen, int wait_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)wait_ms;
	struct pollfd p = { .fd = s, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0;

	if (connect(s, sa, salen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	for (;;) {
		uint64_t t = now_ms();
		int r;

		if (t >= deadline)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(deadline - t));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			break;
	}
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	return -err;
}

struct relay_buf {
	uint8_t data[RELAY_BUF];
	size_t off, len;
};

/* Half-close towards our reader: a socket as stdout gets a FIN, a pipe EOF. */
static void close_stdout(void)
{
	shutdown(STDOUT_FILENO, SHUT_WR);	/* ENOTSOCK for a pipe: fine */
	close(STDOUT_FILENO);
}

/*
 * stdin -> socket and socket -> stdout until both directions have ended.
 * stdin and stdout stay blocking: O_NONBLOCK would belong to the open file
 * description, which a shell or terminal shares with us.  They are read
 * only after poll() says so, and stdout is written at most PIPE_BUF at a
 * time once writable, which a pipe takes without blocking.  The socket is
 * ours and non-blocking.  Each buffer is refilled only once it is empty.
 */
static int relay(const struct dest *d, int s, const uint8_t *head, size_t head_len)
{
	static struct relay_buf up, down;
	bool in_eof = false, sock_eof = false, wr_shut = false, out_closed = false;

	memcpy(up.data, head, head_len);	/* the bytes the knock covers go first */
	up.off = 0;
	up.len = head_len;
	down.off = down.len = 0;

	for (;;) {
		struct pollfd p[3];
		int r;

		if (in_eof && up.len == 0 && !wr_shut) {
			shutdown(s, SHUT_WR);
			wr_shut = true;
		}
		if (sock_eof && down.len == 0 && !out_closed) {
			close_stdout();
			out_closed = true;
		}
		if (wr_shut && out_closed)
			return KC_OK;

		p[0].fd = !in_eof && up.len == 0 ? STDIN_FILENO : -1;
		p[0].events = POLLIN;
		p[1].fd = s;
		p[1].events = (short)((up.len ? POLLOUT : 0) | (!sock_eof && down.len == 0 ? POLLIN : 0));
		if (!p[1].events)
			p[1].fd = -1;
		p[2].fd = down.len ? STDOUT_FILENO : -1;
		p[2].events = POLLOUT;
		r = poll(p, 3, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "knock-connect: poll: %s\n", strerror(errno));
			return KC_ERROR;
		}

		if (p[0].fd >= 0 && p[0].revents) {
			ssize_t n = read(STDIN_FILENO, up.data, sizeof(up.data));

			if (n > 0) {
				up.off = 0;
				up.len = (size_t)n;
			} else if (n == 0) {
				in_eof = true;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: stdin: %s\n", strerror(errno));
				return KC_ERROR;
			}
		}
		if (p[1].fd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP)) && up.len) {
			ssize_t n = send(s, up.data + up.off, up.len, MSG_NOSIGNAL | MSG_DONTWAIT);

			if (n >= 0) {
				up.off += (size_t)n;
				up.len -= (size_t)n;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: %s port %s: %s\n", d->host, d->port,
					strerror(errno));
				return KC_ERROR;
			}
		}
		if (p[1].fd >= 0 && (p[1].revents & (POLLIN | POLLERR | POLLHUP)) && !sock_eof &&
		    down.len == 0) {
			ssize_t n = recv(s, down.data, sizeof(down.data), MSG_DONTWAIT);

			if (n > 0) {
				down.off = 0;
				down.len = (size_t)n;
			} else if (n == 0) {
				sock_eof = true;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: %s port %s: %s\n", d->host, d->port,
					strerror(errno));
				return KC_ERROR;
			}
		}
		if (p[2].fd >= 0 && p[2].revents && down.len) {
			size_t chunk = down.len < PIPE_BUF ? down.len : PIPE_BUF;
			ssize_t n = write(STDOUT_FILENO, down.data + down.off, chunk);

			if (n >= 0) {
				down.off += (size_t)n;
				down.len -= (size_t)n;
			} else if (errno != EINTR && errno != EAGAIN) {
				fprintf(stderr, "knock-connect: stdout: %s\n", strerror(errno));
				return KC_ERROR;
			}
		}
	}
}

/*
 * One resolved address with a knock: (intent,) connect, relay.  Returns
 * the exit code; *ret_tried_next is set when the failure is this address's
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
		bool knock;
		unsigned integ;

		r = bind_any(s, ai->ai_family);
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
		r = ctl_ask(d, &req, s, &knock, &integ);
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
	r = connect_wait(s, ai->ai_addr, ai->ai_addrlen, d->wait_ms);
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
	r = relay(d, s, head, head_len);
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

/* What `knock-connect [-c FILE] [-s SOCKET] [-w SECONDS] HOST PORT` asks for. */
struct connect_args {
	const char *conf_path;	/* -c, or NULL: the default, which may be absent */
	const char *sock_path;	/* -s, or NULL: from the configuration */
	const char *host, *port;
	uint64_t wait;		/* -w, 1..MAX_WAIT seconds */
};

enum { PARSE_RUN = 0, PARSE_HELP = -1 };

/*
 * The command line alone, nothing looked up or opened: PARSE_RUN, PARSE_HELP
 * (usage printed on stdout) or KC_USAGE (said why on stderr).
 */
static int connect_parse_args(int argc, char **argv, struct connect_args *a)
{
	int ch;

	*a = (struct connect_args){ .wait = DEFAULT_WAIT };
	optind = 1;
	while ((ch = getopt(argc, argv, "+c:s:w:h")) != -1) {
		switch (ch) {
		case 'c':
			a->conf_path = optarg;
			break;
		case 's':
			a->sock_path = optarg;
			break;
		case 'w':
			if (parse_number(optarg, MAX_WAIT, &a->wait) < 0 || a->wait == 0) {
				fprintf(stderr, "knock-connect: -w takes 1..%d seconds\n", MAX_WAIT);
				return KC_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return PARSE_HELP;
		default:
			usage(stderr);
			return KC_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return KC_USAGE;
	}
	a->host = argv[optind];
	a->port = argv[optind + 1];
	if (a->sock_path && (a->sock_path[0] != '/' ||
			     strlen(a->sock_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))) {
		fprintf(stderr, "knock-connect: -s needs an absolute path shorter than %zu bytes\n",
			sizeof(((struct sockaddr_un *)0)->sun_path));
		return KC_USAGE;
	}
	return PARSE_RUN;
}

static int cmd_connect(int argc, char **argv)
{
	static char ctl_path[sizeof(((struct sockaddr_un *)0)->sun_path)] = DEFAULT_SOCKET;
	static uint8_t head[INTEG_MAX_LEN];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_protocol = IPPROTO_TCP };
	struct addrinfo *res = NULL, *ai;
	struct connect_args args;
	struct dest d = { 0 };
	size_t have = 0;
	bool any_knock = false;
	int r, ret = KC_ERROR;

	r = connect_parse_args(argc, argv, &args);
	if (r != PARSE_RUN)
		return r == PARSE_HELP ? KC_OK : r;
	d.host = args.host;
	d.port = args.port;
	d.wait_ms = (int)args.wait * 1000;

	if (args.sock_path) {
		snprintf(ctl_path, sizeof(ctl_path), "%s", args.sock_path);
	} else if (socket_from_conf(args.conf_path ? args.conf_path : DEFAULT_CONF,
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
		bool knock = false, next = false;
		unsigned integrity = 0;

		if (!dest_set(&d, ai))
			continue;
		memset(&req, 0, sizeof(req));
		req.cmd = CTL_CMD_QUERY;
		req.family = d.family;
		memcpy(req.addr, d.addr, sizeof(req.addr));
		req.port = d.nport;
		r = ctl_ask(&d, &req, -1, &knock, &integrity);
		if (r < 0) {
			ret = -r;
			goto out;
		}
		if (r == CTL_S_NO_KNOCK)
			continue;
		if (r != CTL_S_OK || !knock) {
			fprintf(stderr, "knock-connect: knockgw refused the query: %s\n",
				ctlproto_status_word((enum ctl_status)r));
			ret = KC_ERROR;
			goto out;
		}
		any_knock = true;
		/*
		 * The integrity hash covers the first bytes of the stream, so
		 * they must be known before the SYN; ssh sends its banner first.
		 */
		r = read_head(head, &have, integrity);
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
		return 1;
	}
	if (argc >= 2 && strcmp(argv[1], "isn") == 0)
		return cmd_isn(argc - 1, argv + 1);
	return cmd_connect(argc, argv);
}
