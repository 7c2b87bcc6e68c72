#!/usr/bin/env python3
"""Writes hot-functions.txt: the functions of gpumeter's release binary that the dashboard's loop runs.

The dashboard runs under valgrind's callgrind in a 200x60 tmux pane on the fake 8-GPU machine of
bench/overhead (64 GPU processes, 1 s refresh); what it executes after a warm-up, over a window
long enough to hold the slower cadences (settings every 10 s, the full /proc scan), is listed by
the instructions it ran, most first, then the start-up page drop's own functions (it runs again
a minute in). build.rs hands the list to lld, which puts those functions
side by side before .text (see README.md here). A name is written with its hashes as `*`
(legacy `17h<hash>E`, v0 crate disambiguators, LLVM's `.llvm.<n>` suffixes) where that still
names one function of the binary, so the list still matches after a dependency or profile change
renames every symbol; a generic's instances share a path, so those are written in full (with
only the `.llvm.<n>` suffix as `*`), lest one hot instance pull in all the cold ones.

  bench/code-order/record.py [--gpumeter target/release/gpumeter] [--warmup 25] [--seconds 70]
  bench/code-order/record.py --check   # how many listed names the built binary still has

Python 3 standard library, valgrind, tmux and nm.
"""

import argparse
import bisect
import collections
import fnmatch
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "overhead"))
import overhead  # noqa: E402  (the fake machine and the pane command)

LIST = os.path.join(HERE, "hot-functions.txt")
HEADER = re.compile(r"^(c?)(ob|fn|fl|fi|fe)=\((\d+)\)(?: (.*))?$")


def pattern(name):
    """A mangled name with what a rebuild may change in it as `*` (a glob the linker matches)."""
    name = re.sub(r"'\d+$", "", name)  # callgrind's mark for a recursive call
    name = re.sub(r"\.llvm\.\d+$", "", name)
    if name.startswith("_ZN"):
        return re.sub(r"17h[0-9a-f]{16}E$", "17h*", name)
    if name.startswith("_R"):
        return re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name) + "*"
    return name


def defined(binary):
    """Pattern -> [(name, address, size)] of the functions the binary defines."""
    out = collections.defaultdict(list)
    nm = subprocess.run(["nm", "-S", "--defined-only", binary], check=True,
                        capture_output=True, text=True).stdout
    for line in nm.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW":
            out[pattern(p[3])].append((p[3], int(p[0], 16), int(p[1], 16)))
    return out


def entry(name, symbols):
    """The list's line for one executed function: its pattern where that is unambiguous."""
    pat = pattern(name)
    if len(symbols.get(pat, ())) <= 1:
        return pat
    return re.sub(r"\.llvm\.\d+$", "", re.sub(r"'\d+$", "", name)) + "*"


def executed(path, binary):
    """Function name -> instructions run (self cost) in one callgrind dump, for `binary` only."""
    names = {"ob": {}, "fn": {}}
    cost = collections.Counter()
    obj = fn = None
    after_calls = False
    with open(path, errors="replace") as f:
        for line in f:
            m = HEADER.match(line.rstrip("\n"))
            if m:
                callee, kind, ident, name = m.groups()
                if kind in names and name is not None:
                    names[kind][ident] = name
                if not callee and kind == "ob":
                    obj = names["ob"].get(ident)
                if not callee and kind == "fn":
                    fn = names["fn"].get(ident)
                continue
            if line.startswith("calls="):
                after_calls = True  # the next cost line is the call's inclusive cost
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                if after_calls:
                    after_calls = False
                    continue
                parts = line.split()
                if fn and obj and os.path.realpath(obj) == binary and len(parts) > 1:
                    cost[fn] += int(parts[1])
    return cost


def record(args):
    binary = os.path.realpath(args.gpumeter)
    lib_dir = args.lib_dir
    if not lib_dir:
        lib_dir = subprocess.run([os.path.join(ROOT, "scripts", "fake-nvml.sh"),
                                  os.path.join(ROOT, "target", "bench-overhead", "fake-nvml")],
                                 check=True, capture_output=True, text=True).stdout.strip()
    work = tempfile.mkdtemp(prefix="code-order-")
    machine = overhead.Machine(work, 8, 64)
    out = os.path.join(work, "callgrind")
    env = dict(os.environ, GPUMETER_FAKE_NVML_SCENARIO=machine.scenario, HOME=work,
               XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_STATE_HOME=os.path.join(work, "state"))
    argv = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}.%p",
            binary, "--nvml-lib", os.path.join(lib_dir, "libnvidia-ml.so.1"), "--no-ledger",
            "--interval", "1s"]
    overhead.TMUX_SOCKET = f"gpumeter-code-order-{os.getpid()}"
    try:
        r = overhead.tmux("new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", "order",
                          "-x", str(overhead.COLS), "-y", str(overhead.ROWS),
                          overhead.pane_cmd(argv, env))
        pid = r.stdout.strip()
        time.sleep(args.warmup)
        # Each dump zeroes the counters: the first holds start-up, the second the loop.
        subprocess.run(["callgrind_control", "-d", "start-up", pid], check=True, capture_output=True)
        time.sleep(args.seconds)
        subprocess.run(["callgrind_control", "-d", "loop", pid], check=True, capture_output=True)
    finally:
        overhead.tmux("kill-server", check=False)
        machine.close()
    cost = executed(f"{out}.{pid}.2", binary)
    symbols = defined(binary)
    hot = collections.Counter()
    for name, n in cost.items():
        hot[entry(name, symbols)] += n
    # The start-up page drop (src/residency.rs) runs again a minute in: its own functions,
    # run by start-up only, would fault their windows back in after it.
    for name, n in executed(f"{out}.{pid}.1", binary).items():
        if "9residency" in name:
            hot[entry(name, symbols)] += 0
    names = [name for name, _ in hot.most_common()]
    if not names:
        sys.exit("code-order: callgrind saw nothing of gpumeter run: is the binary the one started?")
    # A dashboard that stopped drawing (it exited, or never got its pane) leaves a dump of a few
    # functions; written out, that list would drop the whole order. A tick runs ~0.4 M of
    # gpumeter's own instructions, so far less than 0.1 M a second means no loop ran.
    ran = sum(hot.values())
    if ran < 100_000 * args.seconds:
        sys.exit(f"code-order: callgrind saw only {ran} instructions of gpumeter in "
                 f"{args.seconds:.0f} s ({len(names)} functions): the loop did not run; "
                 f"{os.path.relpath(LIST, ROOT)} is left as it was")
    if args.keep and os.path.exists(LIST):
        # A recording on a loaded machine sees fewer ticks: keep what an earlier one listed.
        names += [n for n in (line.strip() for line in open(LIST)) if n and n not in hot]
    # After the loop's functions, each generic's path with its hash as `*`: a generic written
    # in full no longer matches once a dependency change renames it, and then this line keeps
    # its instances together (with their cold siblings, at the end, where nothing else is).
    fallback = [pattern(n) for n in names if n.startswith("_ZN") and not n.endswith("17h*")]
    names += [n for n in dict.fromkeys(fallback) if n not in names]
    with open(LIST, "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"code-order: {len(names)} functions, {sum(hot.values())} instructions in "
          f"{args.seconds:.0f} s -> {os.path.relpath(LIST, ROOT)}")


def check(args):
    """How many listed functions the binary has, and their pages: a list gone stale shows here."""
    table = sorted((name, a, s) for group in defined(args.gpumeter).values() for name, a, s in group)
    keys = [name for name, _, _ in table]
    names = [line.strip() for line in open(LIST) if line.strip()]
    found = []
    matched = 0
    for line in names:
        # The linker's glob on the section name, here on the symbol name: text before the
        # first `*` is a prefix, so only the names sharing it are matched.
        prefix = line.split("*", 1)[0]
        i = bisect.bisect_left(keys, prefix)
        hits = []
        while i < len(keys) and keys[i].startswith(prefix):
            if fnmatch.fnmatchcase(keys[i], line):
                hits.append(table[i][1:])
            i += 1
        matched += bool(hits)
        found += hits
    pages = {a // 4096 + i for a, s in found for i in range((a % 4096 + max(s, 1) - 1) // 4096 + 1)}
    print(f"code-order: {matched} of {len(names)} listed functions are in {args.gpumeter} "
          f"({len(found)} symbols, {sum(s for _, s in found) // 1024} KiB on {len(pages)} pages, "
          f"{len({p // 16 for p in pages})} of 64 KiB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpumeter", default=os.path.join(ROOT, "target", "release", "gpumeter"))
    ap.add_argument("--lib-dir", help="folder with the fake libnvidia-ml.so.1 (default: build it)")
    ap.add_argument("--warmup", type=float, default=25, help="seconds of start-up not listed")
    ap.add_argument("--seconds", type=float, default=70, help="seconds of the loop listed")
    ap.add_argument("--check", action="store_true", help="only report the list's coverage")
    ap.add_argument("--keep", action="store_true",
                    help="also keep the functions the list already has (after the new ones)")
    args = ap.parse_args()
    (check if args.check else record)(args)


if __name__ == "__main__":
    main()
