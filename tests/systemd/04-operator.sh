# 04 operator: a user added and taken out with one command each, on the
# running service, and what its journal then holds.  `knockgw invite bob
# --apply` edits /etc/knockgw/knockgw.conf (the old file kept as
# knockgw.conf.bak, which 12-purge's purge removes) and reloads the same
# process; bob's knock gets in.  The container's own journald has that
# knock once, sent by knockgw.service through the native protocol, with
# its fields (journalctl -o json): KNOCKGW_EVENT, KNOCKGW_SOURCE,
# KNOCKGW_PORT, KNOCKGW_KEY, MESSAGE_ID, PRIORITY; and the reload's event.
# 100 SYNs with wrong knocks (the default guessing threshold) make the
# client a guessing source: its entry has the source's prefix and no port
# or key, journalctl selects it by the fail2ban filter's journalmatch, and
# fail2ban-regex's systemd backend, reading this journal, finds the
# client's address in it.  `knockgw revoke bob --apply --remove-key` gives
# the file back byte for byte and reloads: bob's knock is refused, and
# the container is as 03 left it.
# shellcheck shell=sh
CONF=/etc/knockgw/knockgw.conf
ct cat "$CONF" >"$TMP/op-before.conf"
pid=$(ct_prop knockgw MainPID)
ct knockgw invite bob --dst "$S4" --apply >"$TMP/op-invite.out" 2>"$TMP/op-invite.err"
rc=$?
check "knockgw invite bob --dst $S4 --apply (exit $rc)" [ $rc = 0 ]
sed 's/^/# /' "$TMP/op-invite.err"
check "... says the daemon reloaded" grep -q "reloaded (pid $pid): configuration generation" \
	"$TMP/op-invite.out"
op_same() { [ "$(ct_prop knockgw MainPID)" = "$pid" ] && ct_active knockgw; }
check "... the same process ($pid), active" op_same
check "... bob joins port 22's entry" ct_has "$CONF" 'keys = \[ "alice", "bob" \]'
op_bak() { ct cat "$CONF.bak" | cmp -s - "$TMP/op-before.conf"; }
check "... the old file is knockgw.conf.bak" op_bak
check "... mode 0600, root's, as it was" [ "$(ct stat -c %a:%U "$CONF")" = 600:root ]
ct cat /etc/knockgw/keys/bob.key >"$TMP/bob.key"
chmod 600 "$TMP/bob.key"
check "bob's knock to 22 gets SYN-ACK" knock_gets SA "$TMP/bob.key"

# op_json OUT MATCH...: this boot's journal entries matching MATCH (journalctl
# field matches), as JSON lines in OUT; true when there is one.
op_json() {
	oj_out=$1
	shift
	ct journalctl -b -o json --no-pager "$@" >"$oj_out" 2>/dev/null && [ -s "$oj_out" ]
}
# op_all OUT EXPR: every entry in OUT (at least one) has EXPR true, a Python
# expression on the entry r (n: how many there are); prints the last one's
# fields of interest, or every entry when EXPR does not hold.
op_all() {
	python3 - "$@" <<-'EOF'
	import json, re, sys
	entries = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
	good = bool(entries) and all(
	    eval(sys.argv[2], {"r": r, "re": re, "n": len(entries)}) for r in entries)
	shown = ("_PID", "_TRANSPORT", "_SYSTEMD_UNIT", "MESSAGE", "MESSAGE_ID", "PRIORITY")
	for r in entries[-1:] if good else entries:
	    print("# " + json.dumps({k: v for k, v in r.items()
	                             if k in shown or k.startswith("KNOCKGW_")}, sort_keys=True))
	sys.exit(0 if good else 1)
	EOF
}
J=$TMP/op-knock.json
check "the journal has bob's knock (KNOCKGW_KEY=bob)" \
	wait_for 10 op_json "$J" _SYSTEMD_UNIT=knockgw.service KNOCKGW_KEY=bob
check "... once, from the daemon ($pid), through the native protocol" op_all "$J" \
	"n == 1 and r['_PID'] == '$pid' and r['_TRANSPORT'] == 'journal' and r['SYSLOG_IDENTIFIER'] == 'knockgw'"
check "... knock_accepted, source $C4, port 22, key bob, its MESSAGE_ID, info" op_all "$J" \
	"r['KNOCKGW_EVENT'] == 'knock_accepted' and r['KNOCKGW_SOURCE'] == '$C4' and r['KNOCKGW_PORT'] == '22' and r['MESSAGE_ID'] == '05452ce00cb4492cbc214f7e34694e22' and r['PRIORITY'] == '6'"
check "... the plain message" op_all "$J" \
	"re.fullmatch(r'knock from 192\.0\.2\.1 port \d+ to port 22 accepted with key \"bob\"', r['MESSAGE'])"
# The stream (stdout/stderr) has no copy of it.
op_no_copy() {
	ct journalctl -b -u knockgw -o json --no-pager _TRANSPORT=stdout >"$TMP/op-stream.json"
	! grep -q 'accepted with key \\"bob\\"' "$TMP/op-stream.json"
}
check "... and the service's stderr stream has no copy of it" op_no_copy
J=$TMP/op-reload.json
op_json "$J" _PID="$pid" KNOCKGW_EVENT=reloaded
check "the reload's event: reloaded, its MESSAGE_ID, the plain message" op_all "$J" \
	"r['MESSAGE_ID'] == '052c55609ca4416abea51354da7dca87' and r['MESSAGE'].startswith('reloaded: 2 protected port(s)') and 'KNOCKGW_SOURCE' not in r"

: >"$TMP/op-guesses.txt"
for i in $(seq 1 100); do echo "$i 0badc0de" >>"$TMP/op-guesses.txt"; done
in_c python3 "$TOP/tests/netns/lib/synburst.py" --iface vc --src "$C4" --dst "$S4" --dport 22 \
	--list "$TMP/op-guesses.txt" --sport-base 47000 >"$TMP/op-guesses.json"
# fail2ban's systemd backend selects by the filter's journalmatch; this is it.
F2B_FILTER=$TOP/contrib/fail2ban/filter.d/knockgw.conf
MATCH=$(sed -n 's/^journalmatch = //p' "$F2B_FILTER")
check "the fail2ban filter has a journalmatch ($MATCH)" [ -n "$MATCH" ]
J=$TMP/op-guessing.json
# shellcheck disable=SC2086 # MATCH is field=value words
check "100 wrong knocks: the journal has a guessing source (the filter's journalmatch)" \
	wait_for 10 op_json "$J" $MATCH
check "... guessing, source $C4/32, no port or key, info, the plain message" op_all "$J" \
	"r['KNOCKGW_EVENT'] == 'guessing' and r['KNOCKGW_SOURCE'] == '$C4/32' and 'KNOCKGW_PORT' not in r and 'KNOCKGW_KEY' not in r and r['PRIORITY'] == '6' and r['_SYSTEMD_UNIT'] == 'knockgw.service' and r['MESSAGE'] == 'source $C4/32: 100 refused knocks within 60 s'"
# fail2ban-regex with the systemd backend on the container's journal files
# (read from here, through /proc: the container's /run and /var are its own).
op_f2b() {
	of_etc=$(fail2ban_etc) || { echo "# no fail2ban (make deps)"; return 1; }
	mkdir -p "$TMP/op-f2b/filter.d"
	cp "$of_etc/filter.d/common.conf" "$F2B_FILTER" "$TMP/op-f2b/filter.d/"
	of_dir=$(ct journalctl --header 2>/dev/null | sed -n 's|^File path: \(.*\)/[^/]*/[^/]*$|\1|p' | head -n 1)
	[ -n "$of_dir" ] || { echo "# the container's journal directory is not known"; return 1; }
	fail2ban-regex -v "systemd-journal[journalpath=/proc/$CT_LEADER/root$of_dir]" \
		"$TMP/op-f2b/filter.d/knockgw.conf" >"$TMP/op-f2b.out" 2>&1
	grep -A3 '^Lines:' "$TMP/op-f2b.out" | sed 's/^/# /'
	if grep -q '^Lines: .* [1-9][0-9]* matched' "$TMP/op-f2b.out" &&
		grep -q '^|  *192\.0\.2\.1  ' "$TMP/op-f2b.out" &&
		! grep -q 'accepted with key' "$TMP/op-f2b.out"; then
		return 0
	fi
	tail -n 20 "$TMP/op-f2b.out" | sed 's/^/# /'
	return 1
}
check "fail2ban-regex, systemd backend, on this journal: the client's address, no knock line" op_f2b

ct knockgw revoke bob --apply --remove-key >"$TMP/op-revoke.out" 2>"$TMP/op-revoke.err"
rc=$?
check "knockgw revoke bob --apply --remove-key (exit $rc)" [ $rc = 0 ]
sed 's/^/# /' "$TMP/op-revoke.err"
check "... reloaded" grep -q "reloaded (pid $pid)" "$TMP/op-revoke.out"
op_back() { ct cat "$CONF" | cmp -s - "$TMP/op-before.conf"; }
check "... the file as it was before the invite, byte for byte" op_back
check "... the key file is gone" ct test ! -e /etc/knockgw/keys/bob.key
check "bob's knock to 22 gets RST+ACK" knock_gets RA "$TMP/bob.key"
check "alice's still gets in" knock_gets SA
