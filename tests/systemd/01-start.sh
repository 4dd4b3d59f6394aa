# 01 start: a key and a protect entry for sshd's port 22, then
# `systemctl enable --now knockgw`, the way README deploys it.  A valid
# knock gets in, a plain SYN gets what the closed port 23 gets, and the
# start saved the hiding state: the same table as the configuration's,
# with none of its key.  The queue guard runs in the unit's control group
# with the daemon's privileges after their drop (CAP_NET_ADMIN, no_new_privs,
# the unit's system call filter), and no more.
# shellcheck shell=sh disable=SC2016
ct install -d -m 0700 /etc/knockgw/keys
ct_key "$K"
ct_conf <<EOC
keys = ( { name = "alice"; file = "keys/alice.key"; } );
protect = ( { port = 22; mode = "native"; keys = [ "alice" ]; } );
EOC
check "systemctl enable --now knockgw" ct systemctl enable --now knockgw
check "knockgw.service is active" ct_active knockgw
check "sshd listens on 22 in the container" ct_listening 22
check "a valid knock to 22 gets SYN-ACK" knock_gets SA
check "IPv4: a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed start4 "$C4" "$S4" 22 01020304 --tsval 11
check "IPv6: a plain SYN to 22 gets port 23's RST+ACK, field for field" \
	like_closed start6 "$C6" "$S6" 22 01020304 --tsval 12
state_modes() {
	[ "$(ct stat -c %a:%U "$STATE" /var/lib/knockgw | tr '\n' ' ')" = "600:root 700:root " ]
}
check "the start saved $STATE: 0600 in a 0700 directory, root's" state_modes
# print-rules' first line names the file.
rules_of() { ct knockgw print-rules -c "$1" | tail -n +2; }
same_rules() {
	rules_of /etc/knockgw/knockgw.conf >"$TMP/rules.conf"
	rules_of "$STATE" >"$TMP/rules.state"
	[ -s "$TMP/rules.conf" ] && cmp -s "$TMP/rules.conf" "$TMP/rules.state"
}
check "the state makes the configuration's table (print-rules)" same_rules
no_key() { ct test -s "$STATE" && ! ct grep -qF "$(cat "$K")" "$STATE"; }
check "the state holds nothing of the key" no_key
queues_bound() { [ -n "$(ct_queues)" ]; }
check "its queues are bound (nfnetlink_queue lists them)" queues_bound
check "one queue guard, in the unit's control group" ct_one_guard
# guard_sandboxed: the guard's privileges are the daemon's main thread's
# (CAP_NET_ADMIN only, the unit's bounding set, no_new_privs, seccomp).
status_of_ct() { ct awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
guard_sandboxed() {
	gs_g=$(ct_guards)
	gs_d=$(ct_prop knockgw MainPID)
	[ "$(status_of_ct "$gs_g" CapEff)" = 0000000000001000 ] || return 1
	for gs_k in CapEff CapPrm CapInh CapAmb CapBnd NoNewPrivs Seccomp; do
		gs_v=$(status_of_ct "$gs_g" $gs_k)
		echo "# guard $gs_k $gs_v"
		[ -n "$gs_v" ] && [ "$gs_v" = "$(status_of_ct "$gs_d" $gs_k)" ] || return 1
	done
	[ "$(status_of_ct "$gs_g" NoNewPrivs)" = 1 ] && [ "$(status_of_ct "$gs_g" Seccomp)" = 2 ]
}
check "... with the daemon's privileges: CAP_NET_ADMIN only, no_new_privs, the unit's filter" \
	guard_sandboxed
