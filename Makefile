# knockgw - GNU make, pkg-config, no autotools.
#   make            build build/knockgw and build/knock-connect
#   make deps       install the Debian packages the build, tests and demo need
#   make demo       show knockgw at work in network namespaces (root)
#   make check      deps + build + unit, config, ISN, fuzz-smoke and netns tests
#   make check-asan, make check-tsan   the same under sanitizers (see below)
#   make fuzz       build the libFuzzer targets with clang
#   make analyze    clang static analyzer over the sources
#   make install    install (PREFIX, DESTDIR, SYSCONFDIR, ...); make uninstall
#   make deb        the Debian package, into build/deb (debian/, dpkg-buildpackage)
#   make clean
# V=1 shows the commands.

CC ?= cc
CLANG ?= clang
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr
DESTDIR ?=
CFLAGS ?= -O2 -g
LDFLAGS ?=
FUZZ_SECONDS ?= 5

BUILD := build
# The release, one line in VERSION (debian/changelog agrees); --version
# prints it.
VERSION := $(shell cat VERSION)
PKGS := libnetfilter_queue libmnl libnftnl libconfig libsodium libsystemd

# Warnings are not optional: they stay even when CFLAGS is overridden.
WARNINGS := -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes -Wshadow \
	-Wcast-qual -Wsign-compare -Wformat=2 -Wvla
HARDEN_CFLAGS := -fPIE -fstack-protector-strong -fstack-clash-protection -D_FORTIFY_SOURCE=2
HARDEN_LDFLAGS := -pie -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack

PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARNINGS) $(HARDEN_CFLAGS) -Isrc $(PKG_CFLAGS) $(CFLAGS) -MMD -MP \
	-DKNOCKGW_VERSION=\"$(VERSION)\"
ALL_LDFLAGS = $(HARDEN_LDFLAGS) $(LDFLAGS)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The sources: src/WING/*.c and src/WING/PART/*.c (docs/DESIGN.md, "The
# house"); includes are written from src/ ("common/pkt.h").
SRC_DIRS := $(sort $(dir $(wildcard src/*/ src/*/*/)))
SRC_HDRS := $(foreach d,$(SRC_DIRS),$(wildcard $(d)*.h))
DAEMON_MAIN := src/cmd/knockgw.c
LIB_SRCS := $(filter-out $(DAEMON_MAIN),$(foreach d,$(SRC_DIRS),$(wildcard $(d)*.c)))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)

.PHONY: all deps demo check unit test-tools fuzz fuzz-smoke analyze clean check-asan fuzz-long soak
# Keep the objects of test binaries (they are intermediate for make).
.SECONDARY:
.DEFAULT_GOAL := all

all: $(BUILD)/knockgw $(BUILD)/knock-connect

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# --version: a new VERSION rebuilds the one object that prints it.
$(BUILD)/obj/src/cmd/cli.o: VERSION

$(BUILD)/libknockgw.a: $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/knockgw: $(BUILD)/obj/src/cmd/knockgw.o $(BUILD)/libknockgw.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

# knock-connect: every client/*.c; the daemon's modules it uses come from the library.
KC_SRCS := $(wildcard client/*.c)
KC_OBJS := $(KC_SRCS:%.c=$(BUILD)/obj/%.o)
$(BUILD)/knock-connect: $(KC_OBJS) $(BUILD)/libknockgw.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/libknockgw.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tools/%: $(BUILD)/obj/tests/tools/%.o $(BUILD)/libknockgw.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The data path's tests share one set of adapter fakes (tests/unit/fakes.h),
# linked before the library so that the real adapters never are.
FAKED_TESTS := $(BUILD)/tests/test_server $(BUILD)/tests/test_client
$(FAKED_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/unit/fakes.o \
		$(BUILD)/libknockgw.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

unit: $(UNIT_BINS)
test-tools: $(TOOL_BINS)

deps:
	$(Q)DEPS_DIR=$(BUILD)/deps sh tools/deps.sh

# The main job, live in network namespaces, narrated; cleans up after itself.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh demo/demo.sh

check: deps
	$(Q)$(MAKE) --no-print-directory all unit test-tools fuzz
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/run.sh

# libFuzzer targets: clang, with the project's sources compiled in directly.
FUZZ_CFLAGS = -std=gnu11 -D_GNU_SOURCE -g -O2 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Isrc $(PKG_CFLAGS)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(SRC_HDRS) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(LIB_SRCS) $(PKG_LIBS)

# fuzz_integ: the server's data path against fakes of the adapters (and of
# the ISN check), so only the modules it drives are compiled in.
FUZZ_INTEG_SRCS := $(addprefix src/datapath/,door.c verdict.c) \
	$(addprefix src/datapath/server/,server.c pending.c pending_seg.c integ.c holdacct.c strays.c \
		replay.c guess.c servercount.c) \
	$(addprefix src/common/,pkt.c log.c marks.c) \
	$(addprefix src/common/table/,flowtable.c hidx.c tally.c tablemem.c) \
	src/config/match.c
$(BUILD)/fuzz/fuzz_integ: tests/fuzz/fuzz_integ.c $(FUZZ_INTEG_SRCS) $(SRC_HDRS) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_INTEG_SRCS) $(PKG_LIBS)

fuzz: $(FUZZ_BINS)

analyze:
	$(Q)for f in $(LIB_SRCS) $(DAEMON_MAIN) $(wildcard client/*.c); do \
		$(CLANG) --analyze -Xanalyzer -analyzer-output=text -std=gnu11 -D_GNU_SOURCE -Isrc \
			$(PKG_CFLAGS) \
			-o /dev/null $$f || exit 1; done

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# make install / make uninstall (DESTDIR= for staging).  The config and the
# keys are the administrator's: install never overwrites an existing config
# (the new one goes beside it as knockgw.conf.new) and uninstall keeps both.
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= /lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
MAN_PAGES := man/knockgw.8 man/knockgw.conf.5 man/knock-connect.1
COMPLETIONS := completions/knockgw completions/knock-connect
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# Examples an administrator copies into place: fail2ban's filter and jail.
EXAMPLESDIR ?= $(PREFIX)/share/doc/knockgw/examples
FAIL2BAN_EXAMPLES := contrib/fail2ban/filter.d/knockgw.conf contrib/fail2ban/jail.d/knockgw.conf
KGW_CONF := $(DESTDIR)$(SYSCONFDIR)/knockgw/knockgw.conf

.PHONY: install uninstall
install: all
	$(Q)install -D -m 0755 $(BUILD)/knockgw $(DESTDIR)$(PREFIX)/sbin/knockgw
	$(Q)install -D -m 0755 $(BUILD)/knock-connect $(DESTDIR)$(PREFIX)/bin/knock-connect
	$(Q)sed 's|/usr/sbin/knockgw|$(PREFIX)/sbin/knockgw|g' systemd/knockgw.service \
		> $(BUILD)/knockgw.service
	$(Q)install -D -m 0644 $(BUILD)/knockgw.service $(DESTDIR)$(SYSTEMDUNITDIR)/knockgw.service
	$(Q)for u in knockgw-metrics.service knockgw-metrics.timer; do \
		sed 's|/usr/sbin/knockgw|$(PREFIX)/sbin/knockgw|g' systemd/$$u >$(BUILD)/$$u && \
		install -D -m 0644 $(BUILD)/$$u $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done
	$(Q)if [ -e $(KGW_CONF) ]; then \
		install -D -m 0600 conf/knockgw.conf $(KGW_CONF).new; \
		echo "kept $(KGW_CONF); the new example is $(KGW_CONF).new"; \
	else \
		install -D -m 0600 conf/knockgw.conf $(KGW_CONF); \
	fi
	$(Q)install -d -m 0700 $(DESTDIR)$(SYSCONFDIR)/knockgw/keys
	$(Q)for m in $(MAN_PAGES); do \
		s=$${m##*.}; install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/$${m#man/} || exit 1; \
	done
	$(Q)for c in $(COMPLETIONS); do \
		install -D -m 0644 $$c $(DESTDIR)$(BASHCOMPDIR)/$${c#completions/} || exit 1; \
	done
	$(Q)for e in $(FAIL2BAN_EXAMPLES); do \
		install -D -m 0644 $$e $(DESTDIR)$(EXAMPLESDIR)/$${e#contrib/} || exit 1; \
	done

uninstall:
	$(Q)rm -f $(DESTDIR)$(PREFIX)/sbin/knockgw $(DESTDIR)$(PREFIX)/bin/knock-connect \
		$(DESTDIR)$(SYSTEMDUNITDIR)/knockgw.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/knockgw-metrics.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/knockgw-metrics.timer
	$(Q)for m in $(MAN_PAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m#man/}; done
	$(Q)for c in $(COMPLETIONS); do rm -f $(DESTDIR)$(BASHCOMPDIR)/$${c#completions/}; done
	$(Q)for e in $(FAIL2BAN_EXAMPLES); do rm -f $(DESTDIR)$(EXAMPLESDIR)/$${e#contrib/}; done
	$(Q)echo "kept $(DESTDIR)$(SYSCONFDIR)/knockgw (configuration and keys); remove it by hand"

# make check-asan: the daemon, knock-connect, the unit tests and the test
# tools built with AddressSanitizer and UBSan into ASAN_BUILD (gcc or clang;
# warnings stay errors; _FORTIFY_SOURCE is left out, it clashes with ASan's
# interceptors), then the unit, config, ISN and namespace tests against that
# build.  Any report aborts the process that made it; the namespace tests
# also grep their logs for reports (tests/netns/lib/sanitizer.sh).
# LeakSanitizer runs at exit and makes the process dumpable again itself, so
# it works in a daemon that dropped PR_SET_DUMPABLE and its capabilities;
# where ptrace is not allowed at all (a seccomp profile),
# ASAN_RUN_OPTIONS=detect_leaks=0.
# Prints its run time.
#
# ASAN_NETNS_SKIP: namespace tests make check runs but check-asan leaves out,
# to keep CI within its hour on two CPUs.  What stays is every test that
# feeds the daemon hostile or odd input or drives a state machine: probes
# and scans, knocks refused and replayed, integrity floods and attacks, the
# user path's translation, ICMP errors, the control socket, the firewall
# judge.  What goes is a deployment's shape (cloud NAT, a gateway, a DNAT,
# coexisting firewalls), restarts, the command line and the operator's
# tools, and long field-by-field comparisons, whose daemon code those run
# too.  Empty it to run them all.
ASAN_NETNS_SKIP ?= 0001-server-knocks 0005-client-kernel-path \
	0007-client-restart 0010-knock-connect-errors 0011-ops-reload \
	0012-fault-memory-caps 0018-sec-odd-syns-like-closed 0028-ops-status-json \
	0029-net-public-nat 0030-net-gateway-client 0031-life-never-shows-port \
	0032-net-dnat-dialled-port 0033-net-gateway-server \
	0034-net-coexist-firewalls 0035-ops-invite-end-to-end 0036-ops-metrics \
	0037-ops-sd-notify 0038-sec-probe-path 0040-fault-syn-lost \
	0041-fault-table-deleted 0056-ops-invite-apply-revoke 0057-ops-journal \
	0058-ops-fail2ban-syslog
ASAN_BUILD ?= build-asan
ASAN_CFLAGS ?= -O1 -g
ASAN_RUN_OPTIONS ?= detect_leaks=1:abort_on_error=1
UBSAN_RUN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
ASAN_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_HARDEN := $(filter-out -D_FORTIFY_SOURCE=%,$(HARDEN_CFLAGS))

check-asan: deps
	$(Q)$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) HARDEN_CFLAGS="$(ASAN_HARDEN)" \
		CFLAGS="$(ASAN_CFLAGS) $(ASAN_SAN)" all unit test-tools
	$(Q)start=$$(date +%s); \
	ASAN_OPTIONS=$(ASAN_RUN_OPTIONS) UBSAN_OPTIONS=$(UBSAN_RUN_OPTIONS) \
	BUILD=$(ASAN_BUILD) TESTS="unit conf isn netns" NETNS_SKIP="$(ASAN_NETNS_SKIP)" \
		sh tests/run.sh; rc=$$?; \
	echo "check-asan: $$(($$(date +%s) - start)) s"; exit $$rc

# make check-tsan: the daemon, knock-connect, the unit tests and the test
# tools built with ThreadSanitizer into TSAN_BUILD (gcc or clang; warnings
# stay errors; _FORTIFY_SOURCE is left out, its checked copies bypass the
# interceptors), then the unit tests and the namespace tests TSAN_NETNS
# against that build.  Those start daemons with several queue threads
# (queue.count 2), read the queue threads' counters from the main thread
# while traffic flows (status, metrics, reloads, a replay flood), or keep
# the control socket's closer thread busy (0014-sec-control-fd-hangs).  Any report
# fails: halt_on_error ends the process that made it with exitcode, and the
# namespace tests also grep their logs for reports (tests/netns/lib/sanitizer.sh).
# The queue guard (forked before the queue threads start) and the tables'
# MAP_POPULATE mappings run as they are; test_tablemem leaves its page-fault
# counts unchecked there (a first write faults its shadow page too).
# Prints its run time; not in .ci/run, which it would lengthen by several
# minutes.
TSAN_BUILD ?= build-tsan
TSAN_CFLAGS ?= -O1 -g
TSAN_RUN_OPTIONS ?= halt_on_error=1:exitcode=66:second_deadlock_stack=1
TSAN_NETNS ?= 0008-rules-golden 0045-sec-reload-thread-stopped 0011-ops-reload 0028-ops-status-json \
	0036-ops-metrics 0043-sec-replay-flood 0014-sec-control-fd-hangs
TSAN_SAN := -fsanitize=thread -fno-omit-frame-pointer
TSAN_HARDEN := $(filter-out -D_FORTIFY_SOURCE=%,$(HARDEN_CFLAGS))
TSAN_NETNS_SKIP = $(filter-out $(TSAN_NETNS),$(basename $(notdir $(wildcard tests/netns/[0-9]*.sh))))

.PHONY: check-tsan
check-tsan: deps
	$(Q)$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) HARDEN_CFLAGS="$(TSAN_HARDEN)" \
		CFLAGS="$(TSAN_CFLAGS) $(TSAN_SAN)" all unit test-tools
	@# The tools make deps unpacked (promtool, ...), where the tests look for them.
	$(Q)ln -sfn $(abspath $(BUILD)/deps) $(TSAN_BUILD)/deps
	$(Q)start=$$(date +%s); \
	TSAN_OPTIONS=$(TSAN_RUN_OPTIONS) BUILD=$(TSAN_BUILD) TESTS="unit netns" \
		NETNS_SKIP="$(TSAN_NETNS_SKIP)" sh tests/run.sh; rc=$$?; \
	echo "check-tsan: $$(($$(date +%s) - start)) s"; exit $$rc

# Benchmark, not part of check: knockgw against references in network
# namespaces; prints a table and BENCH lines (bench/run.sh, as root).
.PHONY: bench
bench: all
	$(Q)CC="$(CC)" BUILD="$(BUILD)" BENCH_CFLAGS="$(ALL_CFLAGS)" BENCH_LDFLAGS="$(ALL_LDFLAGS)" \
		BENCH_LIBS="$(PKG_LIBS)" sh bench/run.sh

# make fuzz-long: every libFuzzer target for FUZZ_TIME seconds (or FUZZ_RUNS
# executions, whichever comes first) with
# FUZZ_JOBS processes each, on a temporary copy of its corpus; prints
# executions and crashes per target.  FUZZ_MERGE=1 merges inputs that add
# coverage into tests/fuzz/corpus/NAME; FUZZ_LOG=FILE appends a line per
# target to FILE (the campaign record is tests/fuzz/CAMPAIGN.md); FUZZ_TARGETS
# picks targets (default all: conf ctl kc pkt seq).  Not part of make check.
FUZZ_TIME ?= 600
FUZZ_JOBS ?= 2
FUZZ_MERGE ?= 0
FUZZ_RUNS ?= 0
# fuzz_kc: knock-connect's parts without its main(), through their headers.
KC_PART_SRCS := $(filter-out client/knock-connect.c,$(KC_SRCS))
$(BUILD)/fuzz/fuzz_kc: tests/fuzz/fuzz_kc.c $(LIB_SRCS) $(KC_PART_SRCS) $(SRC_HDRS) $(wildcard client/*.h tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Iclient -o $@ $< $(LIB_SRCS) $(KC_PART_SRCS) $(PKG_LIBS)

FUZZ_LOG ?=
FUZZ_TARGETS ?= $(patsubst $(BUILD)/fuzz/fuzz_%,%,$(FUZZ_BINS))
fuzz-long: fuzz
	$(Q)FUZZ_TIME=$(FUZZ_TIME) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_MERGE=$(FUZZ_MERGE) FUZZ_LOG=$(FUZZ_LOG) \
		sh tests/fuzz/long.sh $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

# make soak: SOAK_SECONDS of mixed traffic while both daemons are killed and
# restarted every few seconds (tests/soak.sh; root).  Not in make check.
SOAK_SECONDS ?= 180
soak: all test-tools
	$(Q)SOAK_SECONDS=$(SOAK_SECONDS) BUILD=$(BUILD) sh tests/soak.sh

# make deb: the Debian package (debian/), knockgw_$(VERSION)_ARCH.deb and its
# -dbgsym, built with dpkg-buildpackage -b from a copy of the tree in
# $(BUILD)/deb/src, because dpkg-buildpackage writes its outputs into the
# parent directory: they land in $(BUILD)/deb and the tree stays clean.
# In a git checkout the copy holds the tracked and the untracked, not
# ignored files as they are in the work tree.  The package is built with
# debian/rules' settings alone: this make's command-line and environment
# variables (BUILD, CFLAGS, DESTDIR, ...) do not reach it.
# DEB_BUILD_OPTIONS=nocheck skips the unit and config tests the build runs.
# Needs `make deps`.
DEB_DIR := $(BUILD)/deb
# A BUILD inside the tree is left out of the copy (git refuses a path outside).
DEB_NOT_BUILD := $(if $(filter /%,$(BUILD)),,':!$(BUILD)')
DEB_UNSET := $(foreach v,BUILD DESTDIR PREFIX SYSCONFDIR SYSTEMDUNITDIR MANDIR CFLAGS LDFLAGS V TESTS,-u $(v))
.PHONY: deb
deb:
	$(Q)v=$$(dpkg-parsechangelog -S Version) && [ "$$v" = "$(VERSION)" ] || \
		{ echo "debian/changelog says $$v, VERSION says $(VERSION)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	$(Q)if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard -- . $(DEB_NOT_BUILD) \
			>$(DEB_DIR)/files && \
		tar --null -T $(DEB_DIR)/files --ignore-failed-read -cf $(DEB_DIR)/src.tar; \
	else \
		tar --exclude=./$(BUILD) -cf $(DEB_DIR)/src.tar .; \
	fi && tar -xf $(DEB_DIR)/src.tar -C $(DEB_DIR)/src && rm -f $(DEB_DIR)/src.tar $(DEB_DIR)/files
	$(Q)cd $(DEB_DIR)/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(DEB_UNSET) \
		dpkg-buildpackage -b -us -uc -Jauto
	$(Q)ls $(DEB_DIR)/*.deb
