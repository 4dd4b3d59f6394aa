#!/bin/sh
# The house rule of docs/DESIGN.md section 10: a file under src/WING/
# includes, and its object calls into, only its own wing and those below
# it.  Wings from the ground up: common config kernel datapath ctl daemon
# cmd.  Read from the sources and from the build's objects (nm), so an
# arrow that runs back up fails here, whether an include or a call.  And
# no two source files share a base name.
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

checked=$(wc -l <"$tmp/arrows")
bad=$((bad + $(awk -v wings="$WINGS" '
	BEGIN { n = split(wings, w, " "); for (i = 1; i <= n; i++) r[w[i]] = i }
	!($3 in r) || r[$3] > r[$2] {
		printf "FAIL: %s %s %s: %s/ reaches up into %s/\n", $1, $4, $5, $2, $3 > "/dev/stderr"
		bad++
	}
	END { print bad + 0 }' "$tmp/arrows")))

echo "house: $checked includes and calls checked, $bad failed"
[ "$bad" -eq 0 ]
