/*
 * fwlookup.h - set and map lookups for the firewall judge's interpreter
 * (fwexec.h).
 */
#ifndef KNOCKGW_FWLOOKUP_H
#define KNOCKGW_FWLOOKUP_H

#include <stddef.h>

#include "kernel/fw/fwrun.h"

/*
 * A lookup: S_HOLDS / S_NEXT for a set or a data map; for a
 * verdict map S_JUMP with the element's verdict in *verdict (and *target
 * its chain, SIZE_MAX when none), or S_NEXT when no element matches;
 * S_PENDING, S_UNKNOWN.
 */
enum step fw_lookup(struct run *r, const struct fw_expr *e, int *verdict, size_t *target);

#endif
