#!/usr/bin/env python3
"""Start-up cost of two kpipe binaries, alternating (benchmarks/RESULTS.md,
"Badger out of the kpipe binary").

    python3 benchmarks/startcost/alternate.py ROUNDS ROOT BASE_BIN NEW_BIN CACHE_DIR

Each round runs `kpipe version` and a warm `kpipe build ROOT` once with each
binary, the order swapped every round. CPU is user+sys of the child (wait4's
rusage), wall the time from fork to reap; medians, and the median of the
paired differences (same round). Each binary has its own cache directory
under CACHE_DIR (warmed by five runs first)."""
import os, sys, time, statistics

rounds = int(sys.argv[1]); root = sys.argv[2]
bins = {"main": sys.argv[3], "split": sys.argv[4]}
cache = sys.argv[5]
def cmds(b, name):
    return {"version": [b, "version"],
            "build (warm)": [b, "build", root, "--cache-dir", os.path.join(cache, name)]}
def one(argv):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
        os.execv(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0, argv
    return ru.ru_utime + ru.ru_stime, wall
res = {}
for name, b in bins.items():
    for c, argv in cmds(b, name).items():
        for _ in range(5): one(argv)  # warm the cache and the page cache
for r in range(rounds):
    order = list(bins.items())
    if r % 2: order.reverse()
    for c in ["version", "build (warm)"]:
        for name, b in order:
            cpu, wall = one(cmds(b, name)[c])
            res.setdefault((c, name), []).append((cpu, wall))
print("| command | main CPU (ms, median) | split CPU | split/main CPU | main wall (ms, median) | split wall | split/main wall |")
print("|---|---|---|---|---|---|---|")
for c in ["version", "build (warm)"]:
    m = res[(c, "main")]; s = res[(c, "split")]
    mc = statistics.median(x[0] for x in m)*1e3; sc = statistics.median(x[0] for x in s)*1e3
    mw = statistics.median(x[1] for x in m)*1e3; sw = statistics.median(x[1] for x in s)*1e3
    print(f"| `kpipe {c}` | {mc:.1f} | {sc:.1f} | {sc/mc:.2f} | {mw:.1f} | {sw:.1f} | {sw/mw:.2f} |")
# paired differences (split - main), same round
for c in ["version", "build (warm)"]:
    d = [s[0]-m[0] for m, s in zip(res[(c,"main")], res[(c,"split")])]
    dw = [s[1]-m[1] for m, s in zip(res[(c,"main")], res[(c,"split")])]
    print(f"{c}: paired median difference split-main: CPU {statistics.median(d)*1e3:+.2f} ms, wall {statistics.median(dw)*1e3:+.2f} ms ({rounds} rounds)")
