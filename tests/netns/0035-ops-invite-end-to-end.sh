#!/bin/sh
# knockgw invite end to end: the configuration it prints is used as printed.
# For an auth-only knock (IPv4) and an integrity knock (IPv6, knock mode,
# another port): invite writes the key (0600, its directory 0700) and
# never prints it; its server and client pieces each pass knockgw -n and
# run the two daemons; ssh with its Host block gets in (through
# knock-connect, its ProxyCommand, with integrity), and does not without
# the client's daemon.  --show-key prints the key file's line; an existing
# key is never replaced; a directory others may write is refused.
# sh -c '...' sh ARGS: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
start_sshd2

# split_invite OUT DIR: the pieces of invite's output OUT, each under its
# "# === WHERE: FILE" line, into DIR/server.conf, DIR/client.conf,
# DIR/key.txt and DIR/ssh_config, as an administrator would paste them.
split_invite() {
	mkdir -p "$2"
	awk -v d="$2" '
		/^# === server: .*\/knockgw\.conf$/ { f = d "/server.conf"; next }
		/^# === client: .*\/knockgw\.conf$/ { f = d "/client.conf"; next }
		/^# === client: ~\/\.ssh\/config$/ { f = d "/ssh_config"; next }
		/^# === client: / { f = d "/key.txt"; next }
		f { print > f }' "$1"
}

# The ProxyCommand is "knock-connect %h %p": the one on PATH, pointed at
# the client daemon's socket in this test (start_knockgw's).
mkdir "$TMP/bin"
printf '#!/bin/sh\nexec %s -s %s "$@"\n' "$KC" "$TMP/ctl-$NS_C.sock" >"$TMP/bin/knock-connect"
chmod 755 "$TMP/bin/knock-connect"
SSH="env PATH=$TMP/bin:$PATH ssh $SSH_OPTS -o ConnectTimeout=5"

KEYS=$TMP/keys
# No server configuration to change: invite prints the pieces to merge by
# hand (with one, it prints the change --apply makes: 0056 tests that).
NOCONF=$TMP/absent.conf
CLI_PID=""
SRV_PID=""

# variant TAG NAME DST PORT INVITE-OPTIONS...: invite, check, split, run both
# daemons with the pieces, ssh in with the Host block.
variant() {
	v_tag=$1 v_name=$2 v_dst=$3 v_port=$4
	shift 4
	v_out=$TMP/$v_tag.out
	"$KNOCKGW" invite "$v_name" --dst "$v_dst" --port "$v_port" --keys-dir "$KEYS" -c "$NOCONF" "$@" \
		>"$v_out" 2>"$TMP/$v_tag.err" && rc=0 || rc=$?
	check "$v_tag: invite $v_name exits 0" [ "$rc" = 0 ]
	cat "$TMP/$v_tag.err"
	v_key=$KEYS/$v_name.key
	check "$v_tag: the key file is 0600, root's" \
		[ "$(stat -c '%a %u %F' "$v_key")" = "600 0 regular file" ]
	check "$v_tag: the keys directory is 0700" [ "$(stat -c %a "$KEYS")" = 700 ]
	check "$v_tag: the key file loads (knock-connect isn reads it)" \
		sh -c '"$1" isn --mode native --key-file "$2" --dst "$3" --port 1 >/dev/null' sh \
		"$KC" "$v_key" "$v_dst"
	check "$v_tag: the key is not in the output" \
		sh -c '! grep -qF "$(cat "$1")" "$2"' sh "$v_key" "$v_out"
	check "$v_tag: nothing on stderr" [ ! -s "$TMP/$v_tag.err" ]
	split_invite "$v_out" "$TMP/$v_tag"
	check "$v_tag: the key piece only says how to copy the key" \
		sh -c '! grep -v "^#" "$1" | grep -q .' sh "$TMP/$v_tag/key.txt"
	for v_side in server client; do
		check "$v_tag: the $v_side piece passes knockgw -n" \
			sh -c '"$1" -n -c "$2" | grep -qx "configuration OK"' sh "$KNOCKGW" \
			"$TMP/$v_tag/$v_side.conf"
	done

	[ -z "$SRV_PID" ] || stop_knockgw "$SRV_PID"
	[ -z "$CLI_PID" ] || stop_knockgw "$CLI_PID"
	start_knockgw "$NS_S" "$TMP/$v_tag/server.conf"
	SRV_PID=$KGW_PID
	# Without the client's knockgw the port stays shut.
	out=$(in_c $SSH -F "$TMP/$v_tag/ssh_config" "root@$v_dst" echo "$v_tag" 2>/dev/null) || true
	check "$v_tag: without the client's knockgw ssh does not get in" [ "$out" != "$v_tag" ]
	start_knockgw "$NS_C" "$TMP/$v_tag/client.conf"
	CLI_PID=$KGW_PID
	out=$(in_c $SSH -F "$TMP/$v_tag/ssh_config" "root@$v_dst" echo "$v_tag" 2>"$TMP/ssh.err") ||
		true
	check "$v_tag: ssh with the printed Host block runs a command" [ "$out" = "$v_tag" ]
	[ "$out" = "$v_tag" ] || cat "$TMP/ssh.err"
}

variant plain alice "$S4" 22
check "plain: no ProxyCommand" sh -c '! grep -q ProxyCommand "$1"' sh "$TMP/plain/ssh_config"
check "plain: the server let a knock through" [ "$(counter syn_accepted)" -ge 1 ]

# OpenSSH's banner is "SSH-2.0-OpenSSH_9.2p1 ...": 21 bytes it always sends first.
variant integrity bob "$S6" 2222 --mode knock --integrity-len 21
check "integrity: ProxyCommand knock-connect" \
	grep -q '^	ProxyCommand knock-connect %h %p$' "$TMP/integrity/ssh_config"
check "integrity: the server verified the first bytes" [ "$(counter integ_ok)" -ge 1 ]
check "integrity: the client daemon used knock-connect's intent" \
	[ "$(ccounter client_intents_used)" -ge 1 ]

# --show-key: the key piece is the key file's line.
"$KNOCKGW" invite carol --dst "$S4" --keys-dir "$KEYS" -c "$NOCONF" --show-key >"$TMP/show.out" && rc=0 || rc=$?
check "--show-key: invite exits 0" [ "$rc" = 0 ]
split_invite "$TMP/show.out" "$TMP/show"
check "--show-key: the key piece's line is the key file" \
	sh -c 'grep -v "^#" "$1" | grep . | cmp -s - "$2"' sh "$TMP/show/key.txt" "$KEYS/carol.key"

# An existing key is never replaced.
cp "$KEYS/alice.key" "$TMP/alice.before"
"$KNOCKGW" invite alice --dst "$S4" --keys-dir "$KEYS" >"$TMP/again.out" 2>"$TMP/again.err" &&
	rc=0 || rc=$?
check "a second invite alice fails (exit 1)" [ "$rc" = 1 ]
check "... says the key exists" grep -q "exists" "$TMP/again.err"
check "... prints no configuration" [ ! -s "$TMP/again.out" ]
check "... and leaves the key alone" cmp -s "$TMP/alice.before" "$KEYS/alice.key"

# A directory others may write is refused, and nothing is written there.
mkdir -m 777 "$TMP/open"
"$KNOCKGW" invite dave --dst "$S4" --keys-dir "$TMP/open" >/dev/null 2>"$TMP/open.err" &&
	rc=0 || rc=$?
check "a world-writable keys directory is refused (exit 1)" [ "$rc" = 1 ]
check "... with the reason" grep -q "writable by group or others" "$TMP/open.err"
check "... and no key is left there" [ ! -e "$TMP/open/dave.key" ]

# A bad command line is a usage error.
"$KNOCKGW" invite eve --dst host.example --keys-dir "$KEYS" >/dev/null 2>&1 && rc=0 || rc=$?
check "--dst with a name is a usage error (exit 2)" [ "$rc" = 2 ]
check "... and makes no key" [ ! -e "$KEYS/eve.key" ]
finish
