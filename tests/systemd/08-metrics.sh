# 08 metrics: knockgw-metrics.timer runs knockgw-metrics.service, which
# writes the textfile for node_exporter.  With the daemon stopped, the file
# says knockgw_up 0 and the service is not failed (its exit 3 means "no
# daemon", which the file carries); with the daemon running, knockgw_up 1.
# shellcheck shell=sh
PROM=/var/lib/prometheus/node-exporter/knockgw.prom
check "systemctl start knockgw-metrics.timer (knockgw stopped)" \
	ct systemctl start knockgw-metrics.timer
ran() { [ "$(ct_prop knockgw-metrics.service ExecMainExitTimestampMonotonic)" != 0 ]; }
check "the timer ran knockgw-metrics.service" wait_for 20 ran
check "the file says knockgw_up 0" ct_has "$PROM" '^knockgw_up 0$'
# metrics_result STATUS: the service's last run exited STATUS, Result=success.
metrics_result() {
	[ "$(ct_prop knockgw-metrics ExecMainStatus)" = "$1" ] &&
		[ "$(ct_prop knockgw-metrics Result)" = success ] && ! ct systemctl -q is-failed knockgw-metrics
}
check "knockgw-metrics.service exited 3, and is not failed (Result=success)" metrics_result 3
check "systemctl start knockgw" ct systemctl start knockgw
check "systemctl start knockgw-metrics.service (knockgw running)" \
	ct systemctl start knockgw-metrics.service
check "the file says knockgw_up 1" ct_has "$PROM" '^knockgw_up 1$'
check "... with the counters (port 22's knocks)" ct_has "$PROM" '^knockgw_port_knocks_total{port="22"'
check "knockgw-metrics.service: exit 0, Result=success" metrics_result 0
ct systemctl stop knockgw-metrics.timer
