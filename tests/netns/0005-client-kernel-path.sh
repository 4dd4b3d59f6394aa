#!/bin/sh
# Client role over the kernel translation path (conntrack seqadj): see client_ssh.sh.
exec sh "$(dirname "$0")/lib/client_ssh.sh" kernel
