/*
 * fuzz_conf.c - libFuzzer target: any bytes as knockgw.conf, through
 * conf_load() and conf_free(), after wireguard-tools fuzz/config.c.
 *
 * The input is written to a memfd (one for the run) and loaded by its
 * /proc/self/fd path, so nothing is left behind when a run dies.  Key files an input names mostly
 * do not exist; that path is exercised all the same.  Invariants checked
 * beyond the sanitizers: a failed load explains itself with at least one
 * one-line message, a successful one validates cleanly again, and
 * conf_free() may be called twice.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sodium.h>

#include "config/conf.h"
#include "harness.h"

enum { INPUT_MAX = 64 * 1024 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/*
 * libconfig 1.5's parser has no %destructor for string tokens: on a syntax
 * error with a string as the lookahead token, the string its scanner built
 * (in strbuf_append, or calloc'd in libconfig_yylex when empty) is never
 * freed.  That is upstream's leak, a few bytes per rejected file.  Leaks of
 * ours are still reported: nothing of ours is allocated under those two,
 * and a missing config_destroy() would also leak the parser's settings.
 */
const char *__lsan_default_suppressions(void)
{
	return "leak:strbuf_append\nleak:libconfig_yylex\n";
}

static bool write_all(int fd, const uint8_t *data, size_t size)
{
	while (size > 0) {
		ssize_t w = write(fd, data, size);

		if (w <= 0)
			return false;
		data += w;
		size -= (size_t)w;
	}
	return true;
}

HARNESS static void check_messages(const struct conf_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++) {
		if (!errs->msg[i][0] || !memchr(errs->msg[i], '\0', CONF_ERR_LEN))
			abort();
		for (const char *p = errs->msg[i]; *p; p++) {
			if ((unsigned char)*p < 0x20)
				abort();	/* one error, one line */
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/*
	 * struct conf is 1.2 MB: mapped once, since a fresh calloc per input
	 * made page faults most of the run's time (conf_load() initialises it
	 * every time all the same).  Mapped rather than allocated so that
	 * LeakSanitizer does not scan it word by word whenever libconfig's own
	 * leak (above) makes libFuzzer look for leaks; it holds no pointer by
	 * then, conf_free() has run.
	 */
	static struct conf *c;
	static struct conf_errors *errs;
	static int fd = -1;
	char path[64];
	int r;

	if (size > INPUT_MAX || has_include(data, size))
		return 0;
	if (sodium_init() < 0)
		abort();
	/* One memfd for the whole run, emptied and refilled for each input. */
	if (fd < 0) {
		fd = memfd_create("fuzz_conf", MFD_CLOEXEC);
		/* Owner only, as a file holding a secret must be, or every input is refused. */
		if (fd >= 0 && fchmod(fd, 0600) != 0)
			abort();
	}
	if (fd < 0 || ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	if (!write_all(fd, data, size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	if (!c) {
		c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			abort();
	}
	if (!errs)
		errs = malloc(sizeof(*errs));
	if (!c || !errs)
		abort();
	memset(errs, 0, sizeof(*errs));
	r = conf_load(path, c, errs);
	check_messages(errs);
	if (r == 0) {
		if (errs->n != 0)
			abort();
		if (conf_validate(c, errs) != 0)
			abort();
	} else if (errs->n == 0) {
		abort();	/* every rejection must say why */
	}
	conf_free(c);
	conf_free(c);
	return 0;
}
