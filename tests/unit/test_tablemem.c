/*
 * test_tablemem.c - the tables' memory (tablemem.[ch]).
 *
 * Rows: sizes and overflow, zeroed memory; then what the module is for,
 * counted in page faults (getrusage): writing a fresh table takes none,
 * and neither does writing it while a forked child lives (the queue guard
 * is one), whose copy of the process has no such table at all.  Built with
 * AddressSanitizer the tables are plain calloc() memory, and the rows say
 * so instead.  Built with ThreadSanitizer they are mapped as always, but
 * every first write of a page also faults in its shadow page, so faults
 * are not counted; and in the child the sanitizer's runtime maps memory of
 * its own where the table was, so the child's read finds other memory
 * (not the table's contents) instead of faulting.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/table/tablemem.h"
#include "unit.h"

enum { PAGES = 512, PAGE = 4096 };

#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#ifdef TSAN_BUILD
static const bool tsan = true;
#else
static const bool tsan = false;
#endif

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* The child's read of a table it has no copy of ends here. */
static void on_segv(int sig)
{
	(void)sig;
	_exit(12);
}

/* Writes one byte per page of p (len bytes); the page faults it took. */
static long faults_writing(volatile uint8_t *p, size_t len)
{
	long before = minflt();

	for (size_t i = 0; i < len; i += PAGE)
		p[i] = (uint8_t)(i / PAGE + 1);
	return minflt() - before;
}

static void sizes(void)
{
	static const struct {
		size_t n, size;
		int ok;
		const char *what;
	} rows[] = {
		{ 1, 1, 1, "one byte" },
		{ 3, 40, 1, "a few elements" },
		{ 65536, 4, 1, "a replay index's worth" },
		{ 0, 8, 0, "no elements" },
		{ 8, 0, 0, "elements of no size" },
		{ SIZE_MAX / 2 + 1, 2, 0, "n * size overflows" },
		{ 2, SIZE_MAX / 2 + 1, 0, "size * n overflows" },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		uint8_t *p = tablemem_alloc(rows[r].n, rows[r].size);
		int zero = 1;

		CHECK((p != NULL) == rows[r].ok, "%s: %s", rows[r].what,
		      rows[r].ok ? "allocated" : "refused");
		if (!p)
			continue;
		for (size_t i = 0; i < rows[r].n * rows[r].size; i++)
			zero &= p[i] == 0;
		CHECK(zero, "%s: every byte zero", rows[r].what);
		tablemem_free(p, rows[r].n, rows[r].size);
	}
	tablemem_free(NULL, 4, 4);	/* nothing, and no crash */
	CHECK(1, "freeing NULL");
}

static void faults(void)
{
	size_t len = (size_t)PAGES * PAGE;
	uint8_t *t = tablemem_alloc(PAGES, PAGE);
	int go[2], status = 0;
	pid_t child;
	long f;

	CHECK(t != NULL, "a table of %d pages", PAGES);
	if (!t)
		return;
	f = faults_writing(t, len);
	if (tablemem_on_heap())
		CHECK(f >= 0, "heap build: %ld faults writing a fresh table (not counted)", f);
	else if (tsan)
		CHECK(f >= 0, "tsan build: %ld faults writing a fresh table (not counted)", f);
	else
		CHECK(f < PAGES / 16, "a fresh table written: %ld page faults (of %d pages)", f,
		      PAGES);

	/* A child that lives while the parent writes (as the guard does). */
	if (pipe(go) < 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	child = fork();
	if (child == 0) {
		char b;

		close(go[1]);
		(void)!read(go[0], &b, 1);
		/* Its copy of the process: the table is not in it. */
		signal(SIGSEGV, on_segv);
		_exit(t[0] == 1 ? 10 : 11);
	}
	close(go[0]);
	CHECK(child > 0, "fork");
	f = faults_writing(t, len);
	if (tablemem_on_heap())
		CHECK(f >= 0, "heap build: %ld faults writing beside a child (not counted)", f);
	else if (tsan)
		CHECK(f >= 0, "tsan build: %ld faults writing beside a child (not counted)", f);
	else
		CHECK(f < PAGES / 16, "written while a forked child lives: %ld page faults (of %d)",
		      f, PAGES);
	close(go[1]);
	if (child > 0)
		waitpid(child, &status, 0);
	if (tablemem_on_heap())
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 10,
		      "heap build: the child has the table (status 0x%x)", (unsigned)status);
	else if (tsan)
		CHECK(WIFEXITED(status) && (WEXITSTATUS(status) == 11 || WEXITSTATUS(status) == 12),
		      "tsan build: the child has no copy of the table (status 0x%x)",
		      (unsigned)status);
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 12,
		      "the child has no copy of the table: reading it faults (status 0x%x)",
		      (unsigned)status);
	tablemem_free(t, PAGES, PAGE);
}

int main(void)
{
	sizes();
	faults();
	return unit_done("tablemem");
}
