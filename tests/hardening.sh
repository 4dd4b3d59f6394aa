#!/bin/sh
# The build-hardening flags are really in the binaries: PIE, full RELRO
# (RELRO + BIND_NOW), stack protector, FORTIFY_SOURCE, non-executable stack.
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
row() {
	if eval "$2"; then
		passed=$((passed + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1"
	fi
}
for b in "$BUILD/knockgw" "$BUILD/knock-connect"; do
	h=$(readelf -h "$b")
	l=$(readelf -lW "$b")
	d=$(readelf -dW "$b")
	s=$(readelf -sW --dyn-syms "$b")
	row "$b: position independent (PIE)" "echo \"\$h\" | grep -q 'Type:.*DYN'"
	row "$b: RELRO segment" "echo \"\$l\" | grep -q GNU_RELRO"
	row "$b: BIND_NOW (full RELRO)" "echo \"\$d\" | grep -Eq 'BIND_NOW|FLAGS_1.*NOW'"
	row "$b: stack protector" "echo \"\$s\" | grep -q __stack_chk_fail"
	row "$b: FORTIFY_SOURCE (checked libc calls)" "echo \"\$s\" | grep -Eq '__[a-z_]+_chk@'"
	row "$b: non-executable stack" "echo \"\$l\" | grep GNU_STACK | grep -qv RWE"
done
echo "hardening: $passed passed, $failed failed"
[ "$failed" = 0 ]
