# 11 recover: the key file fixed, `systemctl start knockgw` takes over
# from the hiding table, and a knock gets in.
# shellcheck shell=sh
ct chmod 0600 /etc/knockgw/keys/alice.key
ct systemctl reset-failed knockgw
check "the key file fixed: systemctl start knockgw" ct systemctl start knockgw
check "a valid knock to 22 gets SYN-ACK" knock_gets SA
check "a plain SYN to 22 gets RST+ACK" plain_gets RA
