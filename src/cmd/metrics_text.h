/*
 * metrics_text.h - the daemon's counters in the Prometheus text exposition
 * format (version 0.0.4), for `knockgw metrics` and node_exporter's
 * textfile collector.
 *
 * From a struct stats (stats.h: what `knockgw status` reads back from the
 * daemon's STATUS reply) to text.  Every family has its HELP and TYPE
 * lines; names start with knockgw_, counters end in _total.  Labels:
 *   knockgw_port_knocks_total{port,mode,integrity,result="accepted|refused"}
 *   knockgw_key_knocks_total{key,result="accepted"}
 *   knockgw_reloads_total{result="ok|refused"}
 *   knockgw_packets_dropped_total{reason}   (malformed packets, pkt.h)
 *   knockgw_control_events_total{counter} (the control socket's, ctl.h)
 * and one unlabelled knockgw_server_NAME_total, knockgw_client_NAME_total
 * and knockgw_nfqueue_NAME_total per counter of those groups (stats.h), so
 * a counter added there shows up here with its description as HELP.
 * knockgw_up is 1 in metrics_write()'s output and 0 in metrics_write_down()'s.
 *
 * Label values are escaped as the format wants (backslash, double quote,
 * newline); a name that is not a valid metric name part is left out
 * rather than written broken (names come from the daemon's reply).
 *
 * Pure: no I/O but the FILE * given, no clock, no allocation.
 */
#ifndef KNOCKGW_METRICS_TEXT_H
#define KNOCKGW_METRICS_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "daemon/stats.h"

/* Every family of s, then "knockgw_up 1". */
void metrics_write(const struct stats *s, FILE *out);

/* What a textfile holds while no daemon answers: only knockgw_up 0. */
void metrics_write_down(FILE *out);

/* A label value as the format quotes it (without the quotes). */
void metrics_label_value(const char *value, FILE *out);

/* HELP text: backslash and newline escaped. */
void metrics_help_text(const char *text, FILE *out);

/* Does name fit [a-zA-Z_:][a-zA-Z0-9_:]* (and is it not empty)? */
bool metrics_name_ok(const char *name);

#endif
