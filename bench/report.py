#!/usr/bin/env python3
"""Turns the raw measurements of bench/run.sh into a table and BENCH lines.

  report.py DIR

DIR/results holds one measurement per line, "KEY k=v k=v ..." or "KEY
value"; DIR/rtt-N.out, DIR/rttk-N.out, DIR/scan{,knock}{4,6}-N.out,
DIR/batch-*.out and DIR/connect.out the probers' per-probe output.  Prints a table of everything, then one line per figure:
"BENCH <name> <value>" (a figure that was not measured is left out).
"""
import glob
import os
import statistics as st
import sys

PROBE_TYPES = ("syn", "ack", "window", "fin", "null", "xmas", "maimon")

GOALS = {
    "syn_rate_ratio": ">= 0.9",
    "flood_success_pct": ">= 99",
    "probe_flood_success_pct": ">= 99",
    "connect_added_us": "<= 20, <= 1.3 x connect_added_floor_us",
    "server_tput_ratio": ">= 0.98",
    "client_tput_ratio": ">= 0.95",
    "client_user_tput_ratio": ">= 0.4",
    "rst_timing_delta_us": "|x| <= 2 (every probe type, p10 and median, v4/v6, idle/knocking)",
    "syn_rate_cores": ">= 1.6",
    "gw_client_tput_ratio": ">= 0.95",
    "gw_server_tput_ratio": ">= 0.98",
    "client_conn_rate_ratio": ">= 0.8",
    "integ_flood_login_ratio": "<= 1.5",
}


def load(path):
    rows = {}
    for line in open(path):
        parts = line.split()
        if not parts:
            continue
        key, rest = parts[0], parts[1:]
        if len(rest) == 1 and "=" not in rest[0]:
            rows.setdefault(key, []).append(rest[0])
            continue
        d = {}
        for kv in rest:
            if "=" in kv:
                k, v = kv.split("=", 1)
                try:
                    d[k] = float(v)
                except ValueError:
                    d[k] = v
        rows.setdefault(key, []).append(d)
    return rows


def med(xs):
    return st.median(xs) if xs else float("nan")


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = (len(xs) - 1) * q
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def mad(xs):
    m = med(xs)
    return med([abs(x - m) for x in xs])


def ms_list(v):
    """A "812,790" field of results: the numbers in it."""
    if isinstance(v, float):
        return [v]
    return [float(x) for x in str(v).split(",") if x and x != "none"]


def integ(rows, figs, line):
    """The integ phase (bench/integ.sh): ssh logins through knock-connect,
    quiet and during an integrity flood."""
    if "integ.round" not in rows:
        return
    t = rows["integ.round"]
    line("Integrity flood: ssh login through knock-connect (ms), quiet vs during the flood")
    quiet, flood, ratios = [], [], []
    for i, r in enumerate(t, 1):
        q, f = ms_list(r.get("quiet", "")), ms_list(r.get("flood", ""))
        # A flood none of whose flows got a SYN-ACK held nothing in the
        # daemon: its logins measured no flood, and the round counts for
        # nothing.
        void = int(r.get("synacks", 0) or 0) == 0
        if not void:
            quiet += q
            flood += f
            if q and f:
                ratios.append(med(f) / med(q))
        line("  round %d: quiet %s, flood %s, queue-full drops %d, flood %d/%d SYN-ACKs, %d segments%s"
             % (i, " ".join("%.0f" % x for x in q) or "failed",
                " ".join("%.0f" % x for x in f) or "failed", r.get("queue_dropped", 0),
                r.get("synacks", 0), r.get("connections", 0), r.get("segments", 0),
                " (no flow of the flood got in: round not counted)" if void else ""))
    if not quiet or not flood:
        line("  no round measured a flood: no integ_flood_login_ratio")
    if quiet and flood:
        figs["integ_flood_login_ratio"] = med(flood) / med(quiet)
        line("  median quiet %.0f ms, during the flood %.0f ms: integ_flood_login_ratio %.2f"
             " (per round %s)" % (med(quiet), med(flood), figs["integ_flood_login_ratio"],
                                  " ".join("%.2f" % x for x in ratios)))
    line()


def main():
    d = sys.argv[1]
    rows = load(os.path.join(d, "results"))
    figs = {}
    out = []

    def line(s=""):
        out.append(s)

    # --- synrate ---
    drains = {k[len("drain."):]: v for k, v in rows.items() if k.startswith("drain.")}
    if drains:
        line("SYN decision rate: drain of a backlog queued while the reader was stopped (SIGSTOP),")
        line("invalid SYNs from %s sources; rate = verdicts / time until the queue is empty" % "253")
        line("  %-12s %9s %9s %9s %9s  %s" % ("reader", "median/s", "min/s", "max/s", "backlog", "runs"))
        desc = {
            "daemon": "knockgw, 1 queue, on_fail reset (RST from user space)",
            "nfqmin": "nfq_min, accept all (the kernel's RST: closed port)",
            "daemon_2q": "knockgw, queue.count = 2",
            "daemon_drop": "knockgw, 1 queue, on_fail drop",
            "nfqmin_drop": "nfq_min -d, drop all",
        }
        for k in ("daemon", "nfqmin", "daemon_2q", "daemon_drop", "nfqmin_drop"):
            v = drains.get(k)
            if not v:
                continue
            r = [x["rate"] for x in v]
            line("  %-12s %9.0f %9.0f %9.0f %9.0f  %d   %s" % (k, med(r), min(r), max(r),
                                                           med([x["backlog"] for x in v]), len(r),
                                                           desc[k]))
        def paired(a, b):
            """Median of per-round ratios a/b (the runs of one round are seconds apart)."""
            ra, rb = drains.get(a, []), drains.get(b, [])
            rs = [x["rate"] / y["rate"] for x, y in zip(ra, rb) if y["rate"] > 0]
            return (med(rs), rs) if rs else (None, [])

        def best(a, b):
            """Ratio of the fastest runs: interference from other work only slows a run down."""
            return max(x["rate"] for x in drains[a]) / max(x["rate"] for x in drains[b])

        line("  ratios: median of per-round ratios (per round), and of the best runs")
        r, rs = paired("daemon", "nfqmin")
        if r is not None:
            figs["syn_rate_ratio"] = r
            line("  knockgw / nfq_min, RST answers:    %.3f (%s), best %.3f"
                 % (r, " ".join("%.2f" % x for x in rs), best("daemon", "nfqmin")))
        r, rs = paired("daemon_drop", "nfqmin_drop")
        if r is not None:
            line("  knockgw / nfq_min, drop (decision): %.3f (%s), best %.3f"
                 % (r, " ".join("%.2f" % x for x in rs), best("daemon_drop", "nfqmin_drop")))
        r, rs = paired("daemon_2q", "daemon")
        if r is not None:
            figs["syn_rate_cores"] = r
            pq = sorted(set(str(x.get("per_queue", "")) for x in drains["daemon_2q"]))
            line("  knockgw queue.count 2 / 1:          %.3f (%s), best %.3f; backlog per queue %s"
                 % (r, " ".join("%.2f" % x for x in rs), best("daemon_2q", "daemon"), " ".join(pq)))
        cr = rows.get("meta.copy_range")
        if cr:
            line("  copy range (knockgw's, used for nfq_min too): %s bytes" % cr[0])
        line()

    # --- flood ---
    def flood_rows(key, title, figure):
        if key not in rows:
            return
        line(title)
        pcts = []
        for i, r in enumerate(rows[key], 1):
            p = 100.0 * r["ok"] / max(r["probes"], 1)
            pcts.append(p)
            line("  round %d: %3d/%d SYN-ACK (%.1f%%), %d at the first SYN; flood %.0f/s, decided %.0f/s, "
                 "%d queue-full drops in 5 s" % (i, r["ok"], r["probes"], p, r["first"], r["gen"],
                                                 r["rate"], r["queue_dropped"]))
        figs[figure] = med(pcts)

    if "flood.round" in rows:
        sat = rows.get("flood.saturation", [{}])[0]
        line("Knocks under flood: 200 knock SYNs (10 ms apart, one retransmission after 1 s,")
        line("3 s timeout) while invalid SYNs arrive at the daemon's saturation rate")
        line("  saturation (unpaced flood %.0f/s): knockgw decided %.0f SYN/s, %d queue-full drops in 2 s"
             % (sat.get("gen", 0), sat.get("rate", 0), sat.get("queue_dropped", 0)))
    flood_rows("flood.round", "  the protected port flooded (the knocks' own queue):", "flood_success_pct")
    flood_rows("pflood.round", "  closed port 7003 flooded as fast as the generator goes, past the daemon's capacity\n"
               "  (decided, drops: the probe queue; a probe that does not fit is dropped, unanswered):",
               "probe_flood_success_pct")
    if "flood.round" in rows or "pflood.round" in rows:
        line()

    # --- latency ---
    def read_rtt(pattern):
        """{label: [us]}, [per-round {label: [us]}], {label: {flags: n}} of DIR/pattern files."""
        every, rounds, flags = {}, [], {}
        for f in sorted(glob.glob(os.path.join(d, pattern)),
                        key=lambda x: int(x.rsplit("-", 1)[1].split(".")[0])):
            rr = {}
            for l in open(f):
                a = l.split()
                if len(a) < 3:
                    continue
                flags.setdefault(a[0], {}).setdefault(a[1], 0)
                flags[a[0]][a[1]] += 1
                if int(a[2]) >= 0:
                    us = int(a[2]) / 1000.0
                    every.setdefault(a[0], []).append(us)
                    rr.setdefault(a[0], []).append(us)
            rounds.append(rr)
        return every, rounds, flags

    rtts, per_round, flags = read_rtt("rtt-*.out")
    rttk, per_round_k, flags_k = read_rtt("rttk-*.out")
    for k, v in rttk.items():
        rtts[k + "_k"] = v
        flags[k + "_k"] = flags_k[k]
    if rtts:
        line("SYN -> answer time on the wire (raw prober, kernel receive timestamps), microseconds")
        line("  %-8s %-5s %6s %8s %8s %8s %8s %8s  %s" % ("probe", "n", "answer", "median", "p10",
                                                          "p90", "IQR", "MAD", ""))
        desc = {"knock": "valid knock, protected port 8001 (listener)",
                "plain": "port 8002, not protected (listener)",
                "floor": "valid knock, port 8003, the minimal reader on the same rules",
                "bad": "invalid knock, protected port 8001",
                "closed": "port 7002, closed (shipped defaults: through the daemon)",
                "bad_k": "invalid knock, closed_ports = \"kernel\"",
                "closed_k": "closed port, closed_ports = \"kernel\" (the kernel alone)"}
        for k in ("knock", "plain", "floor", "bad", "closed", "bad_k", "closed_k"):
            v = rtts.get(k, [])
            if not v:
                continue
            fl = ",".join("%s:%d" % (a, b) for a, b in sorted(flags[k].items()))
            line("  %-8s %-5d %6s %8.1f %8.1f %8.1f %8.1f %8.1f  %s" % (
                k, len(v), fl, med(v), pct(v, .1), pct(v, .9), pct(v, .75) - pct(v, .25), mad(v),
                desc[k]))
        if rtts.get("knock") and rtts.get("plain"):
            figs["connect_added_us"] = med(rtts["knock"]) - med(rtts["plain"])
            rd = [med(r["knock"]) - med(r["plain"]) for r in per_round if r.get("knock") and r.get("plain")]
            line("  knock - plain: %.1f us (per round %s)" % (figs["connect_added_us"],
                                                            " ".join("%.1f" % x for x in rd)))
        if rtts.get("floor") and rtts.get("plain"):
            figs["connect_added_floor_us"] = med(rtts["floor"]) - med(rtts["plain"])
            rd = [med(r["floor"]) - med(r["plain"]) for r in per_round if r.get("floor") and r.get("plain")]
            line("  minimal reader's knock - plain (the queue round trip): %.1f us (per round %s)"
                 % (figs["connect_added_floor_us"], " ".join("%.1f" % x for x in rd)))
            rr = [(med(r["knock"]) - med(r["plain"])) / (med(r["floor"]) - med(r["plain"]))
                  for r in per_round if r.get("knock") and r.get("floor") and r.get("plain")
                  and med(r["floor"]) > med(r["plain"])]
            if "connect_added_us" in figs and figs["connect_added_floor_us"] > 0:
                line("  knockgw / minimal reader, added time: %.2f (per round %s; goal <= 1.3)"
                     % (figs["connect_added_us"] / figs["connect_added_floor_us"],
                        " ".join("%.2f" % x for x in rr)))
        for r in rows.get("rtt.faults", []):
            line("  knockgw's page faults during these rounds: %d, for the %d SYNs it decided "
                 "(a fault costs tens of us on a virtual machine)"
                 % (r.get("daemon", 0), r.get("packets", 0)))
        b, c = rtts.get("bad_k"), rtts.get("closed_k")
        if b and c:
            figs["rst_timing_delta_kernel_us"] = med(b) - med(c)
            figs["rst_closed_jitter_kernel_us"] = mad(c)
            rd = [med(r["bad"]) - med(r["closed"]) for r in per_round_k if r.get("bad") and r.get("closed")]
            line("  bad - closed, closed_ports = \"kernel\" (the opt-out): %.1f us (per round %s); "
                 "closed-port MAD %.1f us" % (figs["rst_timing_delta_kernel_us"],
                                             " ".join("%.1f" % x for x in rd), mad(c)))
        line()

    # Every probe type, protected (p_) vs closed (c_), shipped defaults.
    scans = {}
    for fam in ("4", "6"):
        for mode, pat in (("idle", "scan%s-*.out" % fam), ("knocking", "scanknock%s-*.out" % fam)):
            every, rounds, fl = read_rtt(pat)
            if every:
                scans[(fam, mode)] = (every, rounds, fl)
    if scans:
        line("Probe of a protected port (p, 8001, listener) minus the same probe of a closed port (c,")
        line("7002): answer time gaps in microseconds, shipped defaults; each gap is the median over")
        line("rounds of that round's gap (p10 of p minus p10 of c, likewise the medians); answers")
        line("(flags:count) and the p10/median of each side over all rounds beside")
        line("  %-3s %-8s %-7s %8s %8s   %-28s %-24s %s" % ("v", "mode", "probe", "p10 gap", "med gap",
                                                            "p10 p / c", "median p / c", "answers p | c"))
        worst = 0.0
        spreads = []
        for (fam, mode), (every, rounds, fl) in sorted(scans.items()):
            for t in PROBE_TYPES:
                pk, ck = "p_" + t, "c_" + t
                if not every.get(pk) or not every.get(ck):
                    continue
                g10 = [pct(r[pk], .1) - pct(r[ck], .1) for r in rounds if r.get(pk) and r.get(ck)]
                g50 = [med(r[pk]) - med(r[ck]) for r in rounds if r.get(pk) and r.get(ck)]
                gap10, gap50 = med(g10), med(g50)
                worst = max(worst, abs(gap10), abs(gap50))
                if len(g10) >= 2:
                    spreads.append(max(g10) - min(g10))
                if mode == "idle":
                    figs["rst_gap_p10_us_%s_v%s" % (t, fam)] = gap10
                line("  %-3s %-8s %-7s %8.2f %8.2f   %6.1f / %6.1f (r: %s)  %6.1f / %6.1f   %s | %s" % (
                    fam, mode, t, gap10, gap50, pct(every[pk], .1), pct(every[ck], .1),
                    " ".join("%.1f" % x for x in g10), med(every[pk]), med(every[ck]),
                    ",".join("%s:%d" % x for x in sorted(fl[pk].items())),
                    ",".join("%s:%d" % x for x in sorted(fl[ck].items()))))
        figs["rst_timing_delta_us"] = worst
        line("  rst_timing_delta_us: the largest of these gaps, %.2f us" % worst)
        if spreads:
            # How far one row's gap moves from round to round on this
            # machine: a largest gap of that order is the measurement's.
            figs["rst_gap_round_spread_us"] = med(spreads)
            line("  rst_gap_round_spread_us: how far a row's p10 gap moves between rounds (max - min,")
            line("  median over the rows), %.2f us: the noise the largest gap is drawn from" %
                 figs["rst_gap_round_spread_us"])
        line()

    cf = os.path.join(d, "connect.out")
    if os.path.exists(cf):
        cs = {}
        fails = {}
        for l in open(cf):
            a = l.split()
            if len(a) == 3:
                if a[1] == "ok":
                    cs.setdefault(a[0], []).append(int(a[2]) / 1000.0)
                else:
                    fails[a[0]] = fails.get(a[0], 0) + 1
        if cs.get("knocked") and cs.get("plain"):
            line("  connect() as an application sees it: knocked through both roles (client kernel path)"
                 " median %.1f us, p90 %.1f;" % (med(cs["knocked"]), pct(cs["knocked"], .9)))
            line("    plain median %.1f us, p90 %.1f; added %.1f us (failures: %s)"
                 % (med(cs["plain"]), pct(cs["plain"], .9), med(cs["knocked"]) - med(cs["plain"]),
                    fails or "none"))
    line()


    # --- throughput ---
    if "tput.round" in rows:
        t = rows["tput.round"]
        g = lambda k: [r[k] / 1e9 for r in t]
        line("iperf3 throughput, one stream client -> server, Gbit/s (median of %d)" % len(t))
        line("  none (no knockgw)                 %6.2f   %s" % (med(g("base")), " ".join("%.2f" % x for x in g("base"))))
        line("  client role, kernel (seqadj)      %6.2f   %s" % (med(g("ck")), " ".join("%.2f" % x for x in g("ck"))))
        line("  both roles, server-protected port %6.2f   %s" % (med(g("sp")), " ".join("%.2f" % x for x in g("sp"))))
        line("  both roles, unprotected port      %6.2f   %s" % (med(g("up")), " ".join("%.2f" % x for x in g("up"))))
        line("  client role, user space           %6.2f   %s" % (med(g("cu")), " ".join("%.2f" % x for x in g("cu"))))
        def ratio(name, a, b, what):
            rs = [r[a] / r[b] for r in t if r[b] > 0]
            if not rs:
                return
            figs[name] = med(rs)
            line("  %-24s %.3f  IQR %.3f  per round %s" % (name, med(rs), pct(rs, .75) - pct(rs, .25),
                                                          " ".join("%.2f" % x for x in rs)))
            line("    (%s)" % what)

        line("  ratios: median of per-round ratios (the runs of a round follow each other)")
        ratio("server_tput_ratio", "sp", "up", "both roles: protected port / unprotected port")
        ratio("client_tput_ratio", "ck", "base", "client role, kernel path / no knockgw")
        ratio("client_user_tput_ratio", "cu", "base", "client role, user path / no knockgw")
        line()

    # --- gw: iperf3 through a router ---
    if "gw.round" in rows:
        t = rows["gw.round"]
        g = lambda k: [r[k] / 1e9 for r in t]
        line("iperf3 through a router, one stream, Gbit/s (median of %d)" % len(t))
        for k, what in (("gn", "masquerading router, no knockgw"),
                        ("gc", "masquerading router, gateway client (from, kernel) + server role"),
                        ("sn", "routed, no knockgw"),
                        ("sk", "routed, client role on the client (kernel), router plain"),
                        ("sc", "routed, client role, router with conntrack on (no knockgw)"),
                        ("sf", "routed, client role + router's gateway server role (forward)")):
            if all(k in r for r in t):
                line("  %-66s %6.2f   %s" % (what, med(g(k)), " ".join("%.2f" % x for x in g(k))))

        def gw_ratio(name, a, b, what):
            rs = [r[a] / r[b] for r in t if r[b] > 0]
            if not rs:
                return
            if name:
                figs[name] = med(rs)
            line("  %-24s %.3f  IQR %.3f  per round %s" % (name or "(shown only)", med(rs),
                                                          pct(rs, .75) - pct(rs, .25),
                                                          " ".join("%.2f" % x for x in rs)))
            line("    (%s; best runs %.3f)" % (what, max(r[a] for r in t) / max(r[b] for r in t)))

        line("  ratios: median of per-round ratios (the runs of a round follow each other)")
        gw_ratio("gw_client_tput_ratio", "gc", "gn", "gateway client + server role / no knockgw")
        gw_ratio("gw_server_tput_ratio", "sf", "sk", "router with gateway server role / plain router, "
                 "both behind the same client role")
        gw_ratio(None, "sf", "sn", "client role + gateway server / no knockgw at all")
        if all("sc" in r for r in t):
            gw_ratio(None, "sc", "sk", "router with conntrack on, no knockgw / plain router")
            gw_ratio(None, "sf", "sc", "router with gateway server role / router with conntrack on")
        line()

    # --- connrate ---
    if "connrate.round" in rows:
        t = rows["connrate.round"]
        line("New TCP connections per second (nonblocking connects, closed by RST after the")
        line("handshake), plain listener; median of %d" % len(t))
        for k, what in (("n", "no knockgw"), ("t", "no knockgw, conntrack on (shown only)"),
                        ("k", "client role, kernel path (every SYN knocked)")):
            v = [r[k] for r in t if k in r]
            if not v:
                continue
            fails = sum(r.get(k + "_fail", 0) + r.get(k + "_unf", 0) for r in t)
            line("  %-46s %8.0f   %s  (failed or unfinished: %d)"
                 % (what, med(v), " ".join("%.0f" % x for x in v), fails))
        rs = [r["k"] / r["n"] for r in t if r["n"] > 0]
        if rs:
            figs["client_conn_rate_ratio"] = med(rs)
            line("  %-24s %.3f  IQR %.3f  per round %s; best runs %.3f"
                 % ("client_conn_rate_ratio", med(rs), pct(rs, .75) - pct(rs, .25),
                    " ".join("%.2f" % x for x in rs), max(r["k"] for r in t) / max(r["n"] for r in t)))
        rs = [r["k"] / r["t"] for r in t if r.get("t", 0) > 0]
        if rs:
            line("  client role / conntrack only %.3f  per round %s (the daemon's part)"
                 % (med(rs), " ".join("%.2f" % x for x in rs)))
        rs = [r["t"] / r["n"] for r in t if r["n"] > 0 and "t" in r]
        if rs:
            line("  conntrack only / none    %.3f  per round %s (the part of the cost that is conntrack's)"
                 % (med(rs), " ".join("%.2f" % x for x in rs)))
        line()

    integ(rows, figs, line)

    ls, le = rows.get("meta.load_start"), rows.get("meta.load_end")
    if ls and le:
        line("load average at start %s, at end %s (other work on this machine skews the figures)"
             % (ls[0], le[0]))
        line()

    order = ["syn_rate_ratio", "flood_success_pct", "probe_flood_success_pct", "connect_added_us",
             "connect_added_floor_us", "server_tput_ratio",
             "client_tput_ratio", "client_user_tput_ratio", "rst_timing_delta_us"] + \
        ["rst_gap_p10_us_%s_v%s" % (t, f) for f in ("4", "6") for t in PROBE_TYPES] + \
        ["rst_gap_round_spread_us", "rst_timing_delta_kernel_us", "rst_closed_jitter_kernel_us",
         "syn_rate_cores", "gw_client_tput_ratio", "gw_server_tput_ratio",
         "client_conn_rate_ratio", "integ_flood_login_ratio"]
    line("%-28s %10s   %s" % ("figure", "value", "goal"))
    for k in order:
        if k in figs:
            goal = GOALS.get(k, "")
            if k.startswith("rst_gap_p10_us_"):
                goal = "|x| <= 2"
            if k == "rst_gap_round_spread_us":
                goal = "(no goal: the rounds' noise)"
            if k == "rst_timing_delta_kernel_us":
                goal = "(closed_ports = \"kernel\", the opt-out: no goal)"
            if k == "connect_added_floor_us":
                goal = "(the queue round trip: the minimal reader)"
            line("%-28s %10.3f   %s" % (k, figs[k], goal))
    line()
    for k in order:
        if k in figs:
            v = figs[k]
            line("BENCH %s %s" % (k, ("%.3f" % v) if abs(v) < 100 else ("%.1f" % v)))
    print("\n".join(out))


if __name__ == "__main__":
    main()
