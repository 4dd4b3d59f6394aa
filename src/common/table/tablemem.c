/*
 * tablemem.c - the tables' memory (see tablemem.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common/table/tablemem.h"

#if defined(__SANITIZE_ADDRESS__)
#define TABLEMEM_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TABLEMEM_HEAP 1
#endif
#endif

bool tablemem_on_heap(void)
{
#ifdef TABLEMEM_HEAP
	return true;
#else
	return false;
#endif
}

/* n * size, or 0 when it overflows. */
static size_t bytes_of(size_t n, size_t size)
{
	if (n == 0 || size == 0 || n > SIZE_MAX / size)
		return 0;
	return n * size;
}

#ifdef TABLEMEM_HEAP

void *tablemem_alloc(size_t n, size_t size)
{
	return bytes_of(n, size) ? calloc(n, size) : NULL;
}

void tablemem_free(void *p, size_t n, size_t size)
{
	(void)n;
	(void)size;
	free(p);
}

#else

void *tablemem_alloc(size_t n, size_t size)
{
	size_t len = bytes_of(n, size);
	void *p;

	if (len == 0)
		return NULL;
	/* MAP_POPULATE: every page written now (a private writable mapping). */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/*
	 * Only an old kernel refuses this; the table still works, its pages
	 * are then shared with the guard until first written.
	 */
	(void)madvise(p, len, MADV_DONTFORK);
	return p;
}

void tablemem_free(void *p, size_t n, size_t size)
{
	if (p)
		(void)munmap(p, bytes_of(n, size));
}

#endif
