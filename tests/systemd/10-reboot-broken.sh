# 10 reboot, a broken configuration, then a broken key file: the daemon
# cannot start, and the protected ports of its last good start still
# answer every SYN like closed ports (the saved hiding table, put back by
# the unit's knockgw hide).  Without it, sshd would answer the world.
# shellcheck shell=sh
ct cp /etc/knockgw/knockgw.conf /root/knockgw.conf.good
echo "this is not libconfig" | ct sh -c 'cat >>/etc/knockgw/knockgw.conf'
check "a broken configuration; systemctl reboot: the container boots again" ct_reboot
ct_settle knockgw
check "knockgw.service failed to start" ct_failed knockgw
conf_error() { ct_journal knockgw | grep -q 'knockgw.conf:[0-9]*: '; }
check "... the configuration's error is in the journal" conf_error
check "a table is in place" has_table
check "IPv4: a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed broken4 "$C4" "$S4" 22 01020304 --tsval 18
check "IPv6: a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed broken6 "$C6" "$S6" 22 01020304 --tsval 19
both_sshd() { ct_listening 22 && ct_listening 2222; }
check "sshd listens on 22 and 2222" both_sshd
check "2222 too (its entry came with a reload)" \
	like_closed broken2222 "$C4" "$S4" 2222 01020304 --tsval 20
check "a valid knock gets port 23's RST+ACK (nothing verifies it)" \
	like_closed brokenk "$C4" "$S4" 22 "$(isn native "$K" "$S4" 22 21)" --tsval 21
in_c timeout 60 nmap -Pn -n -sS --max-retries 1 -p 22,23 "$S4" >"$TMP/nmap-broken.txt" 2>&1
nmap_same "nmap -sS" "$TMP/nmap-broken.txt"

ct cp /root/knockgw.conf.good /etc/knockgw/knockgw.conf
ct chmod 0644 /etc/knockgw/keys/alice.key
check "a key file others may read; systemctl reboot: the container boots again" ct_reboot
ct_settle knockgw
check "knockgw.service failed to start" ct_failed knockgw
key_error() { ct_journal knockgw | grep -q 'alice.key'; }
check "... the key file's error is in the journal" key_error
check "a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed brokenkey4 "$C4" "$S4" 22 01020304 --tsval 22
check "and to 2222" like_closed brokenkey2222 "$C4" "$S4" 2222 01020304 --tsval 23
