#!/bin/sh
# sd_notify as systemd gets it, message by message, from a NOTIFY_SOCKET of
# the test's own (no systemd needed): the first message is READY=1 with
# STATUS= in it (a service that just became ready shows its counters at
# once); a reload that is taken and one that is refused each end in a
# message holding READY=1 and STATUS=; STATUS= follows the counters; with
# WATCHDOG_USEC set, WATCHDOG=1 pings come; with WATCHDOG_PID naming
# another process, none do (the watchdog is not the daemon's then).
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
# shellcheck disable=SC2034 # lib.sh's key_conf and knock_gets use $K
K=$(key_file k)
key_conf "$TMP/knockgw.conf" "$(entry 22)"
LOG=$TMP/knockgw-$NS_S.log

python3 "$TOP/tests/netns/lib/notify_listen.py" "$TMP/notify.sock" "$TMP/notify.log" 120 \
	"$TMP/notify.dgram" &
PIDS="$PIDS $!"
wait_for 5 test -S "$TMP/notify.sock"
NOTIFY_SOCKET=$TMP/notify.sock WATCHDOG_USEC=1000000 start_knockgw "$NS_S" "$TMP/knockgw.conf"

# msg N: the Nth message (1-based) with its newlines as "|"; count_with A B:
# how many messages hold both A and B as lines.
msg() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2]) - 1]).replace("\n", "|"))' "$TMP/notify.dgram" "$1"; }
count_with() {
	python3 - "$TMP/notify.dgram" "$1" "$2" <<-'EOPY'
	import json, sys
	n = 0
	for l in open(sys.argv[1]).read().splitlines():
	    lines = json.loads(l).split("\n")
	    if any(x.startswith(sys.argv[2]) for x in lines) and any(x.startswith(sys.argv[3]) for x in lines):
	        n += 1
	print(n)
	EOPY
}

check "a first message came" wait_for 5 test -s "$TMP/notify.dgram"
first_is_ready_status() {
	m=$(msg 1)
	case "$m" in "READY=1|STATUS=knocks accepted 0, refused 0,"*) return 0 ;; esac
	echo "# first message: $m"
	return 1
}
check "the first message is READY=1 and STATUS= together" first_is_ready_status
check "WATCHDOG=1 pings (WATCHDOG_USEC set, no WATCHDOG_PID)" \
	wait_for 5 grep -qx 'WATCHDOG=1' "$TMP/notify.log"

check "a knock is let through" knock_gets SA
check "STATUS= follows the counters" wait_for 5 grep -q '^STATUS=knocks accepted 1,' "$TMP/notify.log"

before=$(count_with READY=1 STATUS=)
kill -HUP "$KGW_PID"
check "a reload is taken" wait_for 10 grep -q '^reloaded' "$LOG"
reload_ready() { [ "$(count_with READY=1 STATUS=)" -gt "$1" ]; }
check "the taken reload ends in READY=1 with STATUS= in the same message" wait_for 5 reload_ready "$before"

before=$(count_with READY=1 STATUS=)
printf 'protect = ( { port = 22; mode = "native"; keys = [ "nosuchkey" ]; } );\n' >>"$TMP/knockgw.conf"
check "a broken reload is refused" sighup_refused
check "the refused reload ends in READY=1 with STATUS= in the same message" \
	wait_for 5 reload_ready "$before"
stop_knockgw

# WATCHDOG_PID naming another process: the watchdog is not ours, no pings.
key_conf "$TMP/knockgw2.conf" "$(entry 22)"
python3 "$TOP/tests/netns/lib/notify_listen.py" "$TMP/notify2.sock" "$TMP/notify2.log" 60 &
PIDS="$PIDS $!"
wait_for 5 test -S "$TMP/notify2.sock"
NOTIFY_SOCKET=$TMP/notify2.sock WATCHDOG_USEC=1000000 WATCHDOG_PID=$$ \
	start_knockgw "$NS_S" "$TMP/knockgw2.conf"
check "WATCHDOG_PID another's: READY=1 comes" wait_for 5 grep -qx 'READY=1' "$TMP/notify2.log"
# Ten of the 0.5 s ping intervals pass; the STATUS= refresh shows the loop ran.
check "the status refresh ran meanwhile" wait_for 10 sh -c \
	"[ \$(grep -c '^STATUS=' '$TMP/notify2.log') -ge 3 ]"
check "WATCHDOG_PID another's: no WATCHDOG=1" sh -c "! grep -qx 'WATCHDOG=1' '$TMP/notify2.log'"
stop_knockgw
finish
