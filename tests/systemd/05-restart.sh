# 05 restart under a SYN flood: unknocked SYNs to 22, one every 2 ms, while
# `systemctl restart knockgw` stops the daemon and starts a new one: none
# gets a SYN-ACK, every one the closed-port RST+ACK.  The old daemon's
# queue guard goes with it (systemd waits for the unit's control group).
# shellcheck shell=sh
pid=$(ct_prop knockgw MainPID)
flood restart 1500
check "systemctl restart knockgw, during the flood" ct systemctl restart knockgw
flood_done
check "restart: no SYN-ACK, every SYN RST+ACK" hidden restart
other_process() { [ "$(ct_prop knockgw MainPID)" != "$1" ] && ct_active knockgw; }
check "a new process, active" other_process "$pid"
check "one queue guard: the old one went with its daemon" ct_one_guard
check "... and then a knock gets in" knock_gets SA
