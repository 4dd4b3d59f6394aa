/*
 * conf_validate.h - conf_validate() (conf.h) with the messages' lines
 * taken through a source map, as the loader calls it.  Internal to the
 * conf*.c modules.
 */
#ifndef KNOCKGW_CONF_VALIDATE_H
#define KNOCKGW_CONF_VALIDATE_H

#include <stddef.h>

#include "config/conf.h"
#include "config/read/conf_srcmap.h"

/* conf_validate() with the lines of a map (NULL: lines of c->path). */
size_t conf_validate_map(const struct conf *c, struct conf_errors *errs,
			 const struct srcmap *map);

#endif
