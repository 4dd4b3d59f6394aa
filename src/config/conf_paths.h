/*
 * conf_paths.h - where knockgw and knock-connect look without being told:
 * the configuration file without -c, and the control socket when the file
 * sets no control_socket (the schema row's default, conf_schema.c).  Both
 * programs take them from here, so each path is written once.
 */
#ifndef KNOCKGW_CONF_PATHS_H
#define KNOCKGW_CONF_PATHS_H

#define CONF_DEFAULT_PATH "/etc/knockgw/knockgw.conf"
#define CONF_DEFAULT_SOCKET "/run/knockgw/control.sock"

#endif
