/*
 * verdict.c - the list of decisions (see verdict.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "datapath/verdict.h"

int verdicts_init(struct verdicts *o, size_t cap)
{
	*o = (struct verdicts){ 0 };
	o->v = calloc(cap ? cap : 1, sizeof(*o->v));
	if (!o->v)
		return -ENOMEM;
	o->cap = cap ? cap : 1;
	return 0;
}

void verdicts_free(struct verdicts *o)
{
	free(o->v);
	*o = (struct verdicts){ 0 };
}

void verdicts_push(struct verdicts *o, const struct verdict *v)
{
	if (o->n == o->cap) {
		/* Sized by its owner for the most a handler adds: a belt, not a path. */
		struct verdict *nv = reallocarray(o->v, o->cap * 2, sizeof(*nv));

		if (!nv) {
			o->lost++;
			return;
		}
		o->v = nv;
		o->cap *= 2;
	}
	o->v[o->n++] = *v;
}
