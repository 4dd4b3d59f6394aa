#!/bin/sh
# The house rule of docs/DESIGN.md section 10: a file under src/WING/
# includes, and its object calls into, only its own wing and those below
# it.  Wings from the ground up: common config kernel datapath ctl daemon
# cmd.  Read from the sources and from the build's objects (nm), so an
# arrow that runs back up fails here, whether an include or a call.  And
# no two source files share a base name, and the names a file exports carry
# its module's prefix.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
WINGS="common config kernel datapath ctl daemon cmd"

rank() {
	i=1
	for w in $WINGS; do
		[ "$w" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo 0
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
checked=0

# Every wing of src/ is one the rule knows.
for d in src/*/; do
	w=$(basename "$d")
	[ "$(rank "$w")" -gt 0 ] || { echo "FAIL: src/$w/ is no wing of the house"; bad=$((bad + 1)); }
done

# Every source file has a base name of its own: the library archive keeps
# members by base name, and a second metrics.o would replace the first.
for n in $(find src -name '*.c' -exec basename {} \; | sort | uniq -d); do
	echo "FAIL: more than one src/**/$n:" $(find src -name "$n")
	bad=$((bad + 1))
done

# Includes: "FILE FROM TO WHAT" lines, judged below with the calls.
for f in $(find src -name '*.[ch]' | sort); do
	from=$(echo "$f" | cut -d/ -f2)
	sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r h; do
		[ -f "src/$h" ] || { echo "$f $from ? include \"$h\" (not written from src/)"; continue; }
		echo "$f $from ${h%%/*} includes $h"
	done
done >"$tmp/arrows"

# Calls: every undefined symbol of an object that another object of src/
# defines.
objs=$(find "$BUILD/obj/src" -name '*.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "FAIL: no objects under $BUILD/obj/src (build first)"; exit 1; }
for o in $objs; do
	w=$(echo "${o#"$BUILD"/obj/}" | cut -d/ -f2)
	nm --defined-only "$o" | awk -v w="$w" '$2 ~ /^[TDBR]$/ { print $3, w }'
done | sort -u >"$tmp/defs"
for o in $objs; do
	w=$(echo "${o#"$BUILD"/obj/}" | cut -d/ -f2)
	nm --undefined-only "$o" | awk -v o="$o" -v w="$w" '{ print $2, w, o }'
done | sort >"$tmp/uses"
join "$tmp/uses" "$tmp/defs" | awk '{ print $3, $2, $4, "calls", $1 }' >>"$tmp/arrows"

# Names: every name an object exports starts with a word of its file's
# name (print_rules.c: print_), a leading part of it (clienticmp.c:
# client_), a longer form of it (nfq.c: nfqueue_), or the first word of a
# type its header declares (confedit.h's struct confedit_plan: confedit_;
# a file without a header of its own takes the types of the header it
# extends, conf_syntax_read.c those of conf_syntax.h).  main is
# knockgw.c's.
for f in $(find src -name '*.c' | sort); do
	stem=$(basename "$f" .c)
	h=${f%.c}.h
	if [ ! -f "$h" ]; then
		h=""
		for c in "$(dirname "$f")"/*.h; do
			s=$(basename "$c" .h)
			case $stem in "$s"_*) h=$c ;; esac
		done
	fi
	types=""
	[ -n "$h" ] && types=$(sed -n 's/^\(struct\|enum\|union\)[[:space:]]\{1,\}\([a-z0-9_]*\)[[:space:]]*{.*/\2/p' "$h" |
		sed 's/_.*//' | sort -u | tr '\n' ' ')
	o=$BUILD/obj/${f%.c}.o
	[ -f "$o" ] || { echo "FAIL: $o missing (build first)"; bad=$((bad + 1)); continue; }
	nm --defined-only "$o" | awk -v f="$f" -v stem="$stem" -v types="$types" '
		BEGIN {
			n = split(stem, w, "_"); joined = ""
			for (i = 1; i <= n; i++) { ok[w[i]] = 1; joined = joined w[i] }
			m = split(types, t, " "); for (i = 1; i <= m; i++) ok[t[i]] = 1
		}
		$2 ~ /^[TDBR]$/ {
			s = $3; W = s; sub(/_.*/, "", W)
			if ((s == "main" && stem == "knockgw") || (W in ok) || index(joined, W) == 1 ||
			    index(W, joined) == 1)
				next
			print "FAIL: " f " exports " s ": no prefix of its module"
		}'
done >"$tmp/names"
cat "$tmp/names"
names=$(find src -name '*.c' | wc -l)
bad=$((bad + $(wc -l <"$tmp/names")))

checked=$(wc -l <"$tmp/arrows")
bad=$((bad + $(awk -v wings="$WINGS" '
	BEGIN { n = split(wings, w, " "); for (i = 1; i <= n; i++) r[w[i]] = i }
	!($3 in r) || r[$3] > r[$2] {
		printf "FAIL: %s %s %s: %s/ reaches up into %s/\n", $1, $4, $5, $2, $3 > "/dev/stderr"
		bad++
	}
	END { print bad + 0 }' "$tmp/arrows")))

echo "house: $checked includes and calls, the names of $names files checked, $bad failed"
[ "$bad" -eq 0 ]
