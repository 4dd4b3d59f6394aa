/*
 * conf_prescan.c - the checks on each file's text before it is joined
 * (conf_prescan.h): @include lines, and what libconfig 1.5
 * gets wrong without a word.
 */
#include <ctype.h>
#include <string.h>

#include "config/read/conf_diag.h"
#include "config/read/conf_prescan.h"

static bool is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/*
 * One "@include "FILE"" line at p, which libconfig 1.5's scanner only takes
 * at the start of a line (blanks before it).  The name is taken verbatim:
 * no backslash, no newline; blanks and a comment may follow it, nothing
 * else.  Any other '@' is refused here rather than left to libconfig, which
 * would open the file itself, past every check of this file.  Returns where
 * the line ends, or NULL with the reason in *why.
 */
static const char *scan_include(const char *t, const char *p, const char *bol, int line,
				struct incl *ret, const char **why)
{
	static const char word[] = "@include";
	const char *name;

	for (const char *q = bol; q < p; q++) {
		if (!blank(*q)) {
			*why = "'@' may only start a line of the form @include \"FILE\"";
			return NULL;
		}
	}
	if (strncmp(p, word, sizeof(word) - 1) != 0 || !blank(p[sizeof(word) - 1])) {
		*why = "'@' may only start a line of the form @include \"FILE\"";
		return NULL;
	}
	for (p += sizeof(word) - 1; blank(*p); p++)
		;
	if (*p != '"') {
		*why = "@include needs a quoted file name";
		return NULL;
	}
	name = ++p;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' || *p == '\n') {
			*why = "@include file name must be one line without backslashes";
			return NULL;
		}
	}
	if (!*p) {
		*why = "unterminated string";
		return NULL;
	}
	if (p == name) {
		*why = "@include file name is empty";
		return NULL;
	}
	ret->line = line;
	ret->start = (size_t)(bol - t);
	ret->name = (size_t)(name - t);
	ret->name_len = (size_t)(p - name);
	for (p++; blank(*p) || *p == '\r'; p++)
		;
	if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
		while (*p && *p != '\n')
			p++;
	}
	if (*p && *p != '\n') {
		*why = "text after @include \"FILE\" on its line";
		return NULL;
	}
	ret->end = (size_t)(p - t) + (*p == '\n');
	return p;
}

/*
 * A string from line start never ends.  Where an earlier string ran over
 * a line end (runon_start, to runon_end; 0: none), which no setting needs,
 * its own closing '"' is the likely one missing, and the quotes paired up
 * wrongly from there on: that is the line to fix.
 */
static void unterminated(const char *t, const char *path, int start, int runon_start,
			 int runon_end, struct conf_errors *errs)
{
	char shown[160];
	int at = runon_start ? runon_start : start;

	conf_diag_show_line(t, strlen(t), at, shown, sizeof(shown));
	if (at != start)
		conf_error(errs, path, at, "unterminated string: the string that starts here runs "
			   "on to line %d: a closing '\"' is missing; the line reads: %s", runon_end,
			   shown);
	else
		conf_error(errs, path, at, "unterminated string: a closing '\"' is missing; the line "
			   "reads: %s", shown);
}

/*
 * Checks libconfig 1.5 gets wrong without a word, on the text of each file
 * before it is joined: an integer literal without the L suffix is converted
 * with atoi()-style wrap-around, so "port = 4294967318;" would load as port
 * 22 (no setting here takes more than 31 bits, so any such literal is
 * refused); an unterminated block comment silently swallows the rest of the
 * file; and an unterminated string, besides being a syntax error, leaks the
 * scanner's buffer.  Comments, strings and names are skipped the way
 * libconfig's scanner skips them.  The @include lines it finds go to incs
 * (at most max, *ret_n of them).  Returns the number of errors reported (0
 * or 1).
 */
int conf_prescan(const char *t, const char *path, struct conf_errors *errs, struct incl *incs,
		 size_t max, size_t *ret_n)
{
	const char *p = t, *bol = t;
	const char *why;
	int line = 1, runon_start = 0, runon_end = 0;

	*ret_n = 0;
	while (*p) {
		if (*p == '\n') {
			line++;
			p++;
			bol = p;
		} else if (*p == '@') {
			struct incl inc;

			p = scan_include(t, p, bol, line, &inc, &why);
			if (!p) {
				conf_error(errs, path, line, "%s", why);
				return 1;
			}
			if (*ret_n == max) {
				conf_error(errs, path, line, "more than %d @include files",
					   CONF_MAX_INCLUDES);
				return 1;
			}
			incs[(*ret_n)++] = inc;
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			int start = line;

			for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
				line += *p == '\n';
			if (!*p) {
				conf_error(errs, path, start, "unterminated /* comment");
				return 1;
			}
			p += 2;
		} else if (*p == '"') {
			int start = line;

			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				line += *p == '\n';
			}
			if (!*p) {
				unterminated(t, path, start, runon_start, runon_end, errs);
				return 1;
			}
			if (line != start && !runon_start) {
				runon_start = start;
				runon_end = line;
			}
			p++;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '*') {
			while (is_alnum(*p) || *p == '-' || *p == '_' || *p == '*')
				p++;
		} else if ((*p >= '0' && *p <= '9') ||
			   ((*p == '-' || *p == '+') && p[1] >= '0' && p[1] <= '9')) {
			const char *tok = p;
			unsigned long long v = 0, limit = 0x7fffffffull;
			bool hex, wide = false;

			if (*p == '-' || *p == '+') {
				if (*p == '-')
					limit++;
				p++;
			}
			hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
			      isxdigit((unsigned char)p[2]);
			if (hex) {
				limit = 0x7fffffffull;
				for (p += 2; isxdigit((unsigned char)*p); p++) {
					unsigned d = *p <= '9' ? (unsigned)(*p - '0') :
								 (unsigned)((*p | 0x20) - 'a' + 10);

					v = v * 16 + d;
					wide |= v > limit;
				}
			} else {
				for (; *p >= '0' && *p <= '9'; p++) {
					v = v * 10 + (unsigned)(*p - '0');
					wide |= v > limit;
				}
			}
			if (*p == 'L')
				continue;	/* 64-bit literal: libconfig keeps it whole */
			if (!hex && (*p == '.' || *p == 'e' || *p == 'E')) {
				while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
				       *p == 'E' || *p == '-' || *p == '+')
					p++;
				continue;	/* a float, never an integer setting */
			}
			if (wide) {
				int len = (int)(p - tok);

				conf_error(errs, path, line, "integer %.*s out of range",
					   len > 40 ? 40 : len, tok);
				return 1;
			}
		} else {
			p++;
		}
	}
	return 0;
}
