#!/bin/sh
# knockgw invite --apply and knockgw revoke, against a running daemon.
#
#   client ns $NS_C                     server ns $NS_S
#   +-----------------------+           +-----------------------------------+
#   | vc 192.0.2.1          |-- veth ---| vs 192.0.2.2, sshd :22            |
#   | prober.py (knocks     |           | knockgw -c server.conf, which     |
#   |  with each new key)   |           |  invite/revoke edit and reload    |
#   +-----------------------+           +-----------------------------------+
#
# The shipped example (a copy, its control socket moved to this test's):
# the preview's diff is the change --apply makes (patch gives the same
# file); --apply reloads the daemon, whose generation moves, and the new
# key's knock gets in while a plain SYN does not; every comment stays; a
# second invite and its revoke give the first file back byte for byte; the
# daemon stops taking the revoked key; revoking the only key of an entry
# is refused.  A file whose lists are in @include'd files gets the edits
# there.  A file with the protect entry already there: the key joins it.
# Failures (another mode, a result the loader refuses) leave the file
# byte-identical with the same inode and no key behind.  A revoke that
# empties the knock list needs a restart: said, and no SIGHUP sent.
# sh -c '...' sh ARGS: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
KEYS=$TMP/keys
CONF=$TMP/server.conf
SOCK=$TMP/server.sock

# The example as shipped, with this test's control socket.
sed "s|^control_socket = .*|control_socket = \"$SOCK\";|" "$TOP/conf/knockgw.conf" >"$CONF"
chmod 600 "$CONF"
cp "$CONF" "$TMP/example.conf"
start_knockgw "$NS_S" "$CONF"

gen() { status_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])'; }
invite() { "$KNOCKGW" invite "$@" --keys-dir "$KEYS" -c "$CONF"; }

# --- the shipped example --------------------------------------------------
invite alice --dst "$S4" >"$TMP/preview.out" 2>"$TMP/preview.err" && rc=0 || rc=$?
check "preview: exit 0" [ "$rc" = 0 ]
check "preview: the key is written (as invite always did)" [ -f "$KEYS/alice.key" ]
check "preview: the file is unchanged" cmp -s "$CONF" "$TMP/example.conf"
sed -n '/^--- /,/^# === client/p' "$TMP/preview.out" | sed '$d' >"$TMP/preview.diff"
check "preview: a diff for the file" grep -q "^+	{ name = \"alice\"; file = \"$KEYS/alice.key\"; }$" \
	"$TMP/preview.diff"
cp "$CONF" "$TMP/patched.conf"
check "preview: patch(1) takes the diff" patch -s "$TMP/patched.conf" "$TMP/preview.diff"

g0=$(gen)
invite alice --dst "$S4" --apply >"$TMP/apply.out" 2>"$TMP/apply.err" && rc=0 || rc=$?
sed 's/^/# /' "$TMP/apply.err"
check "apply: exit 0" [ "$rc" = 0 ]
check "apply: says it used the key the preview wrote" grep -q "using the key already in" "$TMP/apply.err"
check "apply: the file is what the preview's diff makes" cmp -s "$CONF" "$TMP/patched.conf"
check "apply: the old file is FILE.bak" cmp -s "$CONF.bak" "$TMP/example.conf"
check "apply: mode 0600 and root's, as it was" [ "$(stat -c '%a %u' "$CONF")" = "600 0" ]
check "apply: every line of the example is still there" \
	sh -c '[ "$(diff "$1" "$2" | grep -c "^<")" = 0 ]' sh "$TMP/example.conf" "$CONF"
check "apply: says the daemon reloaded" grep -q "reloaded (pid $KGW_PID): configuration generation" \
	"$TMP/apply.out"
check "apply: the daemon's generation moved" [ "$(gen)" -gt "$g0" ]
check "apply: the client's pieces are printed" grep -q "^# === client: ~/.ssh/config$" "$TMP/apply.out"
check "alice's knock gets in" knock_gets SA "$KEYS/alice.key"
check "a plain SYN does not" plain_gets RA
cp "$CONF" "$TMP/after-alice.conf"

invite bob --dst "$S4" --apply >"$TMP/bob.out" 2>&1 && rc=0 || rc=$?
check "bob: exit 0" [ "$rc" = 0 ]
check "bob joins alice's entry" grep -q 'keys = \[ "alice", "bob" \]' "$CONF"
check "bob's knock gets in" knock_gets SA "$KEYS/bob.key"
"$KNOCKGW" revoke bob -c "$CONF" --apply >"$TMP/rbob.out" 2>&1 && rc=0 || rc=$?
check "revoke bob: exit 0" [ "$rc" = 0 ]
check "revoke bob: says the key file stays" grep -q "the key file $KEYS/bob.key stays" "$TMP/rbob.out"
check "invite then revoke: the file as it was, byte for byte" cmp -s "$CONF" "$TMP/after-alice.conf"
check "revoke bob: reloaded" grep -q "reloaded (pid $KGW_PID)" "$TMP/rbob.out"
check "bob's knock no longer gets in" knock_gets RA "$KEYS/bob.key"
check "alice's still does" knock_gets SA "$KEYS/alice.key"

"$KNOCKGW" revoke alice -c "$CONF" >"$TMP/ralice.out" 2>"$TMP/ralice.err" && rc=0 || rc=$?
check "revoking the only key of an entry is refused (exit 1)" [ "$rc" = 1 ]
check "... saying why" grep -q 'is the only key of the protect entry for port 22' "$TMP/ralice.err"
check "... and the file is unchanged" cmp -s "$CONF" "$TMP/after-alice.conf"

# --- failures leave the file as it was: same bytes, same inode -----------
ino=$(stat -c %i "$CONF")
invite carol --dst "$S4" --mode knock --apply >/dev/null 2>"$TMP/mode.err" && rc=0 || rc=$?
check "another mode than the entry's: exit 1" [ "$rc" = 1 ]
check "... saying so" grep -q 'is not mode "knock"' "$TMP/mode.err"
check "... no key left behind" [ ! -e "$KEYS/carol.key" ]
check "... the file byte for byte" cmp -s "$CONF" "$TMP/after-alice.conf"
check "... the same inode" [ "$(stat -c %i "$CONF")" = "$ino" ]
# An entry with 16 keys takes no 17th: the loader refuses the result.
{
	echo "control_socket = \"$SOCK\";"
	names=""
	echo "keys = ("
	for i in $(seq 1 16); do
		[ "$i" = 1 ] || echo ","
		printf '\t{ name = "k%s"; file = "%s"; }' "$i" "$(key_file "k$i")"
		names="$names${names:+, }\"k$i\""
	done
	printf '\n);\nprotect = ( { port = 22; mode = "native"; keys = [ %s ]; } );\n' "$names"
} >"$CONF"
check "sixteen keys: the file loads" "$KNOCKGW" -n -c "$CONF"
cp "$CONF" "$TMP/sixteen.conf"
ino=$(stat -c %i "$CONF")
invite dave --dst "$S4" --apply >/dev/null 2>"$TMP/full.err" && rc=0 || rc=$?
check "a result the loader refuses: exit 1" [ "$rc" = 1 ]
check "... with the loader's words" grep -q "would not load" "$TMP/full.err"
check "... and its FILE:LINE" grep -q "$CONF:[0-9]*: protect entry names 17 keys" "$TMP/full.err"
check "... no key left behind" [ ! -e "$KEYS/dave.key" ]
check "... the file byte for byte, same inode" \
	sh -c 'cmp -s "$1" "$2" && [ "$(stat -c %i "$1")" = "$3" ]' sh "$CONF" "$TMP/sixteen.conf" "$ino"
cp "$TMP/after-alice.conf" "$CONF"

# --- lists in @include'd files --------------------------------------------
mkdir -m 700 "$TMP/inc"
printf '# keys\nkeys = (\n\t{ name = "alice"; file = "%s"; }\n);\n' "$KEYS/alice.key" >"$TMP/inc/keys.inc"
printf '# ports\nprotect = (\n\t{ port = 22; mode = "native"; keys = [ "alice" ]; }\n);\n' \
	>"$TMP/inc/protect.inc"
printf '# main\ncontrol_socket = "%s";\n@include "inc/keys.inc"\n@include "inc/protect.inc"\n' \
	"$SOCK" >"$CONF"
chmod 600 "$CONF" "$TMP/inc/"*.inc
cp "$CONF" "$TMP/main.before"
LOG=$TMP/knockgw-$NS_S.log
n=$(grep -c '^reloaded:' "$LOG")
kill -HUP "$KGW_PID"
check "includes: the daemon takes the file as it is" \
	wait_for 10 sh -c "[ \$(grep -c '^reloaded:' '$LOG') -gt $n ]"
invite erin --dst "$S4" --apply >"$TMP/inc.out" 2>&1 && rc=0 || rc=$?
check "includes: exit 0" [ "$rc" = 0 ]
check "includes: the main file is unchanged" cmp -s "$CONF" "$TMP/main.before"
check "includes: the key went into keys.inc" grep -q "name = \"erin\"" "$TMP/inc/keys.inc"
check "includes: the name into protect.inc's entry" grep -q '"alice", "erin"' "$TMP/inc/protect.inc"
check "includes: keys.inc.bak and protect.inc.bak" [ -f "$TMP/inc/keys.inc.bak" ] && [ -f "$TMP/inc/protect.inc.bak" ]
check "includes: reloaded" grep -q "reloaded (pid $KGW_PID)" "$TMP/inc.out"
check "includes: erin's knock gets in" knock_gets SA "$KEYS/erin.key"

# --- a revoke that empties the knock list needs a restart -----------------
printf 'control_socket = "%s";\nkeys = ( { name = "alice"; file = "%s"; }, { name = "out"; file = "%s"; } );\nprotect = ( { port = 22; mode = "native"; keys = [ "alice", "out" ]; } );\nknock = ( { dst = "198.51.100.7"; port = 22; mode = "native"; key = "out"; } );\n' \
	"$SOCK" "$KEYS/alice.key" "$KEYS/bob.key" >"$CONF"
stop_knockgw "$KGW_PID"
start_knockgw "$NS_S" "$CONF"
n=$(grep -c '^reloading' "$LOG")
"$KNOCKGW" revoke out -c "$CONF" --apply >"$TMP/restart.out" 2>"$TMP/restart.err" && rc=0 || rc=$?
check "the last knock entry gone: exit 1" [ "$rc" = 1 ]
check "... the file is written" sh -c '! grep -q "knock = ( {" "$1"' sh "$CONF"
check "... says a restart is needed" grep -q "restart the daemon" "$TMP/restart.err"
check "... and sent no SIGHUP" [ "$(grep -c '^reloading' "$LOG")" = "$n" ]
finish
