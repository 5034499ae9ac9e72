#!/usr/bin/env python3
"""build-all, diff and the warm paths of two kpipe binaries, alternating
(benchmarks/RESULTS.md, "The default build is the fast build"): that a
change to start-up made none of them slower.

    python3 benchmarks/startcost/paths.py ROUNDS TREE REPO REV BASE_BIN NEW_BIN WORK

Each round runs, with each binary (the order swapped every round), on the
kustomization tree TREE:

  - `kpipe build-all TREE --no-cache` (cold, nothing written);
  - `kpipe build-all TREE --out-dir OUT` with an empty cache;
  - the same again, nothing changed (warm);
  - `kpipe build` of every root of TREE, one process each, warm (the loop
    a script or a GitOps server runs), timed as one;

and, in the git repository REPO, `kpipe diff --base REV --head HEAD` with the
cache an earlier run of it filled. Each binary has its own cache directory
under WORK. CPU is user+sys of the children (wait4's rusage), wall the time
from spawn to reap; medians over the rounds, and the median of the paired
(same-round) ratios new/base. Roots are the directories with a
kustomization file whose warm `kpipe build` succeeds with the base binary."""
import os, shutil, statistics, subprocess, sys, time

rounds = int(sys.argv[1]); tree, repo, rev = sys.argv[2], sys.argv[3], sys.argv[4]
bins = {"base": sys.argv[5], "new": sys.argv[6]}
work = sys.argv[7]
devnull = os.open(os.devnull, os.O_WRONLY)


def run(argv, env, cwd=None):
    """Runs argv in cwd (output discarded); returns (wall, cpu, exit status)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=devnull, stderr=devnull)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, p.returncode


def env_for(name):
    return dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "xdg-" + name))


roots = []
for d, dirs, files in os.walk(tree):
    dirs[:] = sorted(x for x in dirs if not x.startswith("."))
    if {"kustomization.yaml", "kustomization.yml", "Kustomization"} & set(files):
        roots.append(d)
roots.sort()
# The roots both binaries build (warmed here, with each binary's cache).
built = []
for r in roots:
    if all(run([b, "build", r], env_for(n))[2] == 0 for n, b in bins.items()):
        built.append(r)
for n, b in bins.items():  # the diff's cache, filled once
    run([b, "diff", "--base", rev, "--head", "HEAD"], env_for(n), cwd=repo)
print(f"{len(roots)} kustomizations in {tree}, {len(built)} built by both", flush=True)

scenarios = ["build-all --no-cache", "build-all, empty cache", "build-all, warm", f"{len(built)} x build, warm", "diff, warm cache"]
res = {}
for r in range(rounds):
    order = list(bins.items())
    if r % 2:
        order.reverse()
    for s in scenarios:
        for name, b in order:
            env = env_for(name)
            out = os.path.join(work, "out-" + name)
            if s == "build-all --no-cache":
                m = run([b, "build-all", tree, "--no-cache"], env)
            elif s == "build-all, empty cache":
                cache = os.path.join(work, "cold-" + name)
                shutil.rmtree(cache, ignore_errors=True)
                shutil.rmtree(out, ignore_errors=True)
                m = run([b, "build-all", tree, "--cache-dir", cache, "--out-dir", out], env)
            elif s == "build-all, warm":
                m = run([b, "build-all", tree, "--cache-dir", os.path.join(work, "cold-" + name), "--out-dir", out], env)
            elif s.endswith("x build, warm"):
                wall = cpu = 0.0
                for root in built:
                    w, c, _ = run([b, "build", root], env)
                    wall, cpu = wall + w, cpu + c
                m = (wall, cpu, 0)
            else:
                m = run([b, "diff", "--base", rev, "--head", "HEAD"], env, cwd=repo)
            # build-all exits 1 when some roots fail (remote bases): the
            # same roots fail with both binaries.
            res.setdefault((s, name), []).append(m)
print("| scenario | base wall (median) | new wall | new/base (paired median) | base CPU | new CPU | new/base CPU |")
print("|---|---|---|---|---|---|---|")
for s in scenarios:
    b, n = res[(s, "base")], res[(s, "new")]
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    pw = statistics.median(y[0] / x[0] for x, y in zip(b, n))
    pc = statistics.median(y[1] / x[1] for x, y in zip(b, n))
    print(f"| {s} | {med(b,0)*1e3:.1f} ms | {med(n,0)*1e3:.1f} ms | {pw:.3f} | {med(b,1)*1e3:.1f} ms | {med(n,1)*1e3:.1f} ms | {pc:.3f} |")
    codes = {x[2] for x in b} | {x[2] for x in n}
    if len(codes) > 1:
        print(f"  (exit statuses differ: {sorted(codes)})")
