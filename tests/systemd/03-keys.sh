# 03 key rotation: alice's key file replaced by a new key, then a reload:
# the old key's knock is refused, the new one's gets in.  A key file that
# does not load makes the reload refused: the daemon keeps its keys and
# the saved state stays as it was.
# shellcheck shell=sh
K_OLD=$K
K=$(key_file alice2)
ct_key "$K"
check "systemctl reload knockgw with the new key file" ct systemctl reload knockgw
check "the old key's knock gets RST+ACK" knock_gets RA "$K_OLD"
check "the new key's knock gets SYN-ACK" knock_gets SA "$K"
ct cat "$STATE" >"$TMP/state.before"
echo "not base64" >"$TMP/bad.key"
ct_key "$TMP/bad.key"
ct systemctl reload knockgw
refused() { ct_journal knockgw | grep -q 'reload refused'; }
check "a key file that does not load: the reload is refused (journal)" refused
check "... the daemon runs on with its keys: the new key's knock gets SYN-ACK" knock_gets SA "$K"
state_kept() { [ -s "$TMP/state.before" ] && ct cat "$STATE" | cmp -s - "$TMP/state.before"; }
check "... and the saved state is as it was" state_kept
ct_key "$K"
check "the key file back: systemctl reload knockgw" ct systemctl reload knockgw
