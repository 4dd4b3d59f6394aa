# 09 reboot, a good configuration: no table survives the reboot; the
# unit's knockgw hide puts the saved hiding table back before network-pre
# is reached, then the daemon starts (enabled) and a knock gets in.
# shellcheck shell=sh
check "systemctl reboot: the container boots again" ct_reboot
check "knockgw.service started at boot" wait_for 20 ct_active knockgw
ct journalctl -b -o cat --no-pager >"$TMP/boot-good.journal"
check "knockgw hide installed the saved table at boot" \
	grep -q "knockgw hide: table inet knockgw installed from $STATE" "$TMP/boot-good.journal"
# The journal's order: the hide line before network-pre.target is reached.
line_of() { grep -n "$1" "$TMP/boot-good.journal" | head -n 1 | cut -d: -f1; }
hide_line=$(line_of "knockgw hide: table inet knockgw installed")
pre_line=$(line_of "Reached target network-pre.target")
check "... before network-pre.target (journal lines $hide_line, $pre_line)" \
	[ "${hide_line:-999999}" -lt "${pre_line:-0}" ]
check "a valid knock to 22 gets SYN-ACK" knock_gets SA
check "a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed boot4 "$C4" "$S4" 22 01020304 --tsval 17
