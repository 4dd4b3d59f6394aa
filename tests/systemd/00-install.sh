# 00 install: dpkg -i the package as on a fresh host.  It enables
# knockgw.service (the product's first command is already done for the
# administrator) but does not start it while the shipped configuration
# protects nothing; the unit hides before it checks the configuration.
# shellcheck shell=sh disable=SC2016
ct dpkg -i /root/knockgw.deb </dev/null >"$TMP/dpkg-install.log" 2>&1
rc=$?
check "dpkg -i knockgw.deb (exit $rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/# /' "$TMP/dpkg-install.log"
check "installed (ii)" [ "$(ct dpkg-query -W -f='${db:Status-Abbrev}' knockgw)" = "ii " ]
check "knockgw.service is enabled" [ "$(ct systemctl is-enabled knockgw.service)" = enabled ]
not_started() {
	! ct systemctl -q is-active knockgw && grep -q 'enabled but not started' "$TMP/dpkg-install.log"
}
check "not started: the shipped configuration protects nothing, and dpkg says so" not_started
hides_first() {
	ct_prop knockgw ExecStartPre | head -n 1 | grep -q 'argv\[\]=/usr/sbin/knockgw hide'
}
check "the unit's first step is knockgw hide (before the configuration's check)" hides_first
