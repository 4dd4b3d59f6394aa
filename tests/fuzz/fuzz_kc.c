/*
 * fuzz_kc - libFuzzer target: what knock-connect reads from its user
 * (client/kcargs.c, kcisn.c, kcconf.c; built with the client sources but
 * the one holding main()).  The first input byte picks the part:
 *
 *   0  kc_parse_number(): the rest is 8 bytes of maximum, then the text.
 *      Held against a model of its contract "decimal or 0x-hex, the whole
 *      string, within [0, max]": accepted exactly when the text is all
 *      digits (after an optional 0x) and the value fits.
 *   1  `knock-connect isn ARGS...`: NUL-separated arguments, run through
 *      kc_cmd_isn() (getopt_long, the checks, the key and payload files, the
 *      ISN) in an empty directory holding a key file, a short one, a
 *      payload and a file others may read; arguments that name another
 *      directory (a '/') or ask for --help (usage on stdout) are skipped.
 *      The exit code must be KC_OK, KC_ERROR or KC_USAGE, and an ISN is
 *      printed only with KC_OK.
 *   2  kc_socket_from_conf(): the rest (after one flag byte: -c given or not)
 *      as a knockgw.conf in a memfd.  Accepted means a control_socket that
 *      is absolute and fits sun_path, or the default left alone; -c absent
 *      never fails.
 *   3  key_decode_base64() (src/config/keys.c, which --key-file and the daemon
 *      both use): accepted text is exactly one standard base64 encoding of
 *      1..KG_KEY_MAX bytes, with surrounding white space only.
 *   4  kc_parse_connect_args(): `knock-connect ARGS...` as NUL-separated
 *      arguments (the relay's command line; the address lookup and the
 *      connection that follow are the namespace tests' job).  The result is
 *      run, help or usage; run means exactly two operands, a wait in
 *      1..KC_MAX_WAIT, and a -s path that is absolute and fits sun_path.
 *
 * Parts 0-3 are chosen by the first byte modulo 4, as before part 4 was
 * added (the corpus and regress inputs keep their meaning); a first byte
 * that is 4 modulo 8 chooses part 4.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "harness.h"	/* has_include(); REQUIRE is this file's own */
#undef REQUIRE

#include "config/keys.h"
#include "kc.h"
#include "kcargs.h"
#include "kcconf.h"
#include "kcisn.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

enum { INPUT_MAX = 16 * 1024, MAX_ARGS = 32, SUN_PATH_LEN = 108 };

/* libconfig 1.5's parser leaks a string on some syntax errors: see fuzz_conf.c. */
const char *__lsan_default_suppressions(void)
{
	return "leak:strbuf_append\nleak:libconfig_yylex\n";
}

static void remove_sandbox(void);

static FILE *report;		/* the real stderr: knock-connect's own goes to /dev/null */
static char sandbox[64];
static int sandbox_fd = -1, cwd_fd = -1, devnull = -1;

#define REQUIRE(cond)                                                           \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(report, "%s:%d: broken: %s\n", __FILE__,        \
				__LINE__, #cond);                               \
			remove_sandbox();                                       \
			abort();                                                \
		}                                                               \
	} while (0)

static void put_file(const char *name, const char *text, mode_t mode)
{
	FILE *f = fopen(name, "w");

	REQUIRE(f != NULL);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
	REQUIRE(chmod(name, mode) == 0);
}

#define SANDBOX_NAME "kgw-fuzz-kc-"	/* in /tmp, then the pid */

/* Removes what LLVMFuzzerInitialize() put in dir, and dir. */
static void remove_dir(const char *dir)
{
	static const char *const names[] = { "k", "s", "p", "w", "e" };
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlinkat(fd, names[i], 0);
	unlinkat(fd, "d", AT_REMOVEDIR);
	close(fd);
	rmdir(dir);
}

static void remove_sandbox(void)
{
	if (sandbox[0])
		remove_dir(sandbox);
}

/*
 * A run that crashed (abort, a sanitizer report) left its sandbox: those of
 * processes that no longer exist go.
 */
static void remove_stale_sandboxes(void)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char dir[64], *end;
		long pid;

		if (strncmp(e->d_name, SANDBOX_NAME, strlen(SANDBOX_NAME)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(SANDBOX_NAME), &end, 10);
		if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;	/* still running (or not ours to judge) */
		snprintf(dir, sizeof(dir), "/tmp/%s", e->d_name);
		remove_dir(dir);
	}
	closedir(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	report = stderr;
	/* knock-connect prints usage and reasons: keep them out of the fuzzer's log. */
	stderr = fopen("/dev/null", "w");
	REQUIRE(stderr != NULL);
	opterr = 0;
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	REQUIRE(devnull >= 0);
	REQUIRE(dup2(devnull, STDOUT_FILENO) == STDOUT_FILENO);

	/*
	 * The only directory kc_cmd_isn() can name files in.  The fuzzer's own
	 * paths may be relative: the sandbox is the working directory only
	 * while kc_cmd_isn() runs.
	 */
	remove_stale_sandboxes();
	snprintf(sandbox, sizeof(sandbox), "/tmp/" SANDBOX_NAME "%d", (int)getpid());
	remove_dir(sandbox);
	REQUIRE(mkdir(sandbox, 0700) == 0);
	cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sandbox_fd = open(sandbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(cwd_fd >= 0 && sandbox_fd >= 0 && fchdir(sandbox_fd) == 0);
	atexit(remove_sandbox);
	put_file("k", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n", 0600);
	put_file("s", "c2VjcmV0\n", 0600);
	put_file("p", "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\nmore bytes after the banner\n",
		 0644);
	put_file("w", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n", 0644);
	put_file("e", "", 0600);
	REQUIRE(mkdir("d", 0700) == 0 || errno == EEXIST);
	REQUIRE(fchdir(cwd_fd) == 0);
	return 0;
}

/* ------------------------------------------------------------------ 0 */

static void fuzz_number(const uint8_t *data, size_t size)
{
	char text[64];
	uint64_t max = 0, v = 0, want = 0;
	const char *p;
	bool hex, ok = true;
	int r;

	if (size < 8 || size - 8 >= sizeof(text))
		return;
	for (int i = 0; i < 8; i++)
		max = max << 8 | data[i];
	memcpy(text, data + 8, size - 8);
	text[size - 8] = '\0';

	/* The model: [0-9]+ or 0[xX][0-9a-fA-F]+, no overflow, <= max. */
	p = text;
	hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	if (hex)
		p += 2;
	if (!*p)
		ok = false;
	for (; ok && *p; p++) {
		unsigned d;

		if (isdigit((unsigned char)*p))
			d = (unsigned)(*p - '0');
		else if (hex && isxdigit((unsigned char)*p))
			d = (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		else {
			ok = false;
			break;
		}
		if (want > (UINT64_MAX - d) / (hex ? 16 : 10)) {
			ok = false;
			break;
		}
		want = want * (hex ? 16 : 10) + d;
	}
	if (ok && want > max)
		ok = false;

	r = kc_parse_number(text, max, &v);
	REQUIRE((r == 0) == ok);
	if (ok)
		REQUIRE(v == want);
}

/* ------------------------------------------------------------------ 1 */

static void fuzz_isn(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
	int argc = 0, out[2], ret;
	char line[64];
	ssize_t n;

	REQUIRE(buf != NULL);
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "isn";
	for (char *a = buf; a < buf + size && argc <= MAX_ARGS; a += strlen(a) + 1) {
		if (strchr(a, '/') || strncmp(a, "--h", 3) == 0)
			goto out;	/* another directory; --help exits */
		argv[argc++] = a;
	}
	argv[argc] = NULL;

	/* The printed ISN comes back through a pipe (stdout is /dev/null otherwise). */
	REQUIRE(pipe2(out, O_CLOEXEC | O_NONBLOCK) == 0);
	fflush(stdout);
	REQUIRE(dup2(out[1], STDOUT_FILENO) == STDOUT_FILENO);
	/* getopt keeps a pointer into the previous argv unless told to start over. */
	optind = 0;
	{
		char *none[] = { "isn", NULL };

		getopt_long(1, none, "", NULL, NULL);
	}
	REQUIRE(fchdir(sandbox_fd) == 0);
	ret = kc_cmd_isn(argc, argv);
	REQUIRE(fchdir(cwd_fd) == 0);
	fflush(stdout);
	n = read(out[0], line, sizeof(line) - 1);
	REQUIRE(dup2(devnull, STDOUT_FILENO) == STDOUT_FILENO);
	close(out[0]);
	close(out[1]);

	REQUIRE(ret == KC_OK || ret == KC_ERROR || ret == KC_USAGE);
	if (ret == KC_OK) {
		REQUIRE(n == 9 && line[8] == '\n');
		for (int i = 0; i < 8; i++)
			REQUIRE(isxdigit((unsigned char)line[i]) && !isupper((unsigned char)line[i]));
	} else {
		REQUIRE(n <= 0);
	}
out:
	free(buf);
}

/* ------------------------------------------------------------------ 2 */

static void fuzz_conf_socket(const uint8_t *data, size_t size)
{
	static const char dflt[] = CONF_DEFAULT_SOCKET;
	char out[SUN_PATH_LEN], path[64];
	bool explicit;
	int fd, r;

	if (size < 1 || has_include(data + 1, size - 1))
		return;
	explicit = data[0] & 1;
	fd = memfd_create("fuzz_kc", MFD_CLOEXEC);
	REQUIRE(fd >= 0);
	/* A memfd is made 0777; a configuration file must not be writable by others. */
	REQUIRE(fchmod(fd, 0600) == 0);
	REQUIRE(write(fd, data + 1, size - 1) == (ssize_t)(size - 1));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memcpy(out, dflt, sizeof(dflt));

	r = kc_socket_from_conf(path, explicit, out, sizeof(out));
	REQUIRE(r == 0 || (explicit && r < 0));
	REQUIRE(memchr(out, '\0', sizeof(out)) != NULL);
	REQUIRE(out[0] == '/');
	if (r < 0)
		REQUIRE(strcmp(out, dflt) == 0);
	close(fd);
}

/* ------------------------------------------------------------------ 3 */

static void fuzz_key_text(const uint8_t *data, size_t size)
{
	uint8_t key[KG_KEY_MAX];
	char b64[sodium_base64_ENCODED_LEN(KG_KEY_MAX, sodium_base64_VARIANT_ORIGINAL)];
	char err[256] = "";
	char *text = malloc(size ? size : 1);
	size_t len = 0, a = 0, b = size;
	int r;

	REQUIRE(text != NULL);
	memcpy(text, data, size);	/* exact size: the text has no NUL */
	r = key_decode_base64(text, size, key, &len, err, sizeof(err));
	if (r == 0) {
		REQUIRE(len >= 1 && len <= KG_KEY_MAX);
		while (a < b && isspace((unsigned char)text[a]))
			a++;
		while (b > a && isspace((unsigned char)text[b - 1]))
			b--;
		sodium_bin2base64(b64, sizeof(b64), key, len, sodium_base64_VARIANT_ORIGINAL);
		REQUIRE(strlen(b64) == b - a && memcmp(b64, text + a, b - a) == 0);
	} else {
		REQUIRE(r == -EINVAL && err[0]);
		for (const char *p = err; *p; p++)
			REQUIRE(!iscntrl((unsigned char)*p));
	}
	free(text);
}

/* ------------------------------------------------------------------ 4 */

static void fuzz_connect_args(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2];
	struct kc_connect_args a;
	int argc = 0, r, operands = 0;

	REQUIRE(buf != NULL);
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "knock-connect";
	for (char *p = buf; p < buf + size && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	/* Operands as getopt with "+" sees them: from the first non-option on. */
	optind = 0;
	{
		char *none[] = { "knock-connect", NULL };

		getopt(1, none, "");
	}
	r = kc_parse_connect_args(argc, argv, &a);
	REQUIRE(r == KC_PARSE_RUN || r == KC_PARSE_HELP || r == KC_USAGE);
	if (r == KC_PARSE_RUN) {
		operands = argc - optind;
		REQUIRE(operands == 2);
		REQUIRE(a.host == argv[optind] && a.port == argv[optind + 1]);
		REQUIRE(a.wait >= 1 && a.wait <= KC_MAX_WAIT);
		if (a.sock_path)
			REQUIRE(a.sock_path[0] == '/' && strlen(a.sock_path) < SUN_PATH_LEN);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > INPUT_MAX)
		return 0;
	if (data[0] % 8 == 4) {
		fuzz_connect_args(data + 1, size - 1);
		return 0;
	}
	switch (data[0] % 4) {
	case 0:
		fuzz_number(data + 1, size - 1);
		break;
	case 1:
		fuzz_isn(data + 1, size - 1);
		break;
	case 2:
		fuzz_conf_socket(data + 1, size - 1);
		break;
	default:
		fuzz_key_text(data + 1, size - 1);
		break;
	}
	return 0;
}
