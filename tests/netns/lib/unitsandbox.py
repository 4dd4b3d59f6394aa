#!/usr/bin/env python3
"""unitsandbox.py - a systemd unit's [Service] sandbox as a command prefix.

    unitsandbox.py UNIT UNITEXEC > PREFIX 2> NOTES

Reads the unit and prints, one word per line, the command that runs a
program under as much of its sandbox as can be had without systemd:

    setpriv --bounding-set ... --no-new-privs UNITEXEC -m ... -s ... --

(CapabilityBoundingSet=, NoNewPrivileges=; then tests/tools/unitexec for
UMask=, SystemCallFilter= with SystemCallErrorNumber=, SystemCallArchitectures=,
RestrictAddressFamilies=, MemoryDenyWriteExecute=).  For every other
directive it says "not reproduced" on stderr, so that a test run shows what
it did not check; nothing in the unit is ignored silently.  System call groups
(@system-service) are expanded by systemd-analyze, the same tables systemd
itself uses; names this machine's kernel headers lack are reported.
"""
import re
import socket
import subprocess
import sys

# Directives that describe how systemd starts and supervises the service,
# not what it may do; the test does their part itself (runs ExecStart's
# program in the foreground, waits for "ready", sends SIGHUP and SIGTERM).
NOT_SANDBOX = {
    "Type", "ExecStartPre", "ExecStart", "ExecReload", "Restart",
    "RuntimeDirectory", "RuntimeDirectoryMode", "StateDirectory", "StateDirectoryMode",
}

UNISTD = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"


def note(msg):
    print("# unit: " + msg, file=sys.stderr)


def service_section(path):
    out = []
    section = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]":
                key, _, value = line.partition("=")
                out.append((key.strip(), value.strip()))
    return out


def syscall_numbers():
    nrs = {}
    with open(UNISTD) as f:
        for line in f:
            m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
            if m:
                nrs[m.group(1)] = int(m.group(2))
    return nrs


def expand(group, seen):
    """A @group's system call names, nested groups included."""
    if group in seen:
        return set()
    seen.add(group)
    text = subprocess.run(["systemd-analyze", "syscall-filter", group], check=True,
                          capture_output=True, text=True).stdout
    names = set()
    for line in text.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        if word.startswith("@"):
            names |= expand(word, seen)
        else:
            names.add(word)
    return names


def main():
    unit, unitexec = sys.argv[1], sys.argv[2]
    setpriv = ["setpriv"]
    ux = [unitexec]
    allowed = None
    for key, value in service_section(unit):
        what = "%s=%s" % (key, value)
        if key == "CapabilityBoundingSet":
            caps = ["+" + c.lower().removeprefix("cap_") for c in value.split()]
            setpriv += ["--bounding-set", ",".join(["-all"] + caps)]
            note(what + ": setpriv --bounding-set")
        elif key == "NoNewPrivileges" and value == "yes":
            setpriv.append("--no-new-privs")
            note(what + ": setpriv --no-new-privs")
        elif key == "UMask":
            ux += ["-m", value]
            note(what + ": unitexec -m")
        elif key == "SystemCallErrorNumber":
            import errno
            ux += ["-e", str(getattr(errno, value))]
            note(what + ": unitexec -e")
        elif key == "SystemCallArchitectures" and value == "native":
            ux.append("-A")
            note(what + ": unitexec -A")
        elif key == "MemoryDenyWriteExecute" and value == "yes":
            ux.append("-w")
            note(what + ": unitexec -w (seccomp, as systemd 252 does it)")
        elif key == "RestrictAddressFamilies" and not value.startswith("~"):
            fams = [str(int(getattr(socket, f))) for f in value.split()]
            ux += ["-f", ",".join(fams)]
            note(what + ": unitexec -f")
        elif key == "SystemCallFilter" and not value.startswith("~"):
            names = set()
            for word in value.split():
                names |= expand(word, set()) if word.startswith("@") else {word}
            allowed = (allowed or set()) | names
            note(what + ": unitexec -s (%d names)" % len(names))
        elif key in NOT_SANDBOX:
            note(what + ": not reproduced (not a sandbox setting; the test does its part)")
        else:
            note(what + ": not reproduced")
    if allowed is not None:
        nrs = syscall_numbers()
        missing = sorted(n for n in allowed if n not in nrs)
        if missing:
            note("SystemCallFilter: %d name(s) not in this machine's x86-64 table "
                 "(other architectures' calls): %s" % (len(missing), " ".join(missing)))
        ux += ["-s", ",".join(str(nrs[n]) for n in sorted(allowed) if n in nrs)]
    for word in setpriv + ux + ["--"]:
        print(word)


if __name__ == "__main__":
    main()
