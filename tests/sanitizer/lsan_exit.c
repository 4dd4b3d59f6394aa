/*
 * lsan_exit.c - linked into the sanitizer build only (make check-asan).
 *
 * knockgw sets PR_SET_DUMPABLE 0 at start (secrets must not leak through a
 * core dump or a ptrace) and then keeps only CAP_NET_ADMIN.  LeakSanitizer's
 * exit check suspends the process by ptrace from a helper task, which
 * neither permits: it would print "LeakSanitizer has encountered a fatal
 * error" instead of a leak report.  LeakSanitizer asks this hook whether to
 * skip the check just before it runs, at exit, after main() returned (every
 * key is wiped by then): the hook makes the process traceable by itself
 * again and lets the check run.  Nothing here changes the daemon's
 * behaviour while it runs.
 */
#include <sys/prctl.h>

int __lsan_is_turned_off(void);

int __lsan_is_turned_off(void)
{
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	return 0;
}
