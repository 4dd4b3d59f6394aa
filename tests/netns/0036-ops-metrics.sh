#!/bin/sh
# `knockgw metrics`: the running daemon's counters in the Prometheus text
# format.  Knocks with two keys and plain SYNs move the per-key, per-port
# and server counters by exactly what was sent; promtool accepts the text
# (and lints it clean); --output replaces its file atomically (mode 0644,
# a new inode each time, never seen half written, no temporary file left);
# a reload that drops a key and reorders the rest keeps each key's count
# under its own name, and one that puts a new protect entry first keeps
# each port's count under its own port; with no daemon, exit status 3, and --output leaves
# only knockgw_up 0.  No socket but the control socket is used: the
# daemon's open sockets are the same before and after.
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +-----------------------------+
#   | prober.py -> :22      |---- veth ---| sshd :22; knockgw protects  |
#   | knocks (alice, bob),  |             |   it (native, keys alice    |
#   | plain SYNs            |             |   and bob); knockgw metrics |
#   +-----------------------+             +-----------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
A=$(key_file alice)
B=$(key_file bob)
C=$(key_file carol)
ALICE="{ name = \"alice\"; file = \"$A\"; }"
BOB="{ name = \"bob\"; file = \"$B\"; }"
CAROL="{ name = \"carol\"; file = \"$C\"; }"
server_conf() { # KEYS PROTECT_KEYS (libconfig lists) -> $TMP/knockgw.conf
	cat >"$TMP/knockgw.conf" <<-EOC
	control_socket = "$TMP/server.sock";
	keys = ( $1 );
	protect = ( { port = 22; mode = "native"; keys = [ $2 ]; } );
	EOC
}
server_conf "$ALICE, $BOB, $CAROL" '"alice", "bob"'
start_knockgw "$NS_S" "$TMP/knockgw.conf"
LOG=$TMP/knockgw-$NS_S.log
M="$KNOCKGW metrics -c $TMP/status-$NS_S.conf"

metrics() { # OUT -> $TMP/OUT.prom, and the exit status
	$M >"$TMP/$1.prom"
}
# val OUT SAMPLE: the value of the sample line whose name and labels are SAMPLE.
val() { awk -v s="$2" '$1 == s { print $2 }' "$TMP/$1.prom"; }
KEY_A='knockgw_key_knocks_total{key="alice",result="accepted"}'
KEY_B='knockgw_key_knocks_total{key="bob",result="accepted"}'
KEY_C='knockgw_key_knocks_total{key="carol",result="accepted"}'
PORT_OK='knockgw_port_knocks_total{port="22",mode="native",integrity="false",result="accepted"}'
PORT_NO='knockgw_port_knocks_total{port="22",mode="native",integrity="false",result="refused"}'

sockets() { find "/proc/$KGW_PID/fd" -lname 'socket:*' | wc -l; }
SOCKETS=$(sockets)

check "metrics answers before any traffic" metrics before
check "knockgw_up 1" [ "$(val before knockgw_up)" = 1 ]
check "no knock yet, per key" [ "$(val before "$KEY_A") $(val before "$KEY_B")" = "0 0" ]
check "no knock yet, per port" [ "$(val before "$PORT_OK") $(val before "$PORT_NO")" = "0 0" ]

check "a knock with alice is let through" knock_gets SA "$A"
check "a second knock with alice is let through" knock_gets SA "$A"
check "a knock with bob is let through" knock_gets SA "$B"
check "a knock with carol (not on port 22) is refused" knock_gets RA "$C"
check "a plain SYN is refused" plain_gets RA
check "another plain SYN is refused" plain_gets RA

check "metrics after the traffic" metrics after
check "alice: 2 accepted" [ "$(val after "$KEY_A")" = 2 ]
check "bob: 1 accepted" [ "$(val after "$KEY_B")" = 1 ]
check "carol: none (a refused knock has no key)" [ "$(val after "$KEY_C")" = 0 ]
check "port 22: 3 accepted" [ "$(val after "$PORT_OK")" = 3 ]
check "port 22: 3 refused" [ "$(val after "$PORT_NO")" = 3 ]
check "server: syn_accepted 3, syn_refused 3" \
	[ "$(val after knockgw_server_syn_accepted_total) $(val after knockgw_server_syn_refused_total)" = "3 3" ]
check "nfqueue: at least the 6 SYNs received" [ "$(val after knockgw_nfqueue_received_total)" -ge 6 ]
check "the control socket counts the STATUS requests" \
	[ "$(val after 'knockgw_control_events_total{counter="ctl_status"}')" -ge 1 ]
check "metrics agrees with status --json, server counter by counter" \
	python3 - "$TMP/after.prom" <<EOPY
import json, subprocess, sys
j = json.loads(subprocess.check_output(["$KNOCKGW", "status", "--json", "-c",
                                        "$TMP/status-$NS_S.conf"]))
prom = dict(l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines() if not l.startswith("#"))
n = 0
for name, v in j["server"].items():
    got = prom.get("knockgw_server_%s_total" % name)
    if got is None or int(got) != v:
        sys.exit("%s: %r in metrics, %r in json" % (name, got, v))
    n += 1
assert n >= 20, n
EOPY

check "promtool is installed (Debian package prometheus)" sh -c 'command -v promtool >/dev/null'
if promtool check metrics <"$TMP/after.prom" >"$TMP/promtool.out" 2>&1; then rc=0; else rc=$?; fi
check "promtool check metrics: exit 0" [ $rc = 0 ]
check "promtool check metrics: no lint complaint" [ ! -s "$TMP/promtool.out" ]
sed 's/^/# promtool: /' "$TMP/promtool.out"
check "the text has HELP and TYPE for every family" python3 - "$TMP/after.prom" <<'EOPY'
import sys
help_, type_, fam = set(), {}, set()
for l in open(sys.argv[1]).read().splitlines():
    f = l.split(" ")
    if l.startswith("# HELP "):
        help_.add(f[2])
    elif l.startswith("# TYPE "):
        type_[f[2]] = f[3]
    else:
        fam.add(f[0].split("{")[0])
assert fam and fam == help_ == set(type_), (fam ^ help_, fam ^ set(type_))
assert all(n.startswith("knockgw_") for n in fam)
assert all(n.endswith("_total") for n, t in type_.items() if t == "counter")
EOPY

# --output: a reader polling the file sees whole texts only.
mkdir "$TMP/textfile"
OUT=$TMP/textfile/knockgw.prom
check "--output writes the file" $M --output "$OUT"
check "its mode is 0644" [ "$(stat -c %a "$OUT")" = 644 ]
check "it holds the metrics, knockgw_up 1 last" [ "$(tail -n 1 "$OUT")" = "knockgw_up 1" ]
# Held open, the first file's inode cannot be reused by a later one.
exec 3<"$OUT"
INODE=$(stat -c %i "$OUT")
python3 - "$OUT" "$TMP/reader.stop" >"$TMP/reader.out" 2>&1 <<'EOPY' &
import os, sys, time
deadline, reads, bad = time.monotonic() + 60, 0, 0
while time.monotonic() < deadline and reads < 20000:
    try:
        t = open(sys.argv[1]).read()
    except FileNotFoundError:
        bad += 1
        continue
    reads += 1
    if not t.startswith("# HELP knockgw_") or not t.endswith("\nknockgw_up 1\n"):
        bad += 1
    if os.path.exists(sys.argv[2]):
        break
print(reads, bad)
EOPY
READER=$!
PIDS="$PIDS $READER"
i=0
writes_ok=true
while [ $i -lt 50 ]; do
	$M --output "$OUT" || writes_ok=false
	i=$((i + 1))
done
touch "$TMP/reader.stop"
wait "$READER" || true
check "50 more writes, each exit 0" $writes_ok
check "the reader saw only whole files (reads, incomplete)" \
	awk '$1 > 0 && $2 == 0 { ok = 1 } END { exit !ok }' "$TMP/reader.out"
echo "# reader: $(cat "$TMP/reader.out")"
check "each write replaces the file (a new inode)" [ "$(stat -c %i "$OUT")" != "$INODE" ]
check "the replaced file, still open, stayed whole" sh -c "tail -n 1 <&3 | grep -qx 'knockgw_up 1'"
exec 3<&-
check "no temporary file is left beside it" [ "$(ls -A "$TMP/textfile")" = knockgw.prom ]
check "promtool accepts the written file" promtool check metrics <"$OUT"
# The shipped unit's sandbox, rebuilt without systemd (unitsandbox.py: its
# bounding set, no_new_privs, system call filter, address families, umask).
python3 "$TOP/tests/netns/lib/unitsandbox.py" "$TOP/systemd/knockgw-metrics.service" \
	"$BUILD/tools/unitexec" >"$TMP/sandbox.words" 2>"$TMP/sandbox.notes"
cat "$TMP/sandbox.notes"
SANDBOX=$(tr '\n' ' ' <"$TMP/sandbox.words")
rm -f "$OUT"
# LeakSanitizer (make check-asan) suspends threads with ptrace, which the
# sandbox's system call filter refuses: off for this run only.
# shellcheck disable=SC2086
check "under knockgw-metrics.service's sandbox: --output exit 0" \
	env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" $SANDBOX $M --output "$OUT"
check "under the sandbox: the file is whole, mode 0644" \
	sh -c "[ \"\$(tail -n 1 '$OUT')\" = 'knockgw_up 1' ] && [ \$(stat -c %a '$OUT') = 644 ]"
check "--output into a missing directory: exit 1" sh -c "$M --output $TMP/nodir/x.prom; [ \$? = 1 ]"

# Control connections are closed off the main thread (ctlcloser.h): wait for them.
same_sockets() { [ "$(sockets)" = "$SOCKETS" ]; }
check "no new socket in the daemon: the metrics came through the control socket" \
	wait_for 5 same_sockets
check "the daemon listens on no TCP or UDP port" \
	sh -c "! ip netns exec '$NS_S' ss -Htuln -p | grep -q knockgw"

# A reload drops alice, so bob moves up to alice's place: each count stays its key's.
server_conf "$BOB, $CAROL" '"carol", "bob"'
kill -HUP "$KGW_PID"
check "the reload is taken" wait_for 10 grep -q '^reloaded' "$LOG"
check "a knock with carol is let through now" knock_gets SA "$C"
check "metrics after the reload" metrics reload
check "bob keeps his 1 under his name" [ "$(val reload "$KEY_B")" = 1 ]
check "carol: her 1 knock, not bob's or alice's" [ "$(val reload "$KEY_C")" = 1 ]
check "alice, gone, is not shown" [ -z "$(val reload "$KEY_A")" ]
check "knockgw_reloads_total{result=\"ok\"} 1" \
	[ "$(val reload 'knockgw_reloads_total{result="ok"}')" = 1 ]
check "knockgw status shows no per-key line (its text is as it was)" \
	sh -c "'$KNOCKGW' status -c '$TMP/status-$NS_S.conf' >'$TMP/status.txt' && ! grep -q '^key ' '$TMP/status.txt'"

# A reload that puts a new entry (2222) before 22: port 22's counts stay
# under port="22", and 2222's start from zero (they were kept by the
# entry's place in the list, so 2222 showed 22's and 22 started over).
cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$TMP/server.sock";
keys = ( $BOB, $CAROL );
protect = ( { port = 2222; mode = "native"; keys = [ "carol" ]; },
            { port = 22; mode = "native"; keys = [ "carol", "bob" ]; } );
EOC
kill -HUP "$KGW_PID"
check "the second reload is taken" wait_for 10 sh -c "[ \$(grep -c '^reloaded' '$LOG') -ge 2 ]"
check "metrics after the second reload" metrics moved
PORT2_OK='knockgw_port_knocks_total{port="2222",mode="native",integrity="false",result="accepted"}'
PORT2_NO='knockgw_port_knocks_total{port="2222",mode="native",integrity="false",result="refused"}'
check "port 22 keeps its counts, moved to the second entry ($(val reload "$PORT_OK") and $(val reload "$PORT_NO"))" \
	[ "$(val moved "$PORT_OK") $(val moved "$PORT_NO")" = "$(val reload "$PORT_OK") $(val reload "$PORT_NO")" ]
check "port 2222, new, starts from zero" [ "$(val moved "$PORT2_OK") $(val moved "$PORT2_NO")" = "0 0" ]

check "--help: a synopsis on stdout, exit 0" sh -c "$M --help | grep -q '^usage: knockgw metrics'"
check "a bad option: exit 2, nothing on stdout" \
	sh -c "$M --bogus >$TMP/bad.out 2>/dev/null; [ \$? = 2 ] && [ ! -s $TMP/bad.out ]"
check "a stray argument: exit 2" sh -c "$M extra 2>/dev/null; [ \$? = 2 ]"

stop_knockgw

# A daemon from before METRICS (still running after an upgrade) refuses it
# as a bad request: metrics asks STATUS instead.  A stand-in answers so.
cat >"$TMP/old.conf" <<EOC
control_socket = "$TMP/old.sock";
EOC
python3 - "$TMP/old.sock" "$TMP/old.requests" <<'EOPY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(4)
s.settimeout(30)
with open(sys.argv[2], "w", buffering=1) as log:
    for _ in range(2):
        c, _ = s.accept()
        req = c.recv(100).decode()
        log.write(req)
        if req == "STATUS\n":
            c.sendall(b"port 22 mode native: accepted 5 refused 7\nserver syn_accepted 5\nEND\n")
        else:
            c.sendall(b"ERR bad-request\n")
        c.close()
EOPY
OLD=$!
PIDS="$PIDS $OLD"
wait_for 5 test -S "$TMP/old.sock"
check "an older daemon: metrics falls back to STATUS, exit 0" \
	sh -c "'$KNOCKGW' metrics -c '$TMP/old.conf' >'$TMP/old.prom'"
check "it asked METRICS, then STATUS" [ "$(tr '\n' ' ' <"$TMP/old.requests")" = "METRICS STATUS " ]
check "the older daemon's counters are there" \
	[ "$(val old knockgw_server_syn_accepted_total) $(val old knockgw_up)" = "5 1" ]
wait "$OLD" || true

if $M >"$TMP/down.prom" 2>"$TMP/down.err"; then rc=0; else rc=$?; fi
check "no daemon: exit 3" [ $rc = 3 ]
check "no daemon: nothing on stdout" [ ! -s "$TMP/down.prom" ]
check "no daemon: said on stderr" grep -q 'not running' "$TMP/down.err"
if $M --output "$OUT" 2>/dev/null; then rc=0; else rc=$?; fi
check "no daemon, --output: exit 3" [ $rc = 3 ]
check "no daemon, --output: the file says knockgw_up 0 and nothing stale" \
	[ "$(grep -v '^#' "$OUT")" = "knockgw_up 0" ]
check "promtool accepts it" promtool check metrics <"$OUT"
finish
