#!/usr/bin/env python3
"""Folds a `perf record -g` profile by our types: each sample is charged to the innermost
Courier / CourierEngine frame on its stack; prints thread roles, self and inclusive percentages
per type, self per function, and (third argument, comma-separated prefixes) the direct callees
of the given functions. Usage: perf-by-type.py PERF.DATA [TOP] [Courier.Type.function,...]
(PIDS=pid,... to keep some processes only)."""
import sys, re, subprocess, collections
path = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
import os
pidf = os.environ.get("PIDS")
raw = subprocess.run(["perf", "script", "-i", path, "-F", "comm,ip,sym"] + (["--pid", pidf] if pidf else []), capture_output=True, text=True).stdout
samples = []
cur = None
for line in raw.splitlines():
    if not line.strip():
        if cur is not None: samples.append(cur); cur = None
        continue
    if not line.startswith("\t") and not line.startswith(" " * 8):
        cur = {"comm": line.strip(), "frames": []}
        continue
    parts = line.strip().split(None, 1)
    sym = parts[1] if len(parts) > 1 else "?"
    if cur is not None: cur["frames"].append(sym)
if cur is not None: samples.append(cur)
mang = re.compile(r"^\$s(7Courier|13CourierEngine)(\d+)")
def demangle(f):
    m = mang.match(f)
    if not m: return f
    mod = "Courier" if m.group(1) == "7Courier" else "CourierEngine"
    i = m.end(2); n = int(m.group(2)); name = f[i:i+n]; rest = f[i+n:]
    member = ""
    m2 = re.match(r"^[CVOP](\d+)", rest)
    if m2:
        k = int(m2.group(1)); member = "." + rest[m2.end(1):m2.end(1)+k]
    elif re.match(r"^[CVOP]", rest): member = "." + rest[1:12]
    return f"{mod}.{name}{member}"
dem = {f: demangle(f) for s in samples for f in s["frames"]}
ours = re.compile(r"\b(Courier|CourierEngine)\.")
def typeof(d):
    # strip generic sig, closure prefixes
    d = re.sub(r"^(closure #\d+ |partial apply for |merged |specialized |reabstraction thunk helper |implicit closure #\d+ |thunk for |outlined |generic specialization <[^>]*> of |in )+", "", d)
    m = re.search(r"\b((?:Courier|CourierEngine)\.[A-Za-z0-9_]+)", d)
    return m.group(1) if m else None
def fn(d):
    return d[:110]
N = len(samples)
def role(fr):
    j = " ".join(fr[-12:])
    if "SelectableEventLoop" in j and "swift_job_run" not in " ".join(fr): return "event loop"
    if "swift_job_run" in " ".join(fr): return "Swift task (cooperative pool)"
    if "_dispatch" in j: return "dispatch queue"
    return "main/other"
rolec = collections.Counter(role(s["frames"]) for s in samples)
selfc = collections.Counter(); incl = collections.Counter(); fself = collections.Counter(); fincl = collections.Counter()
for s in samples:
    fr = s["frames"]
    kernel = bool(fr) and fr[0].startswith(("finish_task_switch", "_raw_spin", "__schedule", "schedule")) 
    owner = None
    for f in fr:
        d = dem.get(f, f)
        if ours.search(d):
            owner = typeof(d) or "?"; fself[fn(d)] += 1; break
    if owner is None:
        if kernel: owner = "(kernel: scheduler / wakeups, outside our frames)"
        elif any("NIOSSLContext" in f for f in fr): owner = "(NIOSSL context: system CA load)"
        elif any("_dispatch" in f for f in fr): owner = "(dispatch, outside our frames)"
        elif any("NIOPosix" in f for f in fr): owner = "(NIO event loop, outside our frames)"
        else: owner = "(other)"
    selfc[owner] += 1
    seen = set(); seenf = set()
    for f in fr:
        d = dem.get(f, f)
        if ours.search(d):
            t = typeof(d)
            if t: seen.add(t)
            seenf.add(fn(d))
    for t in seen: incl[t] += 1
    for t in seenf: fincl[t] += 1
print(f"samples: {N} (perf cpu-clock; % of all samples of the process)")
print("\n== by thread role (from the outermost frames) ==")
for k, v in rolec.most_common(): print(f"{100*v/N:6.2f}%  {k}")
print("\n== self: innermost frame of our code, by type (what runs below it is charged to it) ==")
for k, v in selfc.most_common(top): print(f"{100*v/N:6.2f}%  {k}")
print("\n== inclusive: samples with the type anywhere on the stack ==")
for k, v in incl.most_common(top): print(f"{100*v/N:6.2f}%  {k}")
print("\n== self by function (innermost of our frames) ==")
for k, v in fself.most_common(top): print(f"{100*v/N:6.2f}%  {k}")

if len(sys.argv) > 3:
    for target in sys.argv[3].split(","):
        below = collections.Counter(); tot = 0
        for s in samples:
            fr = s["frames"]
            for idx, f in enumerate(fr):
                d = dem.get(f, f)
                if ours.search(d):
                    if d.startswith(target):
                        tot += 1
                        # the frames inside it, innermost-last: take the leaf and the child frame
                        child = fr[idx-1] if idx > 0 else "(self)"
                        below[child[:120]] += 1
                    break
        print(f"\n== {target}: {100*tot/N:.2f}% self-attributed; direct callees ==")
        for k, v in below.most_common(15): print(f"{100*v/N:6.2f}%  {k}")
