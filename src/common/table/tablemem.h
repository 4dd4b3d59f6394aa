/*
 * tablemem.h - memory for the daemon's tables: zeroed, in memory from the
 * start, and not shared with a forked child.
 *
 * The tables (flows, replayed knocks, sources, keys' shares) are sized by
 * the configured limits at start and written at random places later, one
 * new page per knock or flow until every page has been written once.  Two
 * things made that first write a page fault inside the packet path:
 *   - calloc() leaves a large block to the kernel's lazy zero pages;
 *   - the queue guard (qguard.h) is forked after the tables exist, so every
 *     page of them was shared copy-on-write with it, and the daemon's first
 *     write to each one copied it.
 * On a virtualised host a fault costs tens of microseconds; a fresh knock
 * paid one or two while the tables were new (the first thousands of knocks
 * after a start).  So each table is its own mapping, written in full when
 * made (the memory the limits promise is taken at start, not under a
 * flood) and left out of any fork (MADV_DONTFORK): the guard never needs
 * the tables, and holds no copy of who knocked.
 *
 * Built with AddressSanitizer, the tables come from calloc() instead, so
 * that its bounds checks see them (mapped pages have no red zones).
 */
#ifndef KNOCKGW_TABLEMEM_H
#define KNOCKGW_TABLEMEM_H

#include <stdbool.h>
#include <stddef.h>

/* n zeroed elements of size bytes; NULL on overflow or no memory. */
void *tablemem_alloc(size_t n, size_t size);

/* Frees what tablemem_alloc(n, size) returned (NULL: nothing). */
void tablemem_free(void *p, size_t n, size_t size);

/* True in an AddressSanitizer build, whose tables are calloc() memory. */
bool tablemem_on_heap(void);

#endif
