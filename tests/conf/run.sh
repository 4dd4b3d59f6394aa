#!/bin/sh
# tests/conf/run.sh - the configuration checker against known good and bad files.
#
#   good/*.conf  `knockgw -n -c FILE` exits 0 and prints "configuration OK"
#   bad/*.conf   it exits 1 and stderr is exactly one line, "FILE:LINE: message",
#                where the file's first line reads "# expect: LINE: message";
#                or "# expect-at: WHOLE LINE" when the message names another
#                file (one it @includes) or no line
#   */inc/       files the configs above @include, never run on their own
#
# Git keeps neither modes nor owners, and key files must be 0600 and owned by
# root or the running user, so the checks run on a copy in a fresh temporary
# directory: keys are made 0600 there, and the bad cases are made there too
# (groupread.key 0640, notmine.key owned by uid 65534 - only as root, so a
# bad file whose second line is "# needs: root" is skipped otherwise -,
# symlink.key a symbolic link, fifo.key a FIFO).  A configuration file that
# holds a text secret must pass the key file rule, and no configuration file
# may be writable by group or others: those with "secret =" are made 0600,
# the others 0644, and the bad cases of those rules get their modes below.  Config paths are passed as
# "bad/NAME.conf" from the copy's top, so a key named "../keys/x.key" shows up
# in messages as "bad/../keys/x.key".  The keys under keys/ are test data only.
#
#   BUILD   build directory holding knockgw (default: build)
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
case $BUILD in
/*) ;;
*) BUILD=$(pwd)/$BUILD ;;
esac
KNOCKGW=$BUILD/knockgw
if [ ! -x "$KNOCKGW" ]; then
	echo "conf: $KNOCKGW is not built" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/knockgw-conf.XXXXXX") || exit 1
cleanup() {
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

cp -R tests/conf/good tests/conf/bad tests/conf/keys "$tmp"/ || exit 1
example_ok=0
cmp -s conf/knockgw.conf tests/conf/good/0007-example.conf && example_ok=1
# Every setting the loader knows (a row of src/config/read/conf_schema.c's tables)
# is named in the example and has a heading in knockgw.conf(5).
settings=$(sed -En 's/^[[:space:]]*[{] "([a-z_]+)", *(INT[(]|BOOL[(]|WORD[(]|STR[A-Z]*[(]|[.]type).*/\1/p' \
	src/config/read/conf_schema.c | sort -u)
not_in_example=""
not_in_man=""
for k in $settings; do
	grep -Eq "(^|[^a-z_])$k([^a-z_]|\$)" conf/knockgw.conf || not_in_example="$not_in_example $k"
	# a word of a .B or .BR line (a setting's heading), or a group's
	# example line ("limits = { ... };")
	awk -v k="$k" '/^\.BR? / { gsub(/"/, " "); for (i = 2; i <= NF; i++) if ($i == k) f = 1 }
		$1 == k && $2 == "=" { f = 1 }
		END { exit !f }' man/knockgw.conf.5 || not_in_man="$not_in_man $k"
done
nsettings=$(echo "$settings" | wc -w)

cd "$tmp" || exit 1
mkdir out
chmod 600 keys/*.key
chmod 640 keys/groupread.key
ln -s alice.key keys/symlink.key
mkfifo keys/fifo.key
find good bad -type d -exec chmod 755 {} +
for f in $(find good bad -type f); do
	if grep -q 'secret *=' "$f"; then
		chmod 600 "$f"
	else
		chmod 644 "$f"
	fi
done
chmod 644 bad/0071-secret-mode-0644.conf bad/inc/secret-0644.inc
chmod 640 bad/0072-secret-mode-0640.conf
chmod 664 bad/0073-conf-group-writable.conf bad/inc/group-writable.inc
root=0
if [ "$(id -u)" = 0 ]; then
	root=1
	chown 65534 keys/notmine.key bad/0074-conf-not-mine.conf
fi

passed=0
failed=0
skipped=0

pass() {
	echo "ok $1"
	passed=$((passed + 1))
}

fail() {
	echo "not ok $1"
	shift
	for line in "$@"; do
		echo "#   $line"
	done
	failed=$((failed + 1))
}

if [ "$example_ok" = 1 ]; then
	pass "good/0007-example.conf is a copy of conf/knockgw.conf"
else
	fail "good/0007-example.conf is a copy of conf/knockgw.conf" \
		"cp conf/knockgw.conf tests/conf/good/0007-example.conf"
fi

if [ "$nsettings" -ge 40 ] && [ -z "$not_in_example" ]; then
	pass "conf/knockgw.conf names every one of the $nsettings settings"
else
	fail "conf/knockgw.conf names every one of the $nsettings settings" "missing:$not_in_example"
fi
if [ "$nsettings" -ge 40 ] && [ -z "$not_in_man" ]; then
	pass "knockgw.conf(5) describes every one of the $nsettings settings"
else
	fail "knockgw.conf(5) describes every one of the $nsettings settings" "missing:$not_in_man"
fi

for f in good/*.conf; do
	"$KNOCKGW" -n -c "$f" >out/stdout 2>out/stderr
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat out/stdout)" = "configuration OK" ] && [ ! -s out/stderr ]; then
		pass "$f"
	else
		fail "$f" "exit $rc, want 0" "stdout: $(cat out/stdout)" "stderr: $(cat out/stderr)"
	fi
done

for f in bad/*.conf; do
	expect=$(sed -n '1s/^# expect: //p' "$f")
	want=$(sed -n '1s/^# expect-at: //p' "$f")
	if [ -z "$expect" ] && [ -z "$want" ]; then
		fail "$f" "the first line must be '# expect: LINE: message' or '# expect-at: LINE'"
		continue
	fi
	if [ "$root" = 0 ] && sed -n 2p "$f" | grep -q '^# needs: root'; then
		echo "ok $f # SKIP needs root to chown a key file to another user"
		skipped=$((skipped + 1))
		continue
	fi
	[ -n "$want" ] || want="$f:$expect"
	"$KNOCKGW" -n -c "$f" >out/stdout 2>out/stderr
	rc=$?
	got=$(cat out/stderr)
	if [ "$rc" = 1 ] && [ "$got" = "$want" ] && [ ! -s out/stdout ]; then
		pass "$f"
	else
		fail "$f" "exit $rc, want 1" "want: $want" "got:  $got"
	fi
done

[ "$skipped" = 0 ] || echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
