#!/bin/bash
# The bash completions (completions/knockgw, completions/knock-connect):
# sourced into bash, called as bash would call them for a command line, and
# their COMPREPLY compared with what it should offer.  Run twice: on their
# own (fallback code) and after the bash-completion package's
# bash_completion (_init_completion, _filedir), when that is installed.
# Prints "ok"/"not ok" lines and "completion.sh: N passed, N failed".
# Needs no root.
set -u
cd "$(dirname "$0")/../.." || exit 1

# ok, not_ok, check, finish
. tests/netns/lib/base.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/confdir"
: >"$tmp/conf.one"

# got WORD...: the completions (sorted, one line) for the command line whose
# last WORD is being completed ("" for a new word).
got() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	case $1 in
	knockgw) _knockgw knockgw "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" ;;
	knock-connect) _knock_connect knock-connect "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}" ;;
	esac
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}

# row "WANT" WORD...: the completions are exactly the words of WANT (any order).
row() {
	# shellcheck disable=SC2086 # split WANT into its words
	want=$(printf '%s\n' $1 | sort | tr '\n' ' ' | sed 's/ $//')
	shift
	have=$(got "$@")
	if [ "$have" = "$want" ]; then
		ok "$MODE: $* -> $want"
	else
		not_ok "$MODE: $* -> '$have', want '$want'"
	fi
}

rows() {
	row "check-firewall flush genkey hide invite metrics print-rules revoke status" knockgw ""
	row "check-firewall" knockgw che
	row "print-rules" knockgw pr
	row "--help --version" knockgw --
	row "-c -f -h -n -v --help --version" knockgw -
	row "native knock" knockgw invite alice --mode ""
	row "native" knockgw invite alice --mode n
	row "--dst --port --mode --integrity-len --keys-dir --show-key -c --apply -h --help" knockgw invite alice -
	row "-c --apply --remove-key -h --help" knockgw revoke alice -
	row "revoke" knockgw rev
	row "--json" knockgw status --j
	row "-c -h --help" knockgw flush -
	row "-c -h --help" knockgw check-firewall -
	row "-c -o --output -h --help" knockgw metrics -
	row "-s --state -h --help" knockgw hide -
	row "$tmp/conf.one $tmp/confdir" knockgw metrics -o "$tmp/conf"
	row "" knockgw invite alice --dst ""
	row "$tmp/conf.one $tmp/confdir" knockgw status -c "$tmp/conf"
	row "$tmp/confdir" knockgw invite a --keys-dir "$tmp/conf"
	row "isn" knock-connect is
	row "--help --version" knock-connect --
	row "--integrity-len" knock-connect isn --integ
	row "knock native" knock-connect isn --mode ""
	row "" knock-connect -w ""
}

MODE=fallback
# shellcheck source=/dev/null
. completions/knockgw
# shellcheck source=/dev/null
. completions/knock-connect
rows
check "registered for knockgw" eval 'complete -p knockgw | grep -q " _knockgw "'
check "registered for knock-connect" eval 'complete -p knock-connect | grep -q " _knock_connect "'

BC=/usr/share/bash-completion/bash_completion
if [ -r "$BC" ]; then
	MODE=bash-completion
	# shellcheck source=/dev/null
	. "$BC"
	. completions/knockgw
	. completions/knock-connect
	rows
else
	echo "# $BC not installed: the fallback only"
fi
finish
