# 07 stop: `systemctl stop knockgw` leaves the hiding table: the protected
# ports answer like closed ports, and a valid knock too (nothing verifies
# it).  Nothing of the daemon stays: no queue guard, no queue bound.
# shellcheck shell=sh
check "systemctl stop knockgw" ct systemctl stop knockgw
check "inactive (a clean stop, not failed)" [ "$(ct systemctl is-active knockgw)" = inactive ]
check "no queue guard left" ct_no_guard
check "... and no queue bound (the bypass answers)" ct_no_queue
check "the table stays" has_table
check "IPv4: a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed stop4 "$C4" "$S4" 22 01020304 --tsval 14
check "IPv6: a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed stop6 "$C6" "$S6" 22 01020304 --tsval 15
check "a valid knock to 22 gets port 23's RST+ACK too" \
	like_closed stopk4 "$C4" "$S4" 22 "$(isn native "$K" "$S4" 22 16)" --tsval 16
