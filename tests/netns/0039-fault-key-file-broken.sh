#!/bin/sh
# Fault: a key file goes bad under a running daemon, then SIGHUP.  Removed,
# made readable by others (chmod 644), given away (chown nobody), replaced
# by a symbolic link, emptied: each reload is refused with FILE:LINE naming
# the key file, and the daemon serves on with the keys it had (a knock with
# them passes, a plain SYN gets the closed-port RST).  Once the file is
# right again the next reload succeeds and takes the new configuration.
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +----------------------------------+
#   | prober.py, knock ISNs |---- veth ---| sshd :22, knockgw protects 22    |
#   | from knock-connect    |             | with key "a" ($TMP/a.key), later |
#   +-----------------------+             | "a" and "b"                      |
#                                         +----------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
KA=$(key_file a)
KB=$(key_file b)
cp -p "$KA" "$TMP/a.key.saved"
conf() { # KEYNAMES... -> knockgw.conf protecting 22 with those keys
	names=$(printf '"%s", ' "$@")
	cat >"$TMP/knockgw.conf" <<-EOC
	control_socket = "$TMP/server.sock";
	keys = (
		{ name = "a"; file = "$KA"; },
		{ name = "b"; file = "$KB"; }
	);
	protect = ( { port = 22; mode = "native"; keys = [ ${names%, } ]; } );
	EOC
}
conf a
# The line of the setting the messages must quote.
KA_LINE=$(grep -n "file = \"$KA\"" "$TMP/knockgw.conf" | cut -d: -f1)
start_knockgw "$NS_S" "$TMP/knockgw.conf"
LOG=$TMP/knockgw-$NS_S.log

serves_old() { knock_gets SA "$TMP/a.key.saved" && plain_gets RA; }
reloads() { # the "N reload(s)" figure of knockgw status
	in_s "$KNOCKGW" status -c "$TMP/status.conf" 2>/dev/null |
		sed -n 's/.* \([0-9]*\) reload(s).*/\1/p'
}
refused() { # its "M refused" figure
	in_s "$KNOCKGW" status -c "$TMP/status.conf" 2>/dev/null |
		sed -n 's/.* reload(s), \([0-9]*\) refused.*/\1/p'
}
printf 'control_socket = "%s";\n' "$TMP/server.sock" >"$TMP/status.conf"

check "before: a knock with key a gets SYN-ACK, a plain SYN the RST" serves_old

# bad_reload NAME MESSAGE: SIGHUP with the key file broken as the caller
# left it; the reload must be refused, quoting FILE:LINE and MESSAGE (an
# extended regular expression), and the old key must still open the port.
bad_reload() {
	check "$1: the reload is refused" sighup_refused
	check "$1: as $TMP/knockgw.conf:$KA_LINE: $2" \
		grep -qE "^$TMP/knockgw.conf:$KA_LINE: ($2)" "$LOG"
	check "$1: the daemon still runs" kill -0 "$KGW_PID"
	check "$1: key a still opens the port, a plain SYN is still refused" serves_old
}
# Reload into a config that adds key b, so that a reload that went through
# would show (key b would open the port).
conf a b

rm -f "$KA"
bad_reload "key file removed" "cannot open key file \"$KA\": No such file or directory"

cp -p "$TMP/a.key.saved" "$KA"
chmod 644 "$KA"
bad_reload "key file chmod 644" "key file \"$KA\" is readable or writable by group or others"

chmod 600 "$KA"
chown 65534:65534 "$KA"
# The running daemon kept CAP_NET_ADMIN only: without CAP_DAC_OVERRIDE it
# cannot even open a 0600 file of another uid, before the owner check.
bad_reload "key file owned by nobody" \
	"key file \"$KA\" is owned by uid 65534|cannot open key file \"$KA\": Permission denied"

rm -f "$KA"
ln -s "$TMP/a.key.saved" "$KA"
bad_reload "key file replaced by a symlink" "key file \"$KA\" is a symbolic link"

rm -f "$KA"
: >"$KA"
chmod 600 "$KA"
bad_reload "key file emptied" "key file \"$KA\" is empty"

check "no refused reload took key b" knock_gets RA "$KB"
check "the refused reloads were not counted as reloads" [ "$(reloads)" = 0 ]
check "knockgw status counts the 5 refused reloads" [ "$(refused)" = 5 ]
check "refused reloads: the counters say why (syn_refused)" [ "$(counter syn_refused)" -ge 6 ]

# Repaired: the next reload goes through and takes key b as well.
cp -p "$TMP/a.key.saved" "$KA"
kill -HUP "$KGW_PID"
check "repaired: the reload succeeds" wait_for 10 grep -q '^reloaded' "$LOG"
check "repaired: knockgw status counts 1 reload" [ "$(reloads)" = 1 ]
check "repaired: key b now opens the port" knock_gets SA "$KB"
check "repaired: key a still does, a plain SYN is still refused" serves_old
finish
