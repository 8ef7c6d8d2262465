#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-idmapd: the table from lab-bench.sh's raw results (bench-data/results and the kprobe
# traces next to it). Run by the guest; can be rerun on the host:
#   bench-table.py BUILD/vm-lab/runs/bench-idmapd-6.1/bench-data/results
import os, re, sys

res_path = sys.argv[1]
base = os.path.dirname(res_path)
# a daemon's turns at a pass are pooled: their upcalls, wall times, CPU and latencies added up
ops, traces, turns, guest = {}, {}, {}, {}
for line in open(res_path):
    f = line.split()
    if len(f) < 3:
        continue
    if f[2] == "ops":
        # daemon pass ops WORKERS CPU_NS WALL_US LAT_US...
        w, c, t, l = ops.get((f[0], f[1]), (0, 0, 0, []))
        ops[(f[0], f[1])] = (int(f[3]), c + int(f[4]), t + int(f[5]), l + [int(x) for x in f[6:]])
        turns[(f[0], f[1])] = turns.get((f[0], f[1]), 0) + 1
    elif f[2] == "guestcpu":
        # daemon pass guestcpu BUSY_TICKS TOTAL_TICKS CLK_TCK (all the guest's CPUs)
        b, t, _ = guest.get((f[0], f[1]), (0, 0, 0))
        guest[(f[0], f[1])] = (b + int(f[3]), t + int(f[4]), int(f[5]))
    elif f[2] == "trace":
        traces.setdefault((f[0], f[1]), []).append(os.path.join(base, f[3]))

UP = re.compile(r"\s(\d+\.\d+): u_(\w+?)(_ret)?: ")

def periodic(paths):
    """nsid-idmapd's periodic work in traces (uprobes): {name: [durations us]}."""
    out = {}
    for path in paths:
        periodic_one(path, out)
    return out

def periodic_one(path, out):
    start = {}
    for l in open(path):
        m = UP.search(l)
        if not m:
            continue
        t, name, ret = float(m.group(1)), m.group(2), m.group(3)
        tid = l.split("[")[0].strip().rsplit("-", 1)[-1]
        if not ret:
            start[(name, tid)] = t
        elif (name, tid) in start:
            out.setdefault(name, []).append((t - start.pop((name, tid))) * 1e6)

EV = re.compile(r"\s(\d+\.\d+): (chan_up2?|chan_down|pipe_up|pipe_down): \([^)]*\)\s+h=(0x[0-9a-f]+)")

def upcalls(paths):
    """Latencies (us) of the upcalls in a trace, per path, paired by the kernel object that
    waits for the answer (knfsd's cache entry; the key construction's authorisation key).
    Answers for objects with no upcall in the trace (other caches, request-key) are ignored."""
    lat = {"chan": [], "pipe": []}
    unanswered = {"chan": 0, "pipe": 0}
    for path in paths:
        pend = {}
        pair_one(path, lat, pend)
        for kind, _ in pend:
            unanswered[kind] += 1
    return lat, unanswered

def pair_one(path, lat, pend):
    for l in open(path):
        m = EV.search(l)
        if not m:
            continue
        t, ev, h = float(m.group(1)), m.group(2).rstrip("2"), m.group(3)
        kind, what = ev.split("_")
        if what == "up":
            pend[(kind, h)] = t
        elif (kind, h) in pend:
            lat[kind].append((t - pend.pop((kind, h))) * 1e6)

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else 0

NAMES = {"rpc": "rpc.idmapd", "nsid": "nsid-idmapd"}
PASSES = ("both", "pipes", "pipes-warm", "channels", "channels-warm", "chown",
          "sat-both", "sat-pipes", "sat-channels")
print("%-20s %-12s %5s %4s %7s %8s %9s %8s %8s %9s %9s %9s" % (
    "pass/path", "daemon", "turns", "proc", "upcalls", "wall ms", "upcalls/s", "p50 us", "p99 us",
    "cpu us/up", "up/cpu-s", "op p99 ms"))
res, cpu_res = {}, {}
for p in PASSES:
    for d in ("rpc", "nsid"):
        if (d, p) not in ops:
            continue
        workers, cpu_ns, wall_us, lat_ops = ops[(d, p)]
        lat, unans = upcalls(traces[(d, p)]) if (d, p) in traces else ({}, {})
        total = sum(len(v) for v in lat.values())
        if not total:
            print("%-20s %-12s %5d %4d %7s %8.0f %9s %8s %8s %9s %9s %9.1f" % (
                p + "/ops", NAMES[d], turns[(d, p)], workers, "-", wall_us / 1000, "-", "-", "-", "-",
                "-", pct(lat_ops, 99) / 1000))
            continue
        cpu_per = cpu_ns / 1000 / total
        if (d, p) in guest:
            busy, ticks, hz = guest[(d, p)]
            cpu_res[(p, d)] = (busy / ticks if ticks else 0, busy * 1e6 / hz / total, cpu_per)
        for kind in ("chan", "pipe"):
            v = lat.get(kind)
            if not v:
                continue
            row = (workers, len(v), wall_us / 1000, len(v) / (wall_us / 1e6), pct(v, 50),
                   pct(v, 99), cpu_per, 1e6 / cpu_per if cpu_per else 0, pct(lat_ops, 99) / 1000)
            res[(p, kind, d)] = row
            extra = "  (%d unanswered)" % unans[kind] if unans.get(kind) else ""
            print("%-20s %-12s %5d %4d %7d %8.0f %9.1f %8.0f %8.0f %9.0f %9.0f %9.1f%s" % (
                p + "/" + kind, NAMES[d], turns[(d, p)], *row, extra))
print("ratios nsid-idmapd / rpc.idmapd (upcalls/s and up/cpu-s: higher is better; p99: lower is better):")
for p in PASSES:
    for kind in ("pipe", "chan"):
        a, b = res.get((p, kind, "nsid")), res.get((p, kind, "rpc"))
        if a and b and b[3] and b[5] and b[7]:
            print("  %-20s upcalls/s x%.2f   p99 x%.2f   upcalls per daemon CPU-second x%.2f" % (
                p + "/" + kind, a[3] / b[3], a[5] / b[5], a[7] / b[7]))
notes = []
for p in PASSES:
    if ("nsid", p) in traces:
        per = periodic(traces[("nsid", p)])
        if per:
            notes.append("  %-20s " % p + ", ".join(
                "%s x%d (max %.1f ms)" % ({"dm_ns_rescan": "rescan in the main thread", "nsid_netns_scan": "/proc scan",
                  "refresh_check": "passwd/group check"}.get(k, k),
                                         len(v), max(v) / 1000) for k, v in sorted(per.items())))
if notes:
    print("nsid-idmapd's periodic work during the passes (uprobes):")
    print("\n".join(notes))
if cpu_res:
    # If the guest's CPUs are saturated, upcalls/s = CPU capacity / guest CPU per upcall; the
    # part that is not the daemon's (the NFS client, knfsd, the workers, the kernel's side of
    # each upcall) stays whatever the daemon, so replacing rpc.idmapd by a daemon that costs
    # nothing at all gains at most (guest CPU per upcall) / (that part), end to end.
    print("the guest's CPU during the passes (all its CPUs; busy: share of their time; per upcall: us)")
    print("  %-14s %-12s %6s %10s %10s %10s %s" % ("pass", "daemon", "busy", "guest/up", "daemon/up",
                                                "other/up", "end-to-end gain possible over rpc.idmapd"))
    # (saturated passes only: their window starts once the workers are up, while a serial
    # pass's also holds the start of its worker's Python)
    for p in PASSES:
        for d in ("rpc", "nsid"):
            if not p.startswith("sat-") or (p, d) not in cpu_res:
                continue
            b, g, dm = cpu_res[(p, d)]
            bound = ""
            if d == "rpc" and g > dm > 0:
                bound = "at most x%.2f (a daemon of zero cost, if the guest stays CPU-bound)" % (g / (g - dm))
            print("  %-14s %-12s %5.0f%% %10.0f %10.0f %10.0f %s" % (p, NAMES[d], b * 100, g, dm, g - dm, bound))
