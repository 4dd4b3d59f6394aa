# 12 purge: `dpkg --purge knockgw` stops the daemon and removes its table
# (the ports are as their services make them again), its configuration
# (and the knockgw.conf.bak 04's invite and revoke left), its saved state
# and the unit's enabling; the administrator's key stays.
# shellcheck shell=sh disable=SC2016
ct dpkg --purge knockgw </dev/null >"$TMP/dpkg-purge.log" 2>&1
rc=$?
check "dpkg --purge knockgw (exit $rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/# /' "$TMP/dpkg-purge.log"
purged() { ! ct dpkg-query -W -f='${db:Status-Abbrev}' knockgw 2>/dev/null | grep -q '^ii'; }
check "not installed" purged
check "no knockgw process" not ct pgrep -x knockgw
check "no queue guard" ct_no_guard
check "no queue bound" ct_no_queue
check "no table" not has_table
check "sshd answers a plain SYN again (SYN-ACK)" plain_gets SA 22
check "/var/lib/knockgw is gone" ct test ! -e /var/lib/knockgw
unit_gone() {
	ct test ! -e /lib/systemd/system/knockgw.service &&
		ct test ! -e /etc/systemd/system/multi-user.target.wants/knockgw.service
}
check "the unit is gone, not enabled" unit_gone
only_key() {
	[ "$(ct find /etc/knockgw | sort | tr '\n' ' ')" = \
		"/etc/knockgw /etc/knockgw/keys /etc/knockgw/keys/alice.key " ]
}
check "/etc/knockgw holds the key and nothing else" only_key
