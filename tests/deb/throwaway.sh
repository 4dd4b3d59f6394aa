#!/bin/sh
# The Debian package installed, upgraded, removed and purged by dpkg in a
# throwaway root, with the maintainer scripts run for real:
#   tests/deb/throwaway.sh PACKAGE.deb CONF DIR
# where CONF is the source tree's conf/knockgw.conf and DIR an empty
# directory for the root and the logs.  Run by tests/deb/run.sh as root
# inside `unshare --mount --net --pid --fork --propagation private`: the root
# is an overlay of / whose writes go to a tmpfs, in a private mount
# namespace, so dpkg sees this machine's installed packages (the
# dependencies) and nothing it does reaches the machine's dpkg database,
# /etc or firewall.  The root's /dev is a tmpfs with the few nodes dpkg and
# the scripts use, never the machine's /dev.  This script removes nothing
# itself: run.sh removes DIR once the namespace, and every mount in it, is
# gone (a recursive removal through a mount would reach what is mounted).
#
# systemd does not run in the root.  /run/systemd/system is made to say it
# does, and systemctl is replaced by a stand-in: unit-file operations
# (preset, enable, is-enabled, ...) go to the real systemctl, offline on the
# root; the runtime ones are recorded in /run/stub/calls and act on a
# pretend state, start and restart running the unit's check (knockgw -n)
# first as its ExecStartPre does.  The real knockgw flush runs at removal,
# in this network namespace.  A policy-rc.d (Docker images have one that
# forbids every start) is removed from the root.
# Prints "ok"/"not ok" lines and "throwaway.sh: N passed, N failed".
# sh -c '...' sh ARGS and dpkg-query formats: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
set -u
cd "$(dirname "$0")/../.." || exit 1
DEB=$1
CONF=$2
tmp=$3

# ok, not_ok, check, finish
. tests/netns/lib/base.sh

# Only in a mount namespace of its own (run.sh passes its own as HOST_MNTNS).
if [ -z "${HOST_MNTNS:-}" ] || [ "$(readlink /proc/self/ns/mnt)" = "$HOST_MNTNS" ]; then
	echo "throwaway.sh: run it through tests/deb/run.sh (it needs a mount namespace of its own)" >&2
	exit 1
fi
R=$tmp/root
UNIT=knockgw.service
WANTS=/etc/systemd/system/multi-user.target.wants/$UNIT
STATE=/run/stub/active.$UNIT

# --- the root --------------------------------------------------------------
if ! { mkdir "$tmp/layer" "$R" &&
	mount -t tmpfs tmpfs "$tmp/layer" &&
	mkdir "$tmp/layer/up" "$tmp/layer/work" &&
	mount -t overlay overlay \
		-o "lowerdir=/,upperdir=$tmp/layer/up,workdir=$tmp/layer/work" "$R" &&
	mount -t tmpfs tmpfs "$R/run" &&
	mount -t tmpfs tmpfs "$R/tmp" &&
	mount -t tmpfs -o mode=0755 tmpfs "$R/dev" &&
	mknod -m 0666 "$R/dev/null" c 1 3 &&
	mknod -m 0666 "$R/dev/zero" c 1 5 &&
	mknod -m 0666 "$R/dev/full" c 1 7 &&
	mknod -m 0666 "$R/dev/random" c 1 8 &&
	mknod -m 0666 "$R/dev/urandom" c 1 9 &&
	ln -s /proc/self/fd "$R/dev/fd" &&
	mount -t proc proc "$R/proc" &&
	[ "$(stat -f -c %T "$R")" = overlayfs ] &&
	[ "$(stat -f -c %T "$R/dev")" = tmpfs ] && [ "$(stat -f -c %T "$R/run")" = tmpfs ]; }; then
	not_ok "an overlay of / as a throwaway root (mount namespace, overlayfs, tmpfs)"
	finish
	exit
fi
ok "an overlay of / as a throwaway root"

mv "$R/usr/bin/systemctl" "$R/usr/bin/systemctl.real"
cat >"$R/usr/bin/systemctl" <<'EOF'
#!/bin/sh
# systemctl stand-in of tests/deb/throwaway.sh.
verb=""
unit=""
for a in "$@"; do
	case $a in
	-*) ;;
	*) if [ -z "$verb" ]; then verb=$a; elif [ -z "$unit" ]; then unit=$a; fi ;;
	esac
done
case $verb in
preset | enable | disable | reenable | mask | unmask | is-enabled | list-unit-files)
	exec /usr/bin/systemctl.real --root=/ "$@" ;;
esac
echo "$verb${unit:+ $unit}" >>/run/stub/calls
active=/run/stub/active.$unit
check() {
	knockgw -n -c /etc/knockgw/knockgw.conf >/dev/null 2>&1 || { rm -f "$active"; return 1; }
	touch "$active"
}
case $verb in
daemon-reload) ;;
is-active) [ -e "$active" ] ;;
start | restart) check ;;
try-restart) [ ! -e "$active" ] || check ;;
stop) rm -f "$active" ;;
*) echo "systemctl stand-in: $verb not handled" >&2; exit 1 ;;
esac
EOF
chmod 0755 "$R/usr/bin/systemctl"
rm -f "$R/usr/sbin/policy-rc.d"
mkdir -p "$R/run/systemd/system" "$R/run/stub"
cp "$DEB" "$R/tmp/knockgw_1.deb"

# in_root COMMAND...: in the root, with a plain environment.
in_root() {
	chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
}

# dpkg_do NAME ARGS...: dpkg ARGS in the root, output in $tmp/NAME.log
# (shown on a failure); no terminal, so a conffile question cannot wait.
dpkg_do() {
	name=$1
	shift
	if in_root dpkg "$@" </dev/null >"$tmp/$name.log" 2>&1; then
		return 0
	fi
	sed 's/^/# /' "$tmp/$name.log"
	return 1
}

# repack VERSION OUT [conf]: the package as version VERSION (its
# configuration changed by the maintainer too with "conf"), as an upgrade.
repack() {
	rm -rf "$tmp/repack"
	dpkg-deb -R "$DEB" "$tmp/repack" &&
		sed -i "s/^Version: .*/Version: $1/" "$tmp/repack/DEBIAN/control" &&
		if [ "${3:-}" = conf ]; then
			echo "# changed in $1" >>"$tmp/repack/etc/knockgw/knockgw.conf"
		fi &&
		dpkg-deb --root-owner-group -b "$tmp/repack" "$R/tmp/$2" >/dev/null
}

v1=$(dpkg-deb -f "$DEB" Version)
repack_both() {
	repack "$v1+2" knockgw_2.deb && repack "$v1+3" knockgw_3.deb conf &&
		dpkg-deb --fsys-tarfile "$R/tmp/knockgw_3.deb" |
		tar -xOf - ./etc/knockgw/knockgw.conf >"$tmp/v3.conf"
}
check "repacked as $v1+2 and $v1+3 (configuration changed)" repack_both

reset_calls() { : >"$R/run/stub/calls"; }
# called LINE: the stand-in recorded exactly this runtime call.
called() { grep -qx "$1" "$R/run/stub/calls"; }
# started: something started or restarted the unit (try-restart included).
started() { grep -Eq "^(start|restart|try-restart) $UNIT\$" "$R/run/stub/calls"; }
# started_stopped: something started the unit whether it ran or not.
started_stopped() { grep -Eq "^(start|restart) $UNIT\$" "$R/run/stub/calls"; }
active() { [ -e "$R$STATE" ]; }
# mode PATH OCTAL OWNER TYPE (f or d)
mode() {
	[ -e "$R$1" ] && [ ! -L "$R$1" ] &&
		[ "$(stat -c %a:%U:%G:%F "$R$1")" = "$2:$3:$3:$([ "$4" = d ] && echo directory || echo regular file)" ]
}
status_is() { [ "$(in_root dpkg-query -W -f='${db:Status-Abbrev}' knockgw 2>/dev/null)" = "$1" ]; }
gone() { for g in "$@"; do [ ! -e "$R$g" ] && [ ! -L "$R$g" ] || return 1; done; }
not() { ! "$@"; }
show_calls() { sed 's/^/# calls: /' "$R/run/stub/calls"; }
version_is() { [ "$(in_root dpkg-query -W -f='${Version}' knockgw 2>/dev/null)" = "$1" ]; }
not_installed() { [ -z "$(in_root dpkg-query -W -f='${db:Status-Status}' knockgw 2>/dev/null)" ]; }
enabled() { [ "$(readlink "$R$WANTS")" = /lib/systemd/system/$UNIT ]; }
no_entries() {
	[ "$(in_root knockgw -n -v)" = "$(printf 'configuration OK\nentries: protect 0, knock 0')" ]
}
# dsh_state_gone: deb-systemd-helper keeps no state about the unit.
dsh_state_gone() {
	not grep -rqs knockgw "$R/var/lib/systemd/deb-systemd-helper-enabled" \
		"$R/var/lib/systemd/deb-systemd-helper-masked"
}
# reload_then_restart: a daemon-reload came right before the one
# try-restart, and nothing else started the unit (the package's other units
# may ask for daemon-reloads of their own before).
reload_then_restart() {
	rr_seq=$(grep -E -x -e daemon-reload -e "(start|restart|try-restart) $UNIT" "$R/run/stub/calls" |
		tr '\n' ' ')
	case "$rr_seq" in *"daemon-reload try-restart $UNIT ") ;; *) return 1 ;; esac
	[ "$(grep -E -c -x "(start|restart|try-restart) $UNIT" "$R/run/stub/calls")" = 1 ]
}
only_keys_left() { [ "$(ls -A "$R/etc/knockgw")" = keys ]; }
stopped() { called "stop $UNIT" && not active; }

if in_root dpkg-query -W knockgw >/dev/null 2>&1; then
	dpkg_do purge0 --purge knockgw
	echo "# knockgw was installed on this machine: purged in the root first"
fi

# --- 1. first installation: shipped configuration, not started -------------
reset_calls
check "dpkg -i (first installation)" dpkg_do install1 -i /tmp/knockgw_1.deb
check "installed: ii" status_is "ii "
check "/etc/knockgw/knockgw.conf is root's, 0600" mode /etc/knockgw/knockgw.conf 600 root f
check "it is conf/knockgw.conf" cmp -s "$CONF" "$R/etc/knockgw/knockgw.conf"
check "/etc/knockgw/keys is root's, 0700" mode /etc/knockgw/keys 700 root d
check "no knockgw.conf.new" gone /etc/knockgw/knockgw.conf.new
check "knockgw.service enabled: $WANTS" enabled
check "the installed knockgw -n -v: configuration OK, no entries" no_entries
check "systemd reloaded" called daemon-reload
check "not started: the configuration protects nothing" not started
check "not running" not active
check "dpkg's output says why not" grep -q "enabled but not started" "$tmp/install1.log"
check "knockgw-metrics.timer installed, not enabled, not started" sh -c \
	'[ -e "$1/lib/systemd/system/knockgw-metrics.timer" ] && [ -z "$(find "$1/etc/systemd/system" -name "knockgw-metrics*" 2>/dev/null)" ] && ! grep -Eq "^(start|restart|try-restart) knockgw-metrics" "$1/run/stub/calls"' \
	sh "$R"
started && show_calls

# --- 2. upgrade while stopped: stays stopped --------------------------------
reset_calls
check "dpkg -i $v1+2 (upgrade)" dpkg_do upgrade2 -i /tmp/knockgw_2.deb
check "upgraded to $v1+2" version_is "$v1+2"
check "a stopped knockgw is not started by an upgrade" not started_stopped
check "not running" not active
check "still enabled" enabled

# --- 3. purge of a package nobody configured: nothing left ----------------
check "dpkg --purge" dpkg_do purge3 --purge knockgw
check "purged: not installed" not_installed
check "/etc/knockgw gone" gone /etc/knockgw
check "binaries, unit and man pages gone" gone /usr/sbin/knockgw /usr/bin/knock-connect \
	/lib/systemd/system/knockgw.service /usr/share/man/man8/knockgw.8.gz /usr/share/doc/knockgw
check "enabling symlink gone" gone "$WANTS"
check "deb-systemd-helper's state gone" dsh_state_gone
check "purge says nothing about kept keys" not grep -q "kept /etc/knockgw/keys" "$tmp/purge3.log"

# --- 4. first installation over a configuration with work: started ---------
mkdir -p "$R/etc/knockgw/keys"
chmod 0700 "$R/etc/knockgw/keys"
(umask 077 && head -c 32 /dev/urandom | base64 >"$R/etc/knockgw/keys/alice.key")
cat >"$R/etc/knockgw/knockgw.conf" <<'EOF'
keys = ( { name = "alice"; file = "keys/alice.key"; } );
protect = ( { port = 22; mode = "native"; keys = [ "alice" ]; } );
EOF
chmod 0600 "$R/etc/knockgw/knockgw.conf"
cp "$R/etc/knockgw/knockgw.conf" "$tmp/admin.conf"
cp "$R/etc/knockgw/keys/alice.key" "$tmp/alice.key"
reset_calls
check "dpkg -i --force-confold over the administrator's configuration" \
	dpkg_do install4 -i --force-confold /tmp/knockgw_1.deb
check "the administrator's configuration kept" cmp -s "$tmp/admin.conf" "$R/etc/knockgw/knockgw.conf"
check "the shipped one beside it as knockgw.conf.dpkg-dist" \
	cmp -s "$CONF" "$R/etc/knockgw/knockgw.conf.dpkg-dist"
check "started: the configuration protects port 22" called "start $UNIT"
check "running" active
check "enabled again" test -L "$R$WANTS"

# --- 5. upgrade while running, configuration edited, unchanged in the package
echo "# edited by the administrator" >>"$R/etc/knockgw/knockgw.conf"
cp "$R/etc/knockgw/knockgw.conf" "$tmp/edited.conf"
reset_calls
check "dpkg -i $v1+2 while running (no question asked)" dpkg_do upgrade5 -i /tmp/knockgw_2.deb
check "the edited configuration kept" cmp -s "$tmp/edited.conf" "$R/etc/knockgw/knockgw.conf"
check "systemd reloaded, then knockgw restarted (once, nothing else)" reload_then_restart
check "running" active
check "the key kept" cmp -s "$tmp/alice.key" "$R/etc/knockgw/keys/alice.key"

# --- 6. upgrade while running, configuration changed on both sides ---------
reset_calls
check "dpkg -i --force-confold $v1+3 (configuration changed in the package)" \
	dpkg_do upgrade6 -i --force-confold /tmp/knockgw_3.deb
check "the edited configuration kept" cmp -s "$tmp/edited.conf" "$R/etc/knockgw/knockgw.conf"
check "the package's new one beside it as knockgw.conf.dpkg-dist" \
	cmp -s "$tmp/v3.conf" "$R/etc/knockgw/knockgw.conf.dpkg-dist"
check "restarted" called "try-restart $UNIT"
check "running" active
check "keys/ still 0700" mode /etc/knockgw/keys 700 root d
check "the configuration still 0600" mode /etc/knockgw/knockgw.conf 600 root f

# --- 7. upgrade (reinstall) with a broken configuration: left running ------
echo "this is not libconfig" >>"$R/etc/knockgw/knockgw.conf"
reset_calls
check "dpkg -i $v1+3 again with a configuration knockgw -n refuses" \
	dpkg_do upgrade7 -i --force-confold /tmp/knockgw_3.deb
check "not restarted" not started
check "the running daemon left alone" active
check "dpkg's output says why" grep -q "not restarted" "$tmp/upgrade7.log"
cp "$tmp/edited.conf" "$R/etc/knockgw/knockgw.conf"

# --- 8. remove while running: stopped, its table removed, configuration kept
has_table() { nft list table inet knockgw >/dev/null 2>&1; }
nft add table inet knockgw
check "a table inet knockgw, as on_stop \"hide\" leaves it" has_table
reset_calls
check "dpkg --remove" dpkg_do remove8 --remove knockgw
check "removed: rc (configuration files left)" status_is "rc "
check "stopped" stopped
check "the table removed (knockgw flush)" not has_table
check "dpkg's output says so" grep -q "table inet knockgw removed" "$tmp/remove8.log"
check "binaries and unit gone" gone /usr/sbin/knockgw /usr/bin/knock-connect /lib/systemd/system/knockgw.service
check "the configuration kept" cmp -s "$tmp/edited.conf" "$R/etc/knockgw/knockgw.conf"
check "the key kept" cmp -s "$tmp/alice.key" "$R/etc/knockgw/keys/alice.key"

# --- 9. purge: configuration gone, the administrator's key kept ------------
check "dpkg --purge" dpkg_do purge9 --purge knockgw
check "purged: not installed" not_installed
check "the configuration gone" gone /etc/knockgw/knockgw.conf
check "knockgw.conf.dpkg-dist gone" gone /etc/knockgw/knockgw.conf.dpkg-dist
check "enabling symlink gone" gone "$WANTS"
check "the key kept" cmp -s "$tmp/alice.key" "$R/etc/knockgw/keys/alice.key"
check "in keys/, still 0700" mode /etc/knockgw/keys 700 root d
check "dpkg's output says the keys were kept" grep -q "kept /etc/knockgw/keys" "$tmp/purge9.log"
check "/etc/knockgw holds nothing else" only_keys_left

finish
