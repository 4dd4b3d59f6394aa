#!/bin/sh
# Client role over the user-space translation path: see client_ssh.sh.
exec sh "$(dirname "$0")/lib/client_ssh.sh" user
