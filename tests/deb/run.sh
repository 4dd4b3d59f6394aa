#!/bin/sh
# The Debian package (debian/, make deb):
#   1. VERSION is one version line and debian/changelog agrees with it;
#   2. make deb builds knockgw_VERSION_ARCH.deb and its -dbgsym into
#      BUILD/deb and leaves the source tree as it was;
#   3. lintian reports no error and no warning (the deliberate ones are
#      overridden, with the reason, in debian/knockgw.lintian-overrides);
#   4. the package holds what `make install` installs, with the same modes
#      (plus its documentation and lintian overrides), keys/ 0700, no .new
#      file; its conffiles are exactly its files under /etc;
#   5. the maintainer scripts parse and carry debhelper's enabling and purge;
#   6. knockgw -n -v counts the entries, as the postinst expects;
#   7. as root: installed, upgraded, removed and purged by dpkg in a throwaway
#      root (tests/deb/throwaway.sh), and this machine's dpkg database,
#      /etc and /dev are the same afterwards.
# Prints "ok"/"not ok" lines and "run.sh: N passed, N failed"; exits 1 on a
# failure.
#   BUILD   build directory (default: build); the package goes to BUILD/deb
# Needs `make deps` (debhelper, lintian, ...).  Without root, part 7 is
# skipped.
# sh -c '...' sh ARGS and dpkg-query formats: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/knockgw-deb.XXXXXX") || exit 1
cleanup() {
	# Only once no mount is left under it (throwaway.sh's mounts live in
	# their own namespace and are gone with it); never across a mount.
	if grep -q " $tmp/" /proc/self/mountinfo; then
		echo "# mounts left under $tmp: not removed" >&2
	else
		rm -rf --one-file-system "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# ok, not_ok, check, finish
. tests/netns/lib/base.sh

show() { sed 's/^/# /' "$1"; }
not_grep() { ! grep -q "$@"; }

VERSION=$(cat VERSION)
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
DEB=$BUILD/deb/knockgw_${VERSION}_$ARCH.deb
DBG=$BUILD/deb/knockgw-dbgsym_${VERSION}_$ARCH.deb

# --- 1. version ---------------------------------------------------------
check "VERSION is one line, N.N.N" sh -c '[ "$(wc -l <VERSION)" = 1 ] && grep -Eqx "[0-9]+\.[0-9]+\.[0-9]+" VERSION'
check "debian/changelog's version is VERSION ($VERSION)" \
	sh -c '[ "$(dpkg-parsechangelog -S Version)" = "$1" ]' sh "$VERSION"

# --- 2. build -----------------------------------------------------------
tree_state() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git status --porcelain --ignored -- . ":!$BUILD"
	fi
}
tree_state >"$tmp/tree.before"
if make --no-print-directory BUILD="$BUILD" deb >"$tmp/deb.log" 2>&1; then
	ok "make deb"
else
	not_ok "make deb"
	tail -n 40 "$tmp/deb.log" | show /dev/stdin
	finish
	exit
fi
check "$DEB built" test -f "$DEB"
check "$DBG built" test -f "$DBG"
tree_state >"$tmp/tree.after"
check "the source tree is as it was (git status)" cmp -s "$tmp/tree.before" "$tmp/tree.after"

# --- 3. lintian ---------------------------------------------------------
changes=$BUILD/deb/knockgw_${VERSION}_$ARCH.changes
# Twice: --show-overrides (for the record) makes lintian count the
# overridden tags as failures too.
lintian --fail-on error,warning "$changes" >"$tmp/lintian.log" 2>&1
rc=$?
lintian --show-overrides "$changes" 2>&1 | show /dev/stdin
check "lintian --fail-on error,warning: exit 0 (exit $rc)" [ "$rc" = 0 ]
check "lintian: no E: or W: line" not_grep '^[EW]: ' "$tmp/lintian.log"

# --- 4. contents --------------------------------------------------------
# The package's files (not directories) as "MODE PATH", man pages without .gz.
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $1, $6 }' |
	sed 's/\.gz$//' | sort >"$tmp/pkg.files"
make --no-print-directory BUILD="$BUILD" install DESTDIR="$tmp/inst" >"$tmp/install.log" 2>&1 ||
	show "$tmp/install.log"
(cd "$tmp/inst" && find . ! -type d -printf '%M %P\n') | sed 's| | /|' | sort >"$tmp/inst.files"
# debhelper's own files sit in the doc directory itself (copyright,
# changelog.Debian, README.Debian); what make install puts in its
# examples/ must be in the package too.
grep -v -e ' /usr/share/doc/knockgw/[^/]*$' -e ' /usr/share/lintian/overrides/knockgw$' \
	"$tmp/pkg.files" >"$tmp/pkg.installed"
if cmp -s "$tmp/inst.files" "$tmp/pkg.installed"; then
	ok "files and modes: exactly what make install installs"
else
	not_ok "files and modes: exactly what make install installs"
	diff "$tmp/inst.files" "$tmp/pkg.installed" | show /dev/stdin
fi
for f in /usr/sbin/knockgw /usr/bin/knock-connect /lib/systemd/system/knockgw.service \
	/etc/knockgw/knockgw.conf /usr/share/man/man8/knockgw.8 /usr/share/doc/knockgw/copyright \
	/usr/share/doc/knockgw/README.Debian /usr/share/doc/knockgw/examples/fail2ban/filter.d/knockgw.conf \
	/usr/share/doc/knockgw/examples/fail2ban/jail.d/knockgw.conf; do
	check "holds $f" grep -q " $f\$" "$tmp/pkg.files"
done
check "/etc/knockgw/knockgw.conf -rw-------" grep -qx -- "-rw------- /etc/knockgw/knockgw.conf" "$tmp/pkg.files"
check "/etc/knockgw/keys/ drwx------" \
	sh -c 'dpkg-deb -c "$1" | grep -E "^drwx------ root/root .* \./etc/knockgw/keys/\$" >/dev/null' sh "$DEB"
check "no .new file" not_grep '\.new$' "$tmp/pkg.files"
check "everything is root's" sh -c '[ -z "$(dpkg-deb -c "$1" | grep -v " root/root ")" ]' sh "$DEB"
dpkg-deb -e "$DEB" "$tmp/control"
awk '$2 ~ "^/etc/" { print $2 }' "$tmp/pkg.files" >"$tmp/etc.files"
check "conffiles: exactly the files under /etc" \
	sh -c 'sort "$1/control/conffiles" | cmp -s - "$1/etc.files"' sh "$tmp"
check "conffiles: /etc/knockgw/knockgw.conf" grep -qx /etc/knockgw/knockgw.conf "$tmp/control/conffiles"
check "its conffile is conf/knockgw.conf" \
	sh -c 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - ./etc/knockgw/knockgw.conf | cmp -s - conf/knockgw.conf' \
	sh "$DEB"
check "Version: $VERSION" sh -c '[ "$(dpkg-deb -f "$1" Version)" = "$2" ]' sh "$DEB" "$VERSION"

# --- 5. maintainer scripts ----------------------------------------------
for s in postinst prerm postrm; do
	check "$s: sh -n" sh -n "$tmp/control/$s"
done
check "postinst enables knockgw.service (deb-systemd-helper)" \
	grep -q "deb-systemd-helper enable 'knockgw.service'" "$tmp/control/postinst"
for u in knockgw-metrics.service knockgw-metrics.timer; do
	check "holds /lib/systemd/system/$u" grep -q " /lib/systemd/system/$u\$" "$tmp/pkg.files"
	# Enabled again only where the administrator had it (was-enabled).
	check "postinst enables $u only if it was enabled" sh -c \
		'[ "$(grep -c "deb-systemd-helper enable .$2." "$1")" = "$(grep -c "was-enabled .$2." "$1")" ]' \
		sh "$tmp/control/postinst" "$u"
done
check "postrm: deb-systemd-helper purge at purge" \
	grep -q "deb-systemd-helper purge 'knockgw.service'" "$tmp/control/postrm"
check "no preinst (nothing is stopped before an upgrade)" test ! -e "$tmp/control/preinst"

# --- 6. knockgw -n -v ---------------------------------------------------
KNOCKGW=$BUILD/knockgw
cp conf/knockgw.conf "$tmp/shipped.conf"
printf 'keys = ( { name = "k"; secret = "s"; } );\nprotect = ( { port = 22; mode = "knock"; keys = [ "k" ]; } );\n' \
	>"$tmp/work.conf"
chmod 600 "$tmp/shipped.conf" "$tmp/work.conf"
check "knockgw -n -v, shipped configuration: entries: protect 0, knock 0" \
	sh -c '[ "$("$1" -n -v -c "$2")" = "$(printf "configuration OK\nentries: protect 0, knock 0")" ]' \
	sh "$KNOCKGW" "$tmp/shipped.conf"
check "knockgw -n -v, one protect entry: entries: protect 1, knock 0" \
	sh -c '[ "$("$1" -n -v -c "$2" | sed -n 2p)" = "entries: protect 1, knock 0" ]' sh "$KNOCKGW" "$tmp/work.conf"
check "knockgw -n without -v: configuration OK alone" \
	sh -c '[ "$("$1" -n -c "$2")" = "configuration OK" ]' sh "$KNOCKGW" "$tmp/work.conf"

# --- 7. install, upgrade, remove, purge in a throwaway root -------------
if [ "$(id -u)" != 0 ]; then
	echo "# not root: the package is not installed in a throwaway root (SKIP)"
	finish
	exit
fi
# What must be the same afterwards on this machine.
host_state() {
	md5sum /var/lib/dpkg/status /usr/bin/systemctl 2>&1
	ls -ld /etc/knockgw /usr/sbin/policy-rc.d "/etc/systemd/system/multi-user.target.wants/knockgw.service" 2>&1
	stat -c '%n %F %t:%T' /dev/null /dev/zero /dev/urandom
}
host_state >"$tmp/host.before"
mkdir "$tmp/root"
unshare --mount --net --pid --fork --propagation private \
	env HOST_MNTNS="$(readlink /proc/self/ns/mnt)" \
	sh tests/deb/throwaway.sh "$DEB" conf/knockgw.conf "$tmp/root" >"$tmp/throwaway.log" 2>&1
rc=$?
sed 's/^/  /' "$tmp/throwaway.log"
check "throwaway root: every row passed (exit $rc)" [ "$rc" = 0 ]
host_state >"$tmp/host.after"
if cmp -s "$tmp/host.before" "$tmp/host.after"; then
	ok "this machine's dpkg database, systemctl, /etc and /dev unchanged"
else
	not_ok "this machine's dpkg database, systemctl, /etc and /dev unchanged"
	diff "$tmp/host.before" "$tmp/host.after" | show /dev/stdin
fi

finish
