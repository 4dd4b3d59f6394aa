# 06 watchdog: the daemon stopped with SIGSTOP (a hung daemon) while
# unknocked SYNs come, one every 2 ms: systemd's watchdog kills it and
# Restart=on-failure starts a new one.  No SYN gets a SYN-ACK at any
# moment; every SYN gets the closed-port RST+ACK but for one run of
# unanswered ones: those queued to the stopped daemon, which nobody
# answers until the kernel drops them with its queue (once the daemon is
# killed its queue guard answers them: none go unanswered unless the queue
# filled up).  The killed daemon's guard goes with it.  To keep this short,
# a drop-in sets WatchdogSec=4s instead of the shipped 30 s; it is removed
# afterwards.
# shellcheck shell=sh
ct mkdir -p /etc/systemd/system/knockgw.service.d
printf '[Service]\nWatchdogSec=4s\n' | ct sh -c 'cat >/etc/systemd/system/knockgw.service.d/watchdog.conf'
ct systemctl daemon-reload
check "WatchdogSec=4s (drop-in), restarted" ct systemctl restart knockgw
check "WatchdogUSec is 4s" [ "$(ct_prop knockgw WatchdogUSec)" = 4s ]
pid=$(ct_prop knockgw MainPID)
restarts=$(ct_prop knockgw NRestarts)
in_c python3 "$TOP/tests/netns/lib/synflood.py" --iface vc --src "$C4" --dst "$S4" --dport 22 \
	--count 6000 --sport-base 45000 --ready "$TMP/watchdog.ready" \
	>"$TMP/watchdog.json" 2>"$TMP/watchdog.err" &
# flood_done waits for it.
# shellcheck disable=SC2034
FLOOD_PID=$!
wait_for 10 test -e "$TMP/watchdog.ready"
ct kill -STOP "$pid"
restarted() {
	[ "$(ct_prop knockgw NRestarts)" -gt "$restarts" ] && ct_active knockgw &&
		[ "$(ct_prop knockgw MainPID)" != "$pid" ]
}
check "SIGSTOP: systemd restarts the daemon (within 30 s)" wait_for 30 restarted
flood_done
by_watchdog() { ct_journal knockgw | grep -qi 'watchdog timeout'; }
check "the watchdog did it (journal: watchdog timeout)" by_watchdog
check "one queue guard: the killed daemon's answered its queue and went" ct_one_guard
# hidden's line, without its list of every unanswered SYN (thousands here).
hidden_short() {
	hidden "$@" >"$TMP/hidden.out"
	hs_rc=$?
	sed 's/, unanswered \[\([0-9]*\), .*, \([0-9]*\)\]$/, unanswered \1..\2/' "$TMP/hidden.out"
	return $hs_rc
}
check "throughout: no SYN-ACK; RST+ACK but for one run (queued to the stopped daemon)" \
	hidden_short watchdog 1
check "... and then a knock gets in" knock_gets SA
ct rm -rf /etc/systemd/system/knockgw.service.d
ct systemctl daemon-reload
shipped_watchdog() { ct systemctl restart knockgw && [ "$(ct_prop knockgw WatchdogUSec)" = 30s ]; }
check "drop-in removed, restarted: the shipped WatchdogSec=30s" shipped_watchdog
