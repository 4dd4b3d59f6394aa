/*
 * kcisn.c - `knock-connect isn`: the ISN a client puts in its SYN for
 * given inputs, computed offline with the daemon's own isn.c (see
 * kcisn.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/isn.h"
#include "config/keys.h"
#include "kcargs.h"
#include "kcisn.h"

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
	uint64_t port, tsval, integrity_len, time, window, nonce;
	bool have_port, have_time, have_tsval, have_nonce;
};

/* 0, KC_PARSE_HELP (usage printed), or -EINVAL (said why on stderr). */
static int isn_parse_args(int argc, char **argv, struct isn_args *a)
{
	enum { O_MODE = 1, O_SECRET, O_KEYFILE, O_DST, O_PORT, O_TSVAL, O_ILEN, O_PAYLOAD,
	       O_TIME, O_WINDOW, O_NONCE, O_HELP };
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
		{ "nonce", required_argument, NULL, O_NONCE },
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
			r = kc_parse_number(optarg, 65535, &a->port);
			a->have_port = true;
			break;
		case O_TSVAL:
			r = kc_parse_number(optarg, UINT32_MAX, &a->tsval);
			a->have_tsval = true;
			break;
		case O_ILEN:
			r = kc_parse_number(optarg, UINT64_MAX, &a->integrity_len);
			if (r == 0 && a->integrity_len > KC_INTEG_MAX) {
				fprintf(stderr, "knock-connect: --integrity-len is at most %d, the "
					"daemon's limit\n", KC_INTEG_MAX);
				return -EINVAL;
			}
			break;
		case O_PAYLOAD:
			a->payload_file = optarg;
			break;
		case O_TIME:
			r = kc_parse_number(optarg, UINT64_MAX, &a->time);
			a->have_time = true;
			break;
		case O_WINDOW:
			r = kc_parse_number(optarg, UINT32_MAX, &a->window);
			break;
		case O_NONCE:
			r = kc_parse_number(optarg, ISN_NONCE_MASK, &a->nonce);
			a->have_nonce = true;
			break;
		case O_HELP:
			kc_usage(stdout);
			return KC_PARSE_HELP;
		default:
			kc_usage(stderr);
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

int kc_cmd_isn(int argc, char **argv)
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
	int ret = KC_ERROR, r;

	r = isn_parse_args(argc, argv, &a);
	if (r == KC_PARSE_HELP)
		return KC_OK;
	if (r < 0)
		return KC_USAGE;

	if (!a.mode || (strcmp(a.mode, "knock") && strcmp(a.mode, "native"))) {
		fprintf(stderr, "knock-connect: --mode must be \"knock\" or \"native\"\n");
		return KC_USAGE;
	}
	mode = strcmp(a.mode, "native") == 0 ? KG_MODE_NATIVE : KG_MODE_KNOCK;
	if (!!a.secret == !!a.key_file) {
		fprintf(stderr, "knock-connect: give exactly one of --secret and --key-file\n");
		return KC_USAGE;
	}
	if (!a.dst) {
		fprintf(stderr, "knock-connect: --dst is required\n");
		return KC_USAGE;
	}
	if (inet_pton(AF_INET, a.dst, dst) == 1) {
		family = AF_INET;
	} else if (inet_pton(AF_INET6, a.dst, dst) == 1) {
		family = AF_INET6;
	} else {
		fprintf(stderr, "knock-connect: --dst \"%s\" is not an IPv4 or IPv6 address\n", a.dst);
		return KC_USAGE;
	}
	if (!a.have_port || a.port == 0) {
		fprintf(stderr, "knock-connect: --port 1..65535 is required\n");
		return KC_USAGE;
	}
	if (!!a.integrity_len != !!a.payload_file) {
		fprintf(stderr, "knock-connect: --integrity-len N (N > 0) and --payload-file go together\n");
		return KC_USAGE;
	}
	/* The nonce form is the knock of a SYN that has no timestamp, auth only. */
	if (a.have_nonce && (mode != KG_MODE_NATIVE || a.have_tsval || a.integrity_len)) {
		fprintf(stderr, "knock-connect: --nonce is for mode \"native\" without --tsval and "
				"--integrity-len (a SYN without a timestamp, auth only)\n");
		return KC_USAGE;
	}

	/* Key bytes live in locked memory and are wiped on every path out. */
	raw = sodium_malloc(KG_KEY_MAX);
	key = sodium_malloc(sizeof(*key));
	if (!raw || !key) {
		fprintf(stderr, "knock-connect: out of locked memory\n");
		goto out;
	}
	if (a.key_file) {
		if (key_file_read(a.key_file, raw, &rawlen, err, sizeof(err)) < 0) {
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
	isn_key_init(key, raw, rawlen);

	if (a.integrity_len) {
		payload = malloc(a.integrity_len);
		if (!payload) {
			fprintf(stderr, "knock-connect: out of memory\n");
			goto out;
		}
		r = read_prefix(a.payload_file, payload, a.integrity_len);
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
	uint64_t epoch = isn_epoch(now, (uint32_t)a.window);
	uint32_t isn = a.have_nonce ? isn_native_nonce(key, &in, epoch, (uint8_t)a.nonce)
				    : isn_compute(key, mode, &in, epoch, payload, a.integrity_len);
	printf("%08" PRIx32 "\n", isn);
	ret = KC_OK;
out:
	free(payload);
	sodium_free(key);	/* sodium_free wipes before freeing */
	sodium_free(raw);
	return ret;
}
