/*
 * unitexec - runs a command under the seccomp part of a systemd unit's
 * sandbox, for the namespace tests (systemd-run is not available there).
 * tests/netns/lib/unitsandbox.py reads the unit and writes the arguments.
 *
 *   unitexec [-m UMASK] [-e ERRNO] [-A] [-w] [-f FAM,...] [-s NR,...] -- CMD [ARG...]
 *
 *   -m UMASK  UMask= (octal)
 *   -e ERRNO  SystemCallErrorNumber=: what a filtered system call returns
 *   -A        SystemCallArchitectures=native: other ABIs (x32, i386) fail
 *   -w        MemoryDenyWriteExecute=: no mapping both writable and
 *             executable, no mprotect() to executable, no shmat(SHM_EXEC)
 *   -f FAMS   RestrictAddressFamilies=: socket() of any other family fails
 *             with EAFNOSUPPORT (socketpair() is not filtered, as in systemd)
 *   -s NRS    SystemCallFilter=: only these system call numbers are allowed
 *
 * The filter is plain classic BPF, built here, so that no seccomp library
 * is needed.  Loading it needs no_new_privs (setpriv --no-new-privs before
 * us) or CAP_SYS_ADMIN.  Then CMD is executed in this process.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define X32_BIT 0x40000000u	/* x32 system calls share the x86-64 arch value */
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define X32_BIT 0u
#else
#error "unitexec: add this architecture's AUDIT_ARCH value"
#endif

enum {
	PROG_MAX = 4096,	/* the kernel's BPF_MAXINSNS */
	LIST_MAX = 1024,
};

#define NR_OFF offsetof(struct seccomp_data, nr)
#define ARCH_OFF offsetof(struct seccomp_data, arch)
/* The low 32 bits of an argument (little-endian; the flags we test fit). */
#define ARG_OFF(i) (offsetof(struct seccomp_data, args) + 8 * (i))

struct prog {
	struct sock_filter insn[PROG_MAX];
	unsigned n;
};

static void emit(struct prog *p, unsigned short code, unsigned char jt, unsigned char jf,
		 unsigned k)
{
	if (p->n >= PROG_MAX) {
		fprintf(stderr, "unitexec: filter too long\n");
		exit(1);
	}
	p->insn[p->n++] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
}

static void ld(struct prog *p, unsigned off)
{
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, off);
}

static void ret(struct prog *p, unsigned action)
{
	emit(p, BPF_RET | BPF_K, 0, 0, action);
}

/* Comma-separated unsigned numbers (base as strtoul's 0) into list. */
static size_t parse_list(const char *s, unsigned *list, size_t max)
{
	size_t n = 0;

	while (*s) {
		char *end;
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || (*end && *end != ',') || n == max || v > 0xffffffffUL) {
			fprintf(stderr, "unitexec: bad number list at \"%s\"\n", s);
			exit(2);
		}
		list[n++] = (unsigned)v;
		s = *end ? end + 1 : end;
	}
	return n;
}

/*
 * If the argument test matches, the call fails with err; otherwise the
 * system call number is loaded again and the program goes on.
 * nr: the call; arg: which argument; mask, val: fail when (arg & mask) op val.
 */
static void arg_check(struct prog *p, unsigned nr, unsigned arg, unsigned mask, unsigned val,
		      int fail_if_equal, unsigned err)
{
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 5, nr);	/* not this call: skip the block */
	ld(p, (unsigned)ARG_OFF(arg));
	emit(p, BPF_ALU | BPF_AND | BPF_K, 0, 0, mask);
	if (fail_if_equal)
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, val);
	else
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, val);
	ret(p, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
	ld(p, NR_OFF);
}

int main(int argc, char **argv)
{
	static struct prog p;
	static unsigned nrs[LIST_MAX], fams[64];
	size_t nnr = 0, nfam = 0;
	int have_filter = 0, native = 0, mdwe = 0, have_fams = 0, ch;
	unsigned err = EPERM;
	struct sock_fprog fprog;

	while ((ch = getopt(argc, argv, "+m:e:Awf:s:")) != -1) {
		switch (ch) {
		case 'm':
			umask((mode_t)strtoul(optarg, NULL, 8));
			break;
		case 'e':
			err = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'A':
			native = 1;
			break;
		case 'w':
			mdwe = 1;
			break;
		case 'f':
			nfam = parse_list(optarg, fams, sizeof(fams) / sizeof(fams[0]));
			have_fams = 1;
			break;
		case 's':
			nnr = parse_list(optarg, nrs, LIST_MAX);
			have_filter = 1;
			break;
		default:
			fprintf(stderr, "usage: unitexec [-m UMASK] [-e ERRNO] [-A] [-w] [-f FAM,...] "
					"[-s NR,...] -- CMD [ARG...]\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "unitexec: no command\n");
		return 2;
	}

	/* Other ABIs first: their numbers mean other calls. */
	ld(&p, ARCH_OFF);
	if (native) {
		emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, NATIVE_ARCH);
		ret(&p, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
		ld(&p, NR_OFF);
		if (X32_BIT) {
			emit(&p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, X32_BIT);
			ret(&p, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
		}
	} else {
		ld(&p, NR_OFF);
	}
	if (mdwe) {
		arg_check(&p, SYS_mmap, 2, PROT_WRITE | PROT_EXEC, PROT_WRITE | PROT_EXEC, 1, EPERM);
		arg_check(&p, SYS_mprotect, 2, PROT_EXEC, 0, 0, EPERM);
#ifdef SYS_pkey_mprotect
		arg_check(&p, SYS_pkey_mprotect, 2, PROT_EXEC, 0, 0, EPERM);
#endif
#ifdef SYS_shmat
		arg_check(&p, SYS_shmat, 2, SHM_EXEC, 0, 0, EPERM);
#endif
	}
	if (have_fams) {
		/* socket(): the family must be one of the list. */
		emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, (unsigned char)(nfam + 3), SYS_socket);
		ld(&p, (unsigned)ARG_OFF(0));
		for (size_t i = 0; i < nfam; i++)
			emit(&p, BPF_JMP | BPF_JEQ | BPF_K, (unsigned char)(nfam - i), 0, fams[i]);
		ret(&p, SECCOMP_RET_ERRNO | EAFNOSUPPORT);
		ld(&p, NR_OFF);
	}
	if (have_filter) {
		for (size_t i = 0; i < nnr; i++) {
			emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, nrs[i]);
			ret(&p, SECCOMP_RET_ALLOW);
		}
		ret(&p, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
	} else {
		ret(&p, SECCOMP_RET_ALLOW);
	}

	fprog.len = (unsigned short)p.n;
	fprog.filter = p.insn;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) < 0) {
		fprintf(stderr, "unitexec: cannot load the filter: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "unitexec: cannot run %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
