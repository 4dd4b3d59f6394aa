# sanitizer.sh - fail a namespace test on sanitizer reports; sourced by lib.sh.
#
# A build with AddressSanitizer and UBSan (make check-asan) prints its
# reports on the stderr of the process that made them: a daemon's go to
# $TMP/knockgw-NS.log (start_knockgw), knock-connect's and the tools' to
# whatever file the test sent their stderr to.  LeakSanitizer reports only
# when a process exits, so the check runs in cleanup(), after every process
# of the test has been stopped and before $TMP is removed, and a report
# fails the test even when every row passed:
#
#	cleanup() {
#		... stop the processes, delete the namespaces ...
#		sanitizer_check "$TMP" || SANITIZER_FAILED=1
#		rm -rf "$TMP"
#		[ "$SANITIZER_FAILED" = 0 ] || exit 1
#	}
#
# Without a sanitizer build nothing ever matches and this costs one grep.

SANITIZER_PATTERN='ERROR: AddressSanitizer|runtime error:|LeakSanitizer|ERROR: UndefinedBehaviorSanitizer'
SANITIZER_FAILED=0

# sanitizer_check DIR: prints each report found in DIR's text files (first
# lines, '# '-prefixed, TAP style); returns 1 when there was any.
sanitizer_check() {
	san_files=$(grep -rIlE "$SANITIZER_PATTERN" "$1" 2>/dev/null || true)
	[ -z "$san_files" ] && return 0
	for san_f in $san_files; do
		echo "not ok - sanitizer report in ${san_f#"$1"/}:"
		grep -E -A 40 "$SANITIZER_PATTERN" "$san_f" | head -n 120 | sed 's/^/# /'
	done
	return 1
}
