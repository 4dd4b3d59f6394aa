/*
 * udiff.c - a unified diff of two texts (udiff.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "config/edit/udiff.h"

struct line {
	const char *p;
	size_t len;		/* with its newline, when it has one */
};

enum op { OP_EQ, OP_DEL, OP_INS };

struct edit {
	enum op op;
	int a, b;		/* the line of a (EQ, DEL), of b (EQ, INS) */
};

/* The lines of text; *ret_n of them in a malloc'd array (NULL when there are none). */
static int split(const char *t, size_t len, struct line **ret, int *ret_n)
{
	struct line *l;
	int n = 0, i = 0;

	for (size_t k = 0; k < len; k++)
		n += t[k] == '\n';
	n += len > 0 && t[len - 1] != '\n';
	*ret_n = n;
	*ret = NULL;
	if (n == 0)
		return 0;
	l = malloc((size_t)n * sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t k = 0, s = 0; k < len; k++) {
		if (t[k] == '\n' || k + 1 == len) {
			l[i].p = t + s;
			l[i].len = k + 1 - s;
			i++;
			s = k + 1;
		}
	}
	*ret = l;
	return 0;
}

static bool same(const struct line *x, const struct line *y)
{
	return x->len == y->len && memcmp(x->p, y->p, x->len) == 0;
}

/*
 * The edit script from a to b (n and m lines) into ops (room for n + m),
 * its length in *ret_len.  Myers' greedy algorithm, keeping each round's
 * frontier to walk back: round d's is v over diagonals -d-1..d+1.
 */
static int script(const struct line *a, int n, const struct line *b, int m, struct edit *ops,
		  int *ret_len)
{
	int maxd = n + m < UDIFF_MAX_D ? n + m : UDIFF_MAX_D;
	int off = maxd + 1, *v, *trace, d, found = -1, len = 0;

	v = calloc((size_t)(2 * maxd + 3), sizeof(*v));
	trace = malloc((size_t)(maxd + 2) * (size_t)(maxd + 2) * sizeof(*trace) + sizeof(*trace));
	if (!v || !trace) {
		free(v);
		free(trace);
		return -ENOMEM;
	}
	for (d = 0; d <= maxd && found < 0; d++) {
		/* Round d's frontier goes after those of rounds 0..d-1: sum of 2i+3 = d(d+2). */
		memcpy(trace + (size_t)d * (size_t)(d + 2), v + off - d - 1,
		       (size_t)(2 * d + 3) * sizeof(*v));
		for (int k = -d; k <= d; k += 2) {
			int x, y;

			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			y = x - k;
			while (x < n && y < m && same(&a[x], &b[y])) {
				x++;
				y++;
			}
			v[off + k] = x;
			if (x >= n && y >= m) {
				found = d;
				break;
			}
		}
	}
	if (found < 0) {
		/* Too different to be worth it: every line out, every line in. */
		for (int i = 0; i < n; i++)
			ops[len++] = (struct edit){ OP_DEL, i, 0 };
		for (int j = 0; j < m; j++)
			ops[len++] = (struct edit){ OP_INS, 0, j };
		*ret_len = len;
		free(v);
		free(trace);
		return 0;
	}
	/* Walk back from (n, m), writing the script from its end. */
	{
		int x = n, y = m, pos = n + m;

		for (d = found; d >= 0; d--) {
			const int *t = trace + (size_t)d * (size_t)(d + 2) + d + 1;	/* t[k] */
			int k = x - y, pk, px, py;

			if (k == -d || (k != d && t[k - 1] < t[k + 1]))
				pk = k + 1;
			else
				pk = k - 1;
			px = d > 0 ? t[pk] : 0;
			py = px - pk;
			while (x > px && y > py) {
				x--;
				y--;
				ops[--pos] = (struct edit){ OP_EQ, x, y };
			}
			if (d > 0) {
				if (x == px)
					ops[--pos] = (struct edit){ OP_INS, x, py };
				else
					ops[--pos] = (struct edit){ OP_DEL, px, y };
			}
			x = px;
			y = py;
		}
		len = n + m - pos;
		memmove(ops, ops + pos, (size_t)len * sizeof(*ops));
	}
	*ret_len = len;
	free(v);
	free(trace);
	return 0;
}

static void put_line(FILE *f, char mark, const struct line *l)
{
	fputc(mark, f);
	fwrite(l->p, 1, l->len, f);
	if (l->len == 0 || l->p[l->len - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", f);
}

/* One hunk: ops[s..e). */
static void hunk(FILE *f, const struct edit *ops, int s, int e, const struct line *a,
		 const struct line *b)
{
	int as = -1, bs = -1, ac = 0, bc = 0, abefore = 0, bbefore = 0;

	for (int i = s; i < e; i++) {
		if (ops[i].op != OP_INS) {
			if (as < 0)
				as = ops[i].a;
			ac++;
		}
		if (ops[i].op != OP_DEL) {
			if (bs < 0)
				bs = ops[i].b;
			bc++;
		}
	}
	/* An empty side starts at the line before it, as diff -u has it. */
	for (int i = 0; i < s; i++) {
		abefore += ops[i].op != OP_INS;
		bbefore += ops[i].op != OP_DEL;
	}
	fprintf(f, "@@ -%d,%d +%d,%d @@\n", ac ? as + 1 : abefore, ac, bc ? bs + 1 : bbefore, bc);
	for (int i = s; i < e; i++) {
		switch (ops[i].op) {
		case OP_EQ:
			put_line(f, ' ', &a[ops[i].a]);
			break;
		case OP_DEL:
			put_line(f, '-', &a[ops[i].a]);
			break;
		case OP_INS:
			put_line(f, '+', &b[ops[i].b]);
			break;
		}
	}
}

int udiff_print(FILE *f, const char *a_name, const char *a, size_t alen, const char *b_name,
		const char *b, size_t blen)
{
	struct line *la = NULL, *lb = NULL;
	struct edit *ops = NULL;
	int n, m, len, r;

	if (alen == blen && memcmp(a, b, alen) == 0)
		return 0;
	r = split(a, alen, &la, &n);
	if (r == 0)
		r = split(b, blen, &lb, &m);
	if (r == 0) {
		ops = malloc((size_t)(n + m + 1) * sizeof(*ops));
		r = ops ? script(la, n, lb, m, ops, &len) : -ENOMEM;
	}
	if (r == 0) {
		fprintf(f, "--- %s\n+++ %s\n", a_name, b_name);
		for (int i = 0; i < len;) {
			int s, e, eq;

			if (ops[i].op == OP_EQ) {
				i++;
				continue;
			}
			s = i - UDIFF_CONTEXT > 0 ? i - UDIFF_CONTEXT : 0;
			/* The hunk goes on until 2 x CONTEXT unchanged lines in a row, or the end. */
			for (e = i, eq = 0; e < len && eq <= 2 * UDIFF_CONTEXT; e++)
				eq = ops[e].op == OP_EQ ? eq + 1 : 0;
			if (eq > UDIFF_CONTEXT)
				e -= eq - UDIFF_CONTEXT;
			hunk(f, ops, s, e, la, lb);
			i = e;
		}
		r = ferror(f) ? -EIO : 0;
	}
	free(ops);
	free(la);
	free(lb);
	return r;
}
