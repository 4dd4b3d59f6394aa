#!/bin/sh
# Server role: valid knocks (both modes, IPv4 and IPv6, with and without a
# timestamp) reach an unmodified sshd; a wrong ISN, TSval or key, and a
# replay from another source, get exactly the RST a closed port gives.
. "$(dirname "$0")/lib/lib.sh"

make_topology
in_c ip addr add 192.0.2.3/24 dev vc
in_c ip addr add 2001:db8::3/64 dev vc nodad
quiet_client_rsts
start_sshd
# A second listener for the knock-mode port.
start_sshd2

K1=$(key_file k1)
K2=$(key_file k2)
KWRONG=$(key_file wrong)
cat >"$TMP/knockgw.conf" <<EOC
keys = (
	{ name = "alice"; file = "$K1"; },
	{ name = "bob"; file = "$K2"; },
	{ name = "legacy"; secret = "$SECRET"; }
);
protect = (
	{ port = 22; mode = "native"; keys = [ "alice", "bob" ]; },
	{ port = 2222; mode = "knock"; keys = [ "legacy" ]; }
);
EOC
chmod 600 "$TMP/knockgw.conf"	# it holds a secret: owner only
start_knockgw "$NS_S" "$TMP/knockgw.conf"

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4 other=192.0.2.3; else src=$C6 dst=$S6 other=2001:db8::3; fi
	for ts in 1234567 none; do
		if [ $ts = none ]; then tsarg="--no-ts" tsv=0; else tsarg="--tsval $ts" tsv=$ts; fi
		tag="IPv$fam ts=$ts"

		probe ok1 $src $dst 22 "$(isn native "$K1" $dst 22 $tsv)" $tsarg
		check "$tag: native knock with key alice gets SYN-ACK" [ "$(flags_of ok1)" = SA ]
		probe ok2 $src $dst 22 "$(isn native "$K2" $dst 22 $tsv)" $tsarg
		check "$tag: native knock with second key bob gets SYN-ACK" [ "$(flags_of ok2)" = SA ]
		probe ok3 $src $dst 2222 "$(isn knock "$SECRET" $dst 2222 $tsv)" $tsarg
		check "$tag: knock-mode knock gets SYN-ACK" [ "$(flags_of ok3)" = SA ]

		probe closed $src $dst 23 11111111 $tsarg
		check "$tag: closed port answers RST+ACK" [ "$(flags_of closed)" = RA ]
		check "$tag: wrong ISN gets the closed-port RST, field for field" \
			like_closed bad $src $dst 22 11111111 $tsarg
		check "$tag: wrong ISN on the knock-mode port likewise" \
			like_closed badk $src $dst 2222 11111111 $tsarg
		check "$tag: knock with an unknown key gets the closed-port RST" \
			like_closed wkey $src $dst 22 "$(isn native "$KWRONG" $dst 22 $tsv)" $tsarg
		if [ $ts != none ]; then
			check "$tag: right ISN with another TSval gets the closed-port RST" \
				like_closed wts $src $dst 22 "$(isn native "$K1" $dst 22 $tsv)" \
				--tsval $((tsv + 1))
		fi
		# TOS / traffic class is reflected without its ECN bits.
		check "$tag: TOS 0x2a probe: same RST as the closed port" \
			like_closed badtos $src $dst 22 11111111 $tsarg --tos 0x2a
	done

	# Replay: a knock seen from $src, replayed from another address.
	v=$(isn native "$K1" $dst 22 777)
	probe r1 $src $dst 22 "$v" --tsval 777
	check "IPv$fam: first use of a knock gets SYN-ACK" [ "$(flags_of r1)" = SA ]
	check "IPv$fam: the same knock from another address gets the closed-port RST" \
		like_closed r2 $other $dst 22 "$v" --tsval 777
	probe r3 $src $dst 22 "$v" --tsval 777
	check "IPv$fam: the same knock again from the first address is accepted" [ "$(flags_of r3)" = SA ]
done

# A closed port says nothing to a segment with a bad checksum; nor do we.
probe badsum $C4 $S4 22 11111111 --bad-csum
check "a SYN with a bad TCP checksum gets no answer" [ "$(flags_of badsum)" = None ]

# An unmodified ssh client without a knock: "Connection refused".
in_c ssh $SSH_OPTS -o ConnectTimeout=5 root@$S4 true >"$TMP/ssh.out" 2>&1 || true
check "plain ssh gets Connection refused" grep -q "Connection refused" "$TMP/ssh.out"

check "the log names the key that matched" grep -q 'accepted with key "bob"' "$TMP/knockgw-$NS_S.log"
check "no secret in the log" sh -c "! grep -q -e 'Magic secret' -e \"\$(cat $K1)\" '$TMP/knockgw-$NS_S.log'"
check "replays counted" [ "$(counter replay_refused)" = 2 ]
check "refused SYNs counted" [ "$(counter syn_refused)" -ge 10 ]
check "table inet knockgw is installed" has_table

stop_knockgw
# on_stop "hide", the default: the table stays and the port answers as closed.
check "SIGTERM: the table stays (on_stop hide)" has_table
for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	check "... IPv$fam: a plain SYN gets the closed-port RST, field for field" \
		like_closed gone$fam $src $dst 22 11111111 --tsval 777
	check "... IPv$fam: so does a valid knock (nothing verifies it)" \
		like_closed goneknock$fam $src $dst 22 "$(isn native "$K1" $dst 22 778)" --tsval 778
done
in_s "$KNOCKGW" flush -c "$TMP/knockgw.conf" >"$TMP/flush.out" 2>&1 && rc=0 || rc=$?
check "knockgw flush: exit 0" [ "$rc" = 0 ]
check "... says it removed the table" grep -q '^table inet knockgw removed' "$TMP/flush.out"
check "... which is gone" no_table
in_s "$KNOCKGW" flush -c "$TMP/knockgw.conf" >"$TMP/flush2.out" 2>&1 && rc=0 || rc=$?
check "knockgw flush again: exit 0, nothing to remove" \
	sh -c "[ $rc = 0 ] && grep -q '^no table inet knockgw: nothing to remove' '$TMP/flush2.out'"
finish
