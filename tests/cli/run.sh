#!/bin/sh
# The command-line conventions of knockgw and knock-connect, table-driven:
# each row is a command line, the exit status it must have, and the one
# stream that must carry its text (the other stays empty):
#   out  --help, --version: stdout, exit 0
#   err  usage errors: stderr, exit 2
# Then: --version is "NAME VERSION" from the VERSION file, every command
# in knockgw --help has its synopsis in the man page, and the bash
# completions (completion.sh).  Needs no root; runs nothing that touches
# the network or the system (no row gets as far as reading a config).
# Prints "ok"/"not ok" lines and "run.sh: N passed, N failed".
#   BUILD   build directory (default: build)
# sh -c '...' sh ARGS: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
KGW=$BUILD/knockgw
KC=$BUILD/knock-connect

# ok, not_ok, check, finish
. tests/netns/lib/base.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# row STATUS STREAM COMMAND...: COMMAND exits STATUS, STREAM (out or err)
# has text and the other stream none.
row() {
	want=$1 stream=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$stream" = out ]; then full=$tmp/out empty=$tmp/err; else full=$tmp/err empty=$tmp/out; fi
	if [ "$rc" = "$want" ] && [ -s "$full" ] && [ ! -s "$empty" ]; then
		ok "$* -> $want, std$stream"
	else
		not_ok "$* -> $rc (want $want), stdout $(wc -c <"$tmp/out") bytes, stderr $(wc -c <"$tmp/err") bytes (want text on std$stream only)"
		sed 's/^/#   /' "$tmp/out" "$tmp/err" | head -n 6
	fi
}

for h in --help -h; do
	row 0 out "$KGW" $h
	for cmd in genkey print-rules status flush hide invite metrics check-firewall; do
		row 0 out "$KGW" $cmd $h
	done
	row 0 out "$KC" $h
	row 0 out "$KC" isn --help
done
row 0 out "$KGW" --version
row 0 out "$KC" --version
row 0 out "$KGW" invite alice --dst 192.0.2.2 --help	# --help wins: no key is made

# Usage errors: unknown options, missing arguments, stray operands.
for cmd in "" genkey print-rules status flush hide invite metrics check-firewall; do
	# shellcheck disable=SC2086 # "" is no command at all
	row 2 err "$KGW" $cmd --bogus
	# shellcheck disable=SC2086
	row 2 err "$KGW" $cmd -x
done
row 2 err "$KGW" -c
row 2 err "$KGW" nosuchcommand
row 2 err "$KGW" -n extra
row 2 err "$KGW" genkey extra
row 2 err "$KGW" genkey -c /dev/null
for cmd in print-rules status flush metrics check-firewall; do
	row 2 err "$KGW" $cmd -c
	row 2 err "$KGW" $cmd extra
done
row 2 err "$KGW" status --json=yes
row 2 err "$KGW" metrics -o
row 2 err "$KGW" hide -s
row 2 err "$KGW" hide extra
row 2 err "$KGW" metrics --output ""
row 2 err "$KGW" invite
row 2 err "$KGW" invite alice
row 2 err "$KGW" invite --dst 192.0.2.2
row 2 err "$KGW" invite alice --dst
row 2 err "$KGW" invite alice --dst host.example
row 2 err "$KGW" invite ../alice --dst 192.0.2.2
row 2 err "$KGW" invite alice --dst 192.0.2.2 --port 0
row 2 err "$KGW" invite alice --dst 192.0.2.2 --mode sodium
row 2 err "$KGW" invite alice --dst 192.0.2.2 --integrity-len 2049
row 2 err "$KGW" invite alice --dst 192.0.2.2 --keys-dir "/a b"
row 2 err "$KGW" invite alice bob --dst 192.0.2.2
row 2 err "$KGW" revoke
row 2 err "$KGW" revoke alice bob
row 2 err "$KGW" revoke ../alice
row 2 err "$KC"
row 2 err "$KC" host.example
row 2 err "$KC" host.example 22 extra
row 2 err "$KC" --bogus host.example 22
row 2 err "$KC" -x host.example 22
row 2 err "$KC" -w 0 host.example 22
row 2 err "$KC" -s relative.sock host.example 22
row 2 err "$KC" isn
row 2 err "$KC" isn --bogus

version=$(cat VERSION)
check "knockgw --version says knockgw $version" [ "$("$KGW" --version)" = "knockgw $version" ]
check "knock-connect --version says knock-connect $version" \
	[ "$("$KC" --version)" = "knock-connect $version" ]

# Every command --help lists has its synopsis line in knockgw(8).
"$KGW" --help | sed -n 's/^\(usage:\)\{0,1\} *knockgw \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\2/p' \
	>"$tmp/cmds"
check "knockgw --help lists the commands" grep -qx invite "$tmp/cmds"
sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' man/knockgw.8 >"$tmp/synopsis"
while read -r c; do
	check "knockgw(8) SYNOPSIS has $c" grep -qx "\.B $(echo "$c" | sed 's/-/\\\\-/g')" "$tmp/synopsis"
done <"$tmp/cmds"
for o in help version; do
	check "knockgw(8) SYNOPSIS has --$o" grep -q "^\.B \\\\-\\\\-$o" "$tmp/synopsis"
	check "knock-connect(1) SYNOPSIS has --$o" \
		sh -c 'sed -n "/^\.SH SYNOPSIS/,/^\.SH /p" man/knock-connect.1 | grep -q "^\.B \\\\-\\\\-$1"' \
		sh $o
done

check "bash completions" sh -c 'bash tests/cli/completion.sh >"$1" 2>&1' sh "$tmp/completion"
grep -v '^ok' "$tmp/completion"
finish
