#!/usr/bin/env python3
"""Native sanity check of the gorr test corpus (no gorr involved).

Builds every program listed in manifest.json (or only the names given on the
command line), runs each one twice natively in fresh scratch directories and
checks that: the exit status / signal matches the manifest, stdout ends with
EXIT-SUCCESS (unless the program is expected to die from a signal), the run is
fast, and the two runs print different output (so replay cannot be faked by
simply re-running the program).

Usage: python3 testdata/run_native.py [-v] [--one-cpu] [NAME...]
  -v         print the output of both runs
  --one-cpu  run the programs pinned to CPU 0 (taskset), the way a recorder
             that serializes all threads would run them
"""
import json, os, shutil, signal, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build(entry, bindir):
    name, lang = entry["name"], entry["lang"]
    out = os.path.join(bindir, name)
    if lang == "c":
        cmd = ["gcc", "-O1", "-g", "-pthread", "-o", out, os.path.join(HERE, "c", name + ".c")] + entry.get("ldflags", [])
        cwd = HERE
    else:
        cmd = ["go", "build", "-o", out, "./testdata/go/" + name]
        cwd = ROOT
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    return out, r.stderr


ONE_CPU = False


def run_once(entry, binpath):
    scratch = tempfile.mkdtemp(prefix="gorr-native-")
    try:
        if entry.get("setup"):
            subprocess.run(entry["setup"], shell=True, cwd=scratch, check=True)
        stdin = entry.get("stdin")
        t0 = time.monotonic()
        prefix = ["taskset", "-c", "0"] if ONE_CPU else []
        p = subprocess.run(prefix + [binpath] + entry.get("args", []), cwd=scratch, capture_output=True,
                           input=stdin.encode() if stdin is not None else None,
                           stdin=None if stdin is not None else subprocess.DEVNULL, timeout=20)
        dt = time.monotonic() - t0
        return p, dt
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check(entry, bindir, verbose):
    problems = []
    binpath, err = build(entry, bindir)
    if binpath is None:
        return ["build failed: " + err.strip()[:2000]], None
    if err.strip():
        problems.append("build warnings: " + err.strip()[:500])
    runs = [run_once(entry, binpath) for _ in range(2)]
    exp_sig = entry.get("signal")
    exp_exit = entry.get("exit", 0)
    for i, (p, dt) in enumerate(runs):
        if exp_sig:
            if p.returncode != -exp_sig:
                problems.append(f"run{i}: status {p.returncode}, want signal {exp_sig}")
        elif p.returncode != exp_exit:
            problems.append(f"run{i}: exit {p.returncode}, want {exp_exit}")
        if not exp_sig and not p.stdout.rstrip().endswith(b"EXIT-SUCCESS"):
            problems.append(f"run{i}: stdout does not end with EXIT-SUCCESS")
        if dt > 1.0:
            problems.append(f"run{i}: took {dt:.3f}s")
    (a, _), (b, _) = runs
    if a.stdout == b.stdout and a.stderr == b.stderr:
        problems.append("two runs printed identical output")
    return problems, runs


def main():
    args = sys.argv[1:]
    global ONE_CPU
    verbose = "-v" in args
    ONE_CPU = "--one-cpu" in args
    names = [a for a in args if a not in ("-v", "--one-cpu")]
    with open(os.path.join(HERE, "manifest.json")) as f:
        manifest = json.load(f)
    known = {e["name"] for e in manifest}
    for n in names:
        if n not in known:
            lang = "c" if os.path.exists(os.path.join(HERE, "c", n + ".c")) else "go"
            manifest.append({"name": n, "lang": lang})
    bindir = tempfile.mkdtemp(prefix="gorr-native-bin-")
    failed = passed = 0
    for entry in manifest:
        if names and entry["name"] not in names:
            continue
        problems, runs = check(entry, bindir, verbose)
        times = " ".join(f"{dt*1000:.0f}ms" for _, dt in runs) if runs else "-"
        if problems:
            failed += 1
            print(f"FAIL {entry['lang']} {entry['name']} [{times}]")
            for pr in problems:
                print("     " + pr)
        else:
            passed += 1
            print(f"ok   {entry['lang']} {entry['name']} [{times}]")
        if verbose and runs:
            for i, (p, _) in enumerate(runs):
                print(f"--- run{i} status={p.returncode} stdout:\n{p.stdout.decode(errors='replace')}")
                if p.stderr:
                    print(f"--- run{i} stderr:\n{p.stderr.decode(errors='replace')}")
    shutil.rmtree(bindir, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
