# 02 reload: a second sshd on 2222 (a unit of the test's, enabled: it is
# back after each reboot), open until a protect entry for it is added and
# `systemctl reload knockgw` takes it (same process); then 2222 is hidden
# and a knock gets in, and the saved state has it.
# shellcheck shell=sh
ct sh -c 'cat >/etc/systemd/system/kgwtest-sshd2222.service' <<EOU
[Unit]
Description=a second sshd, on 2222 (tests/systemd)
After=ssh.service
[Service]
ExecStart=/usr/sbin/sshd -D -p 2222
RuntimeDirectory=sshd
RuntimeDirectoryPreserve=yes
[Install]
WantedBy=multi-user.target
EOU
ct systemctl daemon-reload
ct systemctl enable -q --now kgwtest-sshd2222.service
check "a second sshd listens on 2222" ct_listening 2222
check "2222 unprotected: a plain SYN gets SYN-ACK" plain_gets SA 2222
pid=$(ct_prop knockgw MainPID)
ct_conf <<EOC
keys = ( { name = "alice"; file = "keys/alice.key"; } );
protect = ( { port = 22; mode = "native"; keys = [ "alice" ]; },
	    { port = 2222; mode = "native"; keys = [ "alice" ]; } );
EOC
check "systemctl reload knockgw" ct systemctl reload knockgw
same_process() { [ "$(ct_prop knockgw MainPID)" = "$1" ] && ct_active knockgw; }
check "the same process ($pid), active" same_process "$pid"
check "after the reload, a plain SYN to 2222 gets port 23's RST+ACK" \
	like_closed reload4 "$C4" "$S4" 2222 01020304 --tsval 13
check "... and a valid knock to 2222 gets SYN-ACK" knock_gets SA "$K" 2222
check "... and 22 is still hidden" plain_gets RA 22
check "the saved state has port 2222" ct_has "$STATE" "port = 2222;"
