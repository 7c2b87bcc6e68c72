#!/usr/bin/env python3
"""Writes hot-symbols.txt: the functions of gpumeter's release binary that the dashboard's loop runs.

The dashboard runs under valgrind's callgrind in a 200x60 tmux pane on the fake 8-GPU machine of
bench/overhead (64 GPU processes, 1 s refresh); what it executes after a warm-up, over a window
long enough to hold the slower cadences (settings every 10 s, the full /proc scan), is listed by
the instructions it ran, most first. build.rs hands the list to lld, which puts those functions
side by side at the start of .text (see README.md here).

  bench/code-order/record.py [--gpumeter target/release/gpumeter] [--warmup 25] [--seconds 70]
  bench/code-order/record.py --check   # how many listed names the built binary still has

Python 3 standard library, valgrind, tmux and nm.
"""

import argparse
import collections
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

LIST = os.path.join(HERE, "hot-symbols.txt")
HEADER = re.compile(r"^(c?)(ob|fn|fl|fi|fe)=\((\d+)\)(?: (.*))?$")


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
    # A name with a ' suffix is callgrind's mark for a recursive call of the same function.
    hot = collections.Counter()
    for name, n in cost.items():
        hot[re.sub(r"'\d+$", "", name)] += n
    names = [name for name, _ in hot.most_common()]
    if not names:
        sys.exit("code-order: callgrind saw nothing of gpumeter run: is the binary the one started?")
    with open(LIST, "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"code-order: {len(names)} functions, {sum(hot.values())} instructions in "
          f"{args.seconds:.0f} s -> {os.path.relpath(LIST, ROOT)}")


def check(args):
    """How many listed names the binary defines, and their pages: a list gone stale shows here."""
    defined = {}
    nm = subprocess.run(["nm", "-S", "--defined-only", args.gpumeter], check=True,
                        capture_output=True, text=True).stdout
    for line in nm.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW":
            defined[p[3]] = (int(p[0], 16), int(p[1], 16))
    names = [line.strip() for line in open(LIST) if line.strip()]
    found = [defined[n] for n in names if n in defined]
    pages = {a // 4096 + i for a, s in found for i in range((a % 4096 + max(s, 1) - 1) // 4096 + 1)}
    print(f"code-order: {len(found)} of {len(names)} listed functions are in {args.gpumeter} "
          f"({sum(s for _, s in found) // 1024} KiB on {len(pages)} pages)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpumeter", default=os.path.join(ROOT, "target", "release", "gpumeter"))
    ap.add_argument("--lib-dir", help="folder with the fake libnvidia-ml.so.1 (default: build it)")
    ap.add_argument("--warmup", type=float, default=25, help="seconds of start-up not listed")
    ap.add_argument("--seconds", type=float, default=70, help="seconds of the loop listed")
    ap.add_argument("--check", action="store_true", help="only report the list's coverage")
    args = ap.parse_args()
    (check if args.check else record)(args)


if __name__ == "__main__":
    main()
