#!/bin/sh
# A crash (kill -9), and after it `knockgw flush` with a configuration that
# does not load.
#
# kill -9 under a paced stream of unknocked SYNs (one every 0.5 ms), three
# times: the killed daemon's queue socket lives until the kernel has torn
# the process down (its memory first, a few milliseconds), and everything
# queued meanwhile used to be dropped with the queue (9 to 45 SYNs per kill
# went unanswered here).  The queue guard (qguard.h) now answers them as
# refusals: no SYN-ACK, and per kill at most one SYN unanswered (one that
# comes in the microseconds between the guard's last read and its close,
# or one the daemon had read when it died with no later SYN behind it).
# The guard itself: one per daemon, not its child, holding the daemon's
# queue sockets and a pipe and nothing else, no copy of the key (searched
# for in its memory, and found in the daemon's); gone after each kill,
# and the next start binds the queue again.
#
# The daemon (table inet kg2, its own control socket) is killed with -9 and
# leaves its table hiding sshd.  Then the administrator, who most needs
# flush at this moment, has a configuration that no longer loads:
#   - a key file readable by others (the file parses; the key is refused):
#     flush reads rules.table and control_socket and removes kg2, saying
#     nothing it had to assume;
#   - a syntax error after those settings: it reads them from the part
#     above the error and says so ("table inet kg2 (FILE:1, above the
#     parse error)");
#   - a syntax error before them: it cannot know, takes the defaults and
#     says why ("table inet knockgw (default: FILE:1: syntax error)"), and
#     kg2 stays;
#   - a file that does not exist: the defaults, said.
# And flush still refuses while a daemon answers on the socket the broken
# file names (the daemon loaded the file before it broke).
#
#   client ns $NS_C                     server ns $NS_S
#   +----------------------+            +-----------------------------+
#   | prober.py -> :22     |--- veth ---| sshd :22, knockgw protects  |
#   |                      |            | 22 (native key), table kg2  |
#   +----------------------+            +-----------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
K=$(key_file k)
CONF=$TMP/knockgw.conf
# good_conf: the configuration as it was when the daemon started.
good_conf() {
	cat >"$CONF" <<-EOC
	rules = { table = "kg2"; };
	control_socket = "$TMP/kg2.sock";
	keys = ( { name = "k"; file = "$K"; } );
	protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
	EOC
	chmod 600 "$CONF" "$K"
}
kg2() { in_s nft list table inet kg2 >/dev/null 2>&1; }
# refused_so_far: SYNs table kg2's nat rule has redirected (0 before any).
refused_so_far() {
	in_s nft list chain inet kg2 prerouting_nat 2>/dev/null |
		awk '/redirect/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) }
		     END { print n + 0 }'
}
no_kg2() { ! kg2; }

# crashed: the daemon started with the good configuration, then kill -9:
# its table stays and hides sshd.
crashed() {
	good_conf
	start_knockgw "$NS_S" "$CONF"
	kill -9 "$KGW_PID"
	wait_for 5 sh -c "! kill -0 $KGW_PID 2>/dev/null"
	kg2 && plain_gets RA
}

# flush_as NAME [CONF]: knockgw flush -c CONF ($CONF), its exit status in
# $rc, stdout in $TMP/NAME.out, stderr in $TMP/NAME.err.
flush_as() {
	in_s "$KNOCKGW" flush -c "${2:-$CONF}" >"$TMP/$1.out" 2>"$TMP/$1.err" && rc=0 || rc=$?
	sed 's/^/#   /' "$TMP/$1.out" "$TMP/$1.err"
}

# key_copies PID: how many copies of key k's bytes PID's readable memory
# holds (/proc/PID/mem, mappings up to 256 MiB: a sanitizer's shadow is
# left out).
key_copies() {
	python3 - "$1" "$K" <<-'EOP'
	import base64, sys
	pid, keyfile = sys.argv[1:]
	key = base64.b64decode(open(keyfile).read().strip())
	n = 0
	with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
	    for line in maps:
	        f = line.split()
	        lo, hi = (int(x, 16) for x in f[0].split("-"))
	        if f[1][0] != "r" or hi - lo > 1 << 28 or f[-1] in ("[vvar]", "[vsyscall]"):
	            continue
	        try:
	            mem.seek(lo)
	            n += mem.read(hi - lo).count(key)
	        except (OSError, ValueError, OverflowError):
	            pass
	print(n)
	EOP
}
# fds_of PID: what its descriptors are, one a line, sorted ("socket:[N]",
# "pipe:[N]", a path).
fds_of() {
	for fo_f in /proc/"$1"/fd/*; do readlink "$fo_f"; done | sort
}
# netlink_inodes PID: the inodes of the netlink sockets of PID's namespace.
netlink_inodes() { awk 'NR > 1 { print "socket:[" $NF "]" }' "/proc/$1/net/netlink"; }
# guard_holds_little: one guard for the daemon, not its child, holding the
# daemon's queue sockets and one pipe the daemon holds too, nothing else,
# and no copy of the key (the daemon has some: the search can find it).
guard_holds_little() {
	g=$(guard_pids)
	[ "$(echo "$g" | wc -w)" = 1 ] || { echo "# guards: $g"; return 1; }
	[ "$(awk '$1 == "PPid:" { print $2 }' "/proc/$g/status")" != "$KGW_PID" ] || return 1
	fds_of "$g" >"$TMP/guard.fds"
	fds_of "$KGW_PID" >"$TMP/daemon.fds"
	netlink_inodes "$g" | sort -u >"$TMP/netlink.inodes"
	echo "# guard $g: $(tr '\n' ' ' <"$TMP/guard.fds")"
	[ "$(grep -c '^pipe:' "$TMP/guard.fds")" = 1 ] || return 1
	[ "$(grep -c '^socket:' "$TMP/guard.fds")" -ge 1 ] || return 1
	[ "$(grep -vc '^pipe:\|^socket:' "$TMP/guard.fds")" = 0 ] || return 1
	# Every descriptor of the guard is one of the daemon's, every socket a netlink one.
	[ -z "$(comm -23 "$TMP/guard.fds" "$TMP/daemon.fds")" ] || return 1
	[ -z "$(grep '^socket:' "$TMP/guard.fds" | comm -23 - "$TMP/netlink.inodes")" ] || return 1
	in_daemon=$(key_copies "$KGW_PID")
	in_guard=$(key_copies "$g")
	echo "# copies of the key: daemon $in_daemon, guard $in_guard"
	for p in "$KGW_PID" "$g"; do
		echo "# $p: $(awk '/^(Rss|Private_Dirty):/ { printf "%s %s kB  ", $1, $2 }' \
			"/proc/$p/smaps_rollup")"
	done
	[ "$in_daemon" -ge 1 ] && [ "$in_guard" = 0 ]
}

# --- kill -9 under a paced SYN stream
good_conf
for round in 1 2 3; do
	check "start #$round (a killed daemon's queue is free again)" start_knockgw "$NS_S" "$CONF"
	[ $round = 1 ] && check "the queue guard: the daemon's queue sockets and a pipe, no key" \
		guard_holds_little
	FLOOD_MS=0.5 flood "kill$round" 4000
	# Killed once it has refused some of the stream (its nat rule's
	# counter; bounded: 5 s), well before the stream's 2 s are over.
	n=0
	while [ "$(refused_so_far)" -lt 200 ] && [ $n -lt 250 ]; do
		sleep 0.02
		n=$((n + 1))
	done
	kill -9 "$KGW_PID"
	flood_done
	silent=$(json "$TMP/kill$round.json" "len(j['silent'])")
	echo "# kill -9 #$round: $(json "$TMP/kill$round.json" "j['answers']"), unanswered $silent"
	check "kill -9 #$round under a SYN every 0.5 ms: no SYN-ACK" [ "$(answers "kill$round" SA)" = 0 ]
	check "... at most one SYN unanswered (the queue guard answered the rest)" [ "$silent" -le 1 ]
	wait_for 5 sh -c "! kill -0 $KGW_PID 2>/dev/null"
	check "... and the guard is gone" wait_for 5 no_guard
done

check "kill -9: table inet kg2 stays and sshd answers like a closed port" crashed
chmod 644 "$K"
check "... a key file readable by others: the file does not load" \
	sh -c "! '$KNOCKGW' -n -c '$CONF' >/dev/null 2>&1"
flush_as keyfile
check "knockgw flush removes table inet kg2 all the same" \
	sh -c "[ $rc = 0 ] && grep -q '^table inet kg2 removed' '$TMP/keyfile.out'"
check "... it is gone" no_kg2
check "... assuming nothing (it read both settings from the file)" test ! -s "$TMP/keyfile.err"
check "... and sshd answers again" plain_gets SA

check "kill -9 again" crashed
printf 'limits = { flows = ; };\n' >>"$CONF"
flush_as after
check "a syntax error after the settings: flush removes table inet kg2" \
	sh -c "[ $rc = 0 ] && grep -q '^table inet kg2 removed' '$TMP/after.out'"
check "... and says it read them from before the error" \
	grep -q "^  table inet kg2 ($CONF:1, above the parse error)" "$TMP/after.err"

check "kill -9 again" crashed
{ printf 'queue = { num = ;\n'; cat "$CONF"; } >"$CONF.new"
mv "$CONF.new" "$CONF"
chmod 600 "$CONF"
flush_as before
check "a syntax error before the settings: flush takes the default table, and says why" \
	sh -c "[ $rc = 0 ] && grep -q '^no table inet knockgw: nothing to remove' '$TMP/before.out' &&
		grep -q '^  table inet knockgw (default: $CONF:1: syntax error)' '$TMP/before.err'"
check "... so table inet kg2 stays" kg2
flush_as missing "$TMP/nonexistent.conf"
check "a file that does not exist: the defaults, and why" \
	sh -c "[ $rc = 0 ] && grep -q '^  control socket /run/knockgw/control.sock (default: $TMP/nonexistent.conf: ' '$TMP/missing.err'"
in_s nft delete table inet kg2

# The file breaks under a running daemon: flush still finds its socket.
good_conf
start_knockgw "$NS_S" "$CONF"
chmod 644 "$K"
flush_as running
check "a running daemon, its file broken since: flush refuses (it would put the table back)" \
	sh -c "[ $rc = 1 ] && grep -q 'a daemon answers on $TMP/kg2.sock' '$TMP/running.err'"
check "... and table inet kg2 is still there" kg2
chmod 600 "$K"
finish
