#!/bin/sh
# The control socket's file cannot be turned against another file.
#
# The attack: control_socket in a directory others may write to.  The
# daemon binds the socket there; in that moment the attacker (uid nobody)
# replaces the socket file with a symlink to a root-only file, and a daemon
# that then set the socket's mode through the path (chmod) would make that
# file mode 0666.  The moment is held still under gdb: a breakpoint right
# after the daemon's bind of the control socket, where the swap happens.
# The directory must be refused before anything is bound there, and the
# target must stay 0600.
#
# Then the directory rule, row by row: writable by the group, by all (with
# and without the sticky bit), owned by another user: refused with a clear
# message; a directory of root's, 0755, whether there or made by the
# daemon: the socket is born 0666 and a user other than root can connect.
#
#   server ns $NS_S
#   +------------------------------------------------------------+
#   | knockgw (protects 22), control_socket in $TMP/<dir>/ctl.sock |
#   | setpriv --reuid nobody: the attacker, the other local user   |
#   +------------------------------------------------------------+
. "$(dirname "$0")/lib/lib.sh"

ip netns add "$NS_S"
ip -n "$NS_S" link set lo up
K=$(key_file k)

# conf DIR: a configuration whose control socket is DIR/ctl.sock.
conf() {
	key_conf "$TMP/$1.conf" "$(entry 22)" "control_socket = \"$TMP/$1/ctl.sock\";"
}

# as_nobody COMMAND...: the other local user.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# mode FILE: its permission bits, octal.
mode() { stat -c %a "$1"; }

# --- the attack ----------------------------------------------------------
mkdir "$TMP/pub"
chmod 0777 "$TMP/pub"
printf 'root only\n' >"$TMP/secret"
chmod 0600 "$TMP/secret"
conf pub
# The breakpoint: the chmod of the path after the bind (the socket file is
# there), where a daemon that refuses the directory never gets.
# LeakSanitizer cannot work under ptrace (make check-asan): off here.
# shellcheck disable=SC2016 # $_any_caller_matches is gdb's, not the shell's
in_s env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	gdb -q -batch -nx -ex 'set breakpoint pending on' \
	-ex 'break chmod if $_any_caller_matches("ctlsock", 3)' -ex run \
	-ex "shell [ -S $TMP/pub/ctl.sock ] && touch $TMP/bound && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'rm -f $TMP/pub/ctl.sock && ln -s $TMP/secret $TMP/pub/ctl.sock'" \
	-ex continue --args "$KNOCKGW" -f -c "$TMP/pub.conf" >"$TMP/attack.log" 2>&1 &
GDB_PID=$!
PIDS="$PIDS $GDB_PID"
# The daemon either refuses and exits, or binds, is let go and gets ready.
wait_for 30 sh -c "! kill -0 $GDB_PID 2>/dev/null || grep -q '^ready:' '$TMP/attack.log'" || true
echo "# attack: socket bound and swapped: $([ -e "$TMP/bound" ] && echo yes || echo no);" \
	"the target's mode now: $(mode "$TMP/secret")"
check "the root-only file a symlink swapped in points to stays 0600" \
	sh -c "[ \"\$(stat -c %a '$TMP/secret')\" = 600 ]"
check "... the directory others may write to is refused, before any bind there" \
	sh -c "grep -q 'directory \"$TMP/pub\" is writable by others' '$TMP/attack.log' &&
		[ ! -e '$TMP/bound' ]"
pkill -TERM -f "^$KNOCKGW -f -c $TMP/pub.conf" || true
wait_for 10 sh -c "! kill -0 $GDB_PID 2>/dev/null" || true

# --- the directory rule --------------------------------------------------

# refused NAME MODE OWNER MESSAGE: a directory NAME with MODE and OWNER
# holds the socket: the daemon does not start, says MESSAGE, makes nothing.
refused() {
	mkdir "$TMP/$1"
	chown "$3" "$TMP/$1"
	chmod "$2" "$TMP/$1"
	conf "$1"
	in_s timeout 20 "$KNOCKGW" -f -c "$TMP/$1.conf" >"$TMP/$1.log" 2>&1 && rc=0 || rc=$?
	check "control socket in a directory $2 owned by $3: refused ($4)" \
		sh -c "[ $rc = 1 ] && grep -q '$4' '$TMP/$1.log' && [ ! -e '$TMP/$1/ctl.sock' ]"
}
refused group 0775 root 'is writable by its group'
refused world 0777 root 'is writable by others'
refused sticky 1777 root 'is writable by others'
refused foreign 0755 nobody 'is owned by uid 65534, neither root nor'

# accepted NAME: the daemon starts with its socket in $TMP/NAME, born 0666
# in a directory 0755; nobody (not root) connects; a stop removes it.
accepted() {
	conf "$1"
	start_knockgw "$NS_S" "$TMP/$1.conf"
	check "control socket in $2: the daemon starts, the socket is 0666" \
		sh -c "[ -S '$TMP/$1/ctl.sock' ] && [ \"\$(stat -c %a '$TMP/$1/ctl.sock')\" = 666 ] &&
			[ \"\$(stat -c %a '$TMP/$1')\" = 755 ]"
	check "... another local user can connect to it" \
		as_nobody /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])' "$TMP/$1/ctl.sock"
	kill -TERM "$KGW_PID"
	wait_for 5 sh -c "! kill -0 $KGW_PID 2>/dev/null"
	check "... and a stop removes it" test ! -e "$TMP/$1/ctl.sock"
}
mkdir "$TMP/own"
chmod 0755 "$TMP/own"
accepted own "a directory of root's, 0755"
accepted made "a directory the daemon makes"
finish
