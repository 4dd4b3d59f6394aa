#!/bin/sh
# Security: secrets and settings in configuration files others can reach.
# The server's knock-mode secret is written inline, in a file the main
# configuration @includes.  Each step below breaks one rule under the
# running daemon and sends SIGHUP; the reload must be refused with
# FILE:LINE naming the file to fix, and the daemon serves on with what it
# had (a knock with the secret passes, a plain SYN gets the closed-port RST):
#   - the included file with the secret made 0644 (any local user could
#     read the secret and knock),
#   - the main file made group-writable (its group could rewrite which ports
#     stay hidden),
#   - the included file given an integer libconfig 1.5 wraps to 32 bits
#     without a word (the prescan never saw included files),
#   - the included file including itself.
# Once the files are right again the next reload succeeds.
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +-----------------------------------+
#   | prober.py, knock ISNs |---- veth ---| sshd :22, knockgw protects 22     |
#   | from knock-connect    |             | (knock mode, secret in secret.inc)|
#   +-----------------------+             +-----------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
CONF=$TMP/knockgw.conf
INC=$TMP/secret.inc
cat >"$CONF" <<EOC
control_socket = "$TMP/server.sock";
@include "secret.inc"
protect = ( { port = 22; mode = "knock"; keys = [ "legacy" ]; } );
EOC
cat >"$INC" <<EOC
keys = ( { name = "legacy"; secret = "$SECRET"; } );
EOC
# The main file holds no secret: 0644 is fine for it.  The included one does.
chmod 644 "$CONF"
chmod 600 "$INC"
cp -p "$INC" "$TMP/secret.inc.saved"
start_knockgw "$NS_S" "$CONF"
LOG=$TMP/knockgw-$NS_S.log

serves() { # a fresh knock-mode knock gets SYN-ACK, a plain SYN the RST
	probe knock $C4 $S4 22 "$(isn knock "$SECRET" $S4 22 $((SPORT + 1)))" --tsval $((SPORT + 1))
	answered knock SA && plain_gets RA
}
check "before: a knock with the secret gets SYN-ACK, a plain SYN the RST" serves

# bad_reload NAME FILE:LINE MESSAGE: SIGHUP with the files as the caller left
# them; the reload must be refused with that line (MESSAGE a fixed string).
bad_reload() {
	check "$1: the reload is refused" sighup_refused
	check "$1: as $2: $3" grep -qF "$2: $3" "$LOG"
	check "$1: the daemon still runs" kill -0 "$KGW_PID"
	check "$1: the secret still opens the port, a plain SYN is still refused" serves
}

chmod 644 "$INC"
bad_reload "included secret chmod 644" "$INC:1" \
	"key \"legacy\": a file holding a secret may be readable by its owner only, and \"$INC\" has mode 0644; chmod 600 it, or move the secret to a key file"
chmod 600 "$INC"

chmod 664 "$CONF"
bad_reload "main file chmod 664" "$CONF" \
	"configuration file is writable by group or others (mode 0664); chmod go-w it"
chmod 644 "$CONF"

# 2^32 + 65536: libconfig 1.5 would read 65536, the default, and say nothing.
printf 'limits = { hold_flow_bytes = 4295032832; };\n' >>"$INC"
bad_reload "included integer that wraps" "$INC:2" "integer 4295032832 out of range"
cp -p "$TMP/secret.inc.saved" "$INC"

printf '@include "secret.inc"\n' >>"$INC"
bad_reload "included file includes itself" "$INC:2" \
	"@include \"secret.inc\" is an include cycle (\"$INC\" is already being read)"
cp -p "$TMP/secret.inc.saved" "$INC"

check "no refused reload was taken" [ "$(grep -c '^reloaded' "$LOG" || true)" = 0 ]
check "the secret never reached the log" sh -c "! grep -q 'Magic secret' '$LOG'"

kill -HUP "$KGW_PID"
check "repaired: the reload succeeds" wait_for 10 grep -q '^reloaded' "$LOG"
check "repaired: the secret opens the port, a plain SYN is refused" serves
finish
