#!/usr/bin/env python3
"""Side-by-side overhead of GPU monitors on one fake-NVML machine (see README.md here).

Every monitor runs its TUI in a tmux pane (200x60, 1 s refresh) against the same scenario: the fake
libnvidia-ml (crates/fake-nvml) reports GPU processes whose pids are real sleeping processes this
script spawns (some with worker children), beside N extra idle host processes. Per run it records
the CPU seconds of the monitor's process tree (each process's CPU-time clock: ns, all threads, exited
ones included; 10 ms utime+stime ticks where that clock cannot be read), the split by thread, steady
and peak RSS and threads. Time to first frame is taken apart from those runs, in a pseudo-terminal
this script reads itself (every byte timestamped as it arrives, no screen polling): from the spawn
to the first visible text (first paint) and to the first GPU name (first data). Monitors alternate
over rounds; the report gives medians and gpumeter's ratio to each peer.

Python 3 standard library only. Run it through run.sh, which builds and finds the monitors.
"""

import argparse
import collections
import fcntl
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import struct
import tempfile
import termios
import time

PAGE = os.sysconf("SC_PAGE_SIZE")
HZ = os.sysconf("SC_CLK_TCK")
GPU_NAME = "NVIDIA H100 80GB HBM3"
MARKER = "H100"  # what shows once a monitor draws GPU data
COLS, ROWS = 200, 60


# ---------------------------------------------------------------- /proc readings

def stat_fields(path):
    """The fields of a /proc stat file after the command name, or None once it is gone."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    # fields[0] is state (field 3); utime is field 14 -> index 11.
    return text[text.rindex(")") + 2:].split()


def proc_stat(pid):
    """(utime+stime+cutime+cstime in ticks, threads) of one pid, or None once it is gone."""
    fields = stat_fields(f"/proc/{pid}/stat")
    if fields is None:
        return None
    return sum(int(x) for x in fields[11:15]), int(fields[17])


def cpu_clock(pid):
    """The pid's process CPU-time clock, as clock_getcpuclockid(3) makes it (CPUCLOCK_SCHED)."""
    return ((~pid) << 3) | 2


def clock_cpu_s(pid):
    """CPU seconds of one process from its CPU-time clock, or None (gone, or no such clock).

    The kernel sums the precise runtime (sum_exec_runtime, ns) of every thread, exited ones
    included: the figure utime+stime rounds to 10 ms clock ticks, without the rounding.
    """
    try:
        return time.clock_gettime(cpu_clock(pid))
    except (OSError, OverflowError):
        return None


def clock_works():
    """Whether another process's CPU-time clock can be read here (Linux can; others may not)."""
    p = subprocess.Popen(["sleep", "5"])
    try:
        return clock_cpu_s(p.pid) is not None
    finally:
        p.kill()
        p.wait()


# "clock" (ns, all threads) unless the clock cannot be read: then "ticks" (utime+stime, 10 ms).
CPU_METHOD = "clock"
CPU_METHODS = {
    "clock": "the process CPU-time clock (clock_gettime on each pid's CPUCLOCK_SCHED: the kernel's "
             "runtime of all its threads in ns, exited ones included) plus reaped "
             "children's cutime+cstime (10 ms ticks; none of the monitors here forks any)",
    "ticks": "utime+stime+cutime+cstime from /proc/<pid>/stat in 10 ms clock ticks (the CPU-time "
             "clock could not be read here): 0.02 s/min resolution in 30 s",
}


def tree_ticks_s(pid):
    """The old figure, kept beside the clock's in results.json: utime+stime+cutime+cstime ticks."""
    return sum((proc_stat(p) or (0, 0))[0] for p in tree(pid)) / HZ


def own_cpu_s(pid):
    """CPU seconds of pid alone (its threads, and its reaped children), or None once gone."""
    st = proc_stat(pid)
    if st is None:
        return None
    if CPU_METHOD == "clock":
        own = clock_cpu_s(pid)
        fields = stat_fields(f"/proc/{pid}/stat")
        if own is not None and fields is not None:
            return own + sum(int(x) for x in fields[13:15]) / HZ
    return st[0] / HZ


def threads_cpu_s(pid):
    """CPU seconds of pid's own threads, exited ones included (no children), or None."""
    if CPU_METHOD == "clock":
        v = clock_cpu_s(pid)
        if v is not None:
            return v
    fields = stat_fields(f"/proc/{pid}/stat")
    return None if fields is None else (int(fields[11]) + int(fields[12])) / HZ


def thread_cpu(pid):
    """{tid: (name, CPU seconds)} of pid's live threads: schedstat's ns runtime, else stat ticks."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            with open(f"{base}/comm") as f:
                name = f.read().strip() + (" (main)" if tid == str(pid) else "")
        except OSError:
            continue
        try:
            with open(f"{base}/schedstat") as f:
                out[tid] = (name, int(f.read().split()[0]) / 1e9)
                continue
        except (OSError, ValueError, IndexError):
            pass
        fields = stat_fields(f"{base}/stat")
        if fields is not None:
            out[tid] = (name, (int(fields[11]) + int(fields[12])) / HZ)
    return out


def thread_split(before, after, total_s, window_s):
    """CPU s/min per thread name over a window; threads gone by its end go under "(exited)"."""
    per = {}
    for tid, (name, s1) in after.items():
        s0 = before.get(tid, (name, 0.0))[1]
        per[name] = per.get(name, 0.0) + (s1 - s0)
    rest = total_s - sum(per.values())
    if rest > 0.0005 * window_s:  # more than 0.5 ms a second unaccounted: a thread exited
        per["(exited)"] = rest
    return {k: v * 60.0 / window_s for k, v in sorted(per.items(), key=lambda kv: -kv[1])}


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def tree(pid):
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(children(p))
    return seen


def tree_cpu_s(pid):
    """CPU seconds of pid and its live descendants (reaped children count through cutime)."""
    total = 0.0
    for p in tree(pid):
        v = own_cpu_s(p)
        if v is not None:
            total += v
    return total


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def anon_kib(pid):
    """Anonymous memory (heap, stacks, buffers): what the monitor holds beyond shared code."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Anonymous:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


# What a monitor costs the box is its private memory, not its RSS: RSS counts the clean,
# file-backed pages of code and libraries that the kernel drops and rereads at will, and counts
# a page shared with other processes whole in each. Sampled from smaps_rollup over the steady
# half of a run, beside VmRSS. smaps_rollup key -> results.json key.
SMAPS_KEYS = {"Pss": "pss_kib", "Pss_Anon": "pss_anon_kib", "Private_Dirty": "private_dirty_kib",
              "Private_Clean": "private_clean_kib"}


def smaps_kib(pid):
    """{smaps_rollup key: KiB} of SMAPS_KEYS, a key this kernel lacks left out; None once gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in SMAPS_KEYS:
                    out[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return out


# The smaps_rollup keys this kernel has (Pss_Anon is 5.9+, smaps_rollup itself 4.14+): a figure
# it cannot give reads N/A in the report, never 0. Set in main().
SMAPS_HAS = set()


def smaps_steady(samples):
    """{results.json key: median KiB} over the second half of smaps_kib() samples (None: none)."""
    half = samples[len(samples) // 2:]
    out = {}
    for key, name in SMAPS_KEYS.items():
        vals = [s[key] for s in half if key in s]
        out[name] = statistics.median(vals) if vals else None
    return out


def smaps_lacks(name):
    """Whether this kernel's smaps_rollup has no field for results.json key `name`."""
    return not any(n == name and k in SMAPS_HAS for k, n in SMAPS_KEYS.items())


def fmt_smaps(v, name, digits=1):
    """A smaps_rollup figure in MiB; N/A where this kernel has no such field, – where unsampled."""
    return "N/A" if smaps_lacks(name) else fmt(kib_mib(v), digits=digits)


def proc_count():
    return sum(1 for n in os.listdir("/proc") if n.isdigit())


# ---------------------------------------------------------------- the machine

class Machine:
    """The sleeping GPU processes, the idle host processes and the scenario naming them."""

    def __init__(self, workdir, gpus, gpu_procs, workers_every=4, workers=4):
        self.workdir = workdir
        self.gpu_leaders = []
        self.host = []
        for i in range(gpu_procs):
            if workers and i % workers_every == 0:
                # A trainer with dataloader-like workers: sh is the GPU process, sleeps its children.
                script = " ".join(["sleep 1000000 &"] * workers) + " wait"
                p = subprocess.Popen(["sh", "-c", script], start_new_session=True)
            else:
                p = subprocess.Popen(["sleep", "1000000"], start_new_session=True)
            self.gpu_leaders.append(p)
        self.scenario = os.path.join(workdir, f"scenario-{gpus}g-{gpu_procs}p.toml")
        with open(self.scenario, "w") as f:
            f.write(scenario_toml(gpus, [p.pid for p in self.gpu_leaders]))
        self.gpus = gpus

    def set_host_procs(self, n):
        while len(self.host) > n:
            p = self.host.pop()
            p.kill()
            p.wait()
        while len(self.host) < n:
            self.host.append(subprocess.Popen(["sleep", "1000000"]))

    def close(self):
        self.set_host_procs(0)
        for p in self.gpu_leaders:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the leader and its workers, by group id
            except ProcessLookupError:
                pass
            p.wait()


def scenario_toml(gpus, pids):
    out = [
        'name = "overhead"',
        f'description = "bench/overhead: {gpus} GPUs, {len(pids)} GPU processes with real pids"',
        'driver_version = "550.90.07"',
        'cuda_driver_version = "12.4"',
        "seed = 5",
        "",
        "[host]",
        "cpu_count = 2",
        "mem_total_gib = 24",
        "",
        "[[gpu]]",
        f"count = {gpus}",
        f'name = "{GPU_NAME}"',
        "memory_total_bytes = 85520809984",
        "power_limit_watts = 700",
        "clock_sm_max_mhz = 1980",
        "clock_memory_max_mhz = 2619",
        "pcie_gen_max = 5",
        "pcie_width_max = 16",
        "phase_step_s = 0.37",
        "util_gpu_pct = { sine = { min = 60, max = 99, period_s = 11 }, noise = 2 }",
        "util_memory_pct = { sine = { min = 30, max = 58, period_s = 11 }, noise = 3 }",
        "power_watts = { sine = { min = 400, max = 690, period_s = 11 }, noise = 8 }",
        "temperature_c = { sine = { min = 60, max = 71, period_s = 120 }, noise = 1 }",
        "clock_sm_mhz = { sine = { min = 1800, max = 1980, period_s = 11 }, noise = 15 }",
        "clock_memory_mhz = { const = 2619 }",
        "pcie_rx_mb_per_s = { const = 900, noise = 50 }",
        "pcie_tx_mb_per_s = { const = 180, noise = 40 }",
        "fan_speed_pct = { const = 40 }",
        "encoder_util_pct = { const = 0 }",
        "decoder_util_pct = { const = 0 }",
        "",
    ]
    for i, pid in enumerate(pids):
        out += [
            "[[process]]",
            f"pid = {pid}",
            'name = "python"',
            "gpus = [{ gpu = %d, memory_gib = { const = %.1f }, sm_util_pct = { const = 40, noise = 5 },"
            " mem_util_pct = { const = 10 } }]" % (i % gpus, 1.0 + (i % 7)),
            "",
        ]
    return "\n".join(out)


# ---------------------------------------------------------------- monitors

def monitors(args, lib_dir):
    """name -> argv, for every monitor found (and a note for each one skipped)."""
    found, notes = {}, []
    lib1 = os.path.join(lib_dir, "libnvidia-ml.so.1")
    found["gpumeter"] = [args.gpumeter, "--nvml-lib", lib1, "--no-ledger", "--interval", "1s"]
    if args.nvtop:
        found["nvtop"] = [args.nvtop, "-d", "10"]
    else:
        notes.append("nvtop: skipped (set NVTOP to a binary; bench/overhead/build-nvtop.sh builds one)")
    if args.all_smi:
        found["all-smi"] = [args.all_smi, "local", "--interval", "1"]
    else:
        notes.append("all-smi: skipped (not installed)")
    if args.venv:
        found["nvitop"] = [os.path.join(args.venv, "bin", "nvitop"), "--interval", "1"]
        found["gpustat"] = [os.path.join(args.venv, "bin", "gpustat"), "-i", "1", "-a"]
    else:
        notes.append("nvitop, gpustat: skipped (no venv)")
    if args.headless:
        # Headless in the same rounds as the peers: their ratio to nvtop is then one run's.
        found["gpumeter-watch"] = [args.gpumeter, "watch"] + found["gpumeter"][1:]
        found["gpumeter-serve"] = ([args.gpumeter, "serve"] + found["gpumeter"][1:]
                                   + ["--listen", "127.0.0.1:19959"])
    only = [m for m in args.only.split(",") if m] if args.only else None
    if only:
        found = {k: v for k, v in found.items() if k in only}
    return found, notes


# A socket of this run's own: two runs at once (or a test's tmux) never kill each other's server.
TMUX_SOCKET = f"gpumeter-overhead-{os.getpid()}"


def tmux(*a, check=True):
    # Its own socket, no user config; the pane's TERM is tmux's default for every monitor alike.
    return subprocess.run(["tmux", "-L", TMUX_SOCKET, "-f", "/dev/null", *a], check=check,
                          capture_output=True, text=True)


def pane_text(session):
    r = tmux("capture-pane", "-p", "-t", session, check=False)
    return r.stdout if r.returncode == 0 else ""


def pane_cmd(argv, env):
    """`exec env K=V … argv`: the pane's pid is then the monitor's, with exactly this setup."""
    keys = ("LD_LIBRARY_PATH", "GPUMETER_FAKE_NVML_SCENARIO", "XDG_CONFIG_HOME", "XDG_STATE_HOME",
            "HOME", "PATH")
    pairs = [f"{k}={env[k]}" for k in keys if k in env]
    return " ".join(shlex.quote(a) for a in ["exec", "env", *pairs, *argv])


SESSIONS = iter(range(1_000_000))


def fresh(prefix):
    """A session name never used before in this server (a killed one may linger a moment)."""
    return f"{prefix}{next(SESSIONS)}"


def run_once(name, argv, env, seconds, warmup, prefix):
    """One monitor in a fresh tmux session for `seconds`; returns its figures."""
    session = fresh(prefix)
    cmd = pane_cmd(argv, env)
    t0 = time.monotonic()
    r = tmux("new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", session,
             "-x", str(COLS), "-y", str(ROWS), cmd)
    pid = int(r.stdout.strip())
    start_wall = t0 + warmup
    while time.monotonic() < start_wall:
        time.sleep(0.05)
    threads0, own0 = thread_cpu(pid), threads_cpu_s(pid)
    cpu0, ticks0 = tree_cpu_s(pid), tree_ticks_s(pid)
    w0 = time.monotonic()
    rss, smaps = [], []
    end = w0 + seconds
    while time.monotonic() < end:
        time.sleep(min(1.0, max(0.0, end - time.monotonic())))
        v = status_kib(pid, "VmRSS")
        if v is not None:
            rss.append(v)
        s = smaps_kib(pid)
        if s is not None:
            smaps.append(s)
    cpu1, ticks1 = tree_cpu_s(pid), tree_ticks_s(pid)
    window = time.monotonic() - w0
    threads1, own1 = thread_cpu(pid), threads_cpu_s(pid)
    hwm = status_kib(pid, "VmHWM")
    anon = anon_kib(pid)
    st = proc_stat(pid)
    alive = st is not None
    last = pane_text(session)
    tmux("kill-session", "-t", session, check=False)
    out = {
        "monitor": name,
        "alive": alive,
        "cpu_s_per_min": (cpu1 - cpu0) * 60.0 / window if alive else None,
        "cpu_s_total": cpu1 if alive else None,
        "cpu_s_per_min_ticks": (ticks1 - ticks0) * 60.0 / window if alive else None,
        "rss_steady_kib": statistics.median(rss[len(rss) // 2:]) if rss else None,
        "rss_end_kib": rss[-1] if rss else None,
        "rss_peak_kib": hwm,
        "anon_kib": anon,
        "threads": st[1] if st else None,
        # The monitor's own threads (not its children), by name: which one costs what.
        "thread_cpu_s_per_min": thread_split(threads0, threads1, own1 - own0, window)
        if alive and own0 is not None and own1 is not None else None,
        "cpu_method": CPU_METHOD,
        "last_screen": None if alive else last,
    }
    # pss_kib, pss_anon_kib, private_dirty_kib, private_clean_kib: steady medians, like rss's.
    out.update(smaps_steady(smaps))
    return out


# Complete escape sequences (CSI, OSC, charset and two-byte ones) and one cut off at a chunk's end.
ESC_SEQ = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()*+][0-~]|[^\[\]()*+])")
ESC_CUT = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[()*+])?$")
# Terminal queries a monitor may wait on, and the answers a terminal at the top left gives.
ANSWERS = ((b"\x1b[6n", b"\x1b[1;1R"), (b"\x1b[c", b"\x1b[?62;22c"), (b"\x1b[0c", b"\x1b[?62;22c"))


def first_frame(argv, env, limit=10.0):
    """(first paint, first data) in ms after the spawn of argv in a fresh 200x60 pseudo-terminal.

    Every chunk the monitor writes is read as it comes (select on the pty) and stamped then; its
    escape sequences are dropped and the text looked at: the first visible character is the first
    paint, the first GPU name the first data. Cursor-position and device-attribute queries are
    answered at once, as a local terminal would. The monitor is then stopped (SIGTERM, SIGKILL).
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    # The same terminal type for every monitor, and no sign of running inside tmux.
    env = {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE")}
    env["TERM"] = "xterm-256color"
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdin=slave, stdout=slave, stderr=slave,
                         start_new_session=True)
    os.close(slave)
    carry, tail = b"", b""
    paint = data = None
    try:
        while data is None and time.monotonic() < t0 + limit:
            if not select.select([master], [], [], 0.25)[0]:
                if p.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the monitor exited and closed its end
                break
            t = (time.monotonic() - t0) * 1000
            for ask, answer in ANSWERS:
                if ask in chunk:
                    os.write(master, answer)
            buf = carry + chunk
            cut = ESC_CUT.search(buf)
            carry = buf[cut.start():] if cut else b""
            text = ESC_SEQ.sub(b"", buf[:cut.start()] if cut else buf)
            if paint is None and text.strip():
                paint = t
            if MARKER.encode() in tail + text:
                data = t
            tail = (tail + text)[-len(MARKER):]
    finally:
        stop(p, master)
    return paint, data


def stop(p, master):
    """SIGTERM, then SIGKILL after 2 s, to the monitor's session; its output is drained."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 2
    while p.poll() is None and time.monotonic() < deadline:
        if select.select([master], [], [], 0.05)[0]:
            try:
                os.read(master, 1 << 16)
            except OSError:
                break
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    os.close(master)


def spawn_baseline(env, rounds=5):
    """The probe's own share: first data of a program that prints the marker at once."""
    vals = [first_frame(["sh", "-c", f"echo {MARKER}; exec sleep 100"], env)[1] for _ in range(rounds)]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else 0.0


# The side-by-side's headless gpumeter modes (`--headless`).
HEADLESS = ("gpumeter-watch", "gpumeter-serve")


def first_frames(found, env, runs, hosts, base_ms):
    """`runs` first-frame probes per monitor, interleaved (one of each in turn)."""
    rows = []
    # Headless modes draw nothing: no first frame to time.
    names = [n for n in found if n not in HEADLESS]
    for k in range(runs):
        for name in names[k % len(names):] + names[:k % len(names)]:
            paint, data = first_frame(found[name], env)
            net = lambda v: None if v is None else max(0.0, v - base_ms)
            rows.append({"monitor": name, "host_procs": hosts, "first_paint_ms": net(paint),
                         "first_data_ms": net(data)})
    for name in names:
        mine = [r for r in rows if r["monitor"] == name]
        print(f"  {hosts:5} host: {name:9} first paint {fmt(med(mine, 'first_paint_ms'), digits=1)} ms, "
              f"first data {fmt(med(mine, 'first_data_ms'), digits=1)} ms "
              f"(median of {len(mine)})", flush=True)
    return rows


# ---------------------------------------------------------------- report

def med(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, unit="", digits=2):
    if v is None:
        return "–"
    return f"{v:.{digits}f}{unit}"


def summarize(results, frames, order):
    """Markdown: one table per host-process count, medians, and gpumeter's ratios."""
    lines = []
    for hosts in sorted({r["host_procs"] for r in results + frames}):
        rows = [r for r in results if r["host_procs"] == hosts]
        shots = [r for r in frames if r["host_procs"] == hosts]
        procs = med(rows + shots, "proc_count") or 0
        lines += [f"### {hosts} extra host processes (~{procs:.0f} in /proc)", "",
                  "| monitor | CPU s/min | PSS MiB | PSS anon MiB | private dirty MiB | "
                  "private clean MiB | steady RSS MiB | peak RSS MiB | anon MiB | threads | "
                  "first paint ms | first data ms | runs |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        stats = {}
        for m in order:
            mr = [r for r in rows if r["monitor"] == m]
            ms = [r for r in shots if r["monitor"] == m]
            if not mr and not ms:
                continue
            s = {k: med(mr, k) for k in ("cpu_s_per_min", "rss_steady_kib", "rss_peak_kib",
                                          "anon_kib", "threads", *SMAPS_KEYS.values())}
            s.update({k: med(ms, k) for k in ("first_paint_ms", "first_data_ms")})
            stats[m] = s
            ok = sum(1 for r in mr if r["alive"])
            lines.append(
                f"| {m} | {fmt(s['cpu_s_per_min'], digits=3)} | {smaps_cells(s)} | "
                f"{fmt(kib_mib(s['rss_steady_kib']), digits=1)} | "
                f"{fmt(kib_mib(s['rss_peak_kib']), digits=1)} | {fmt(kib_mib(s['anon_kib']), digits=1)} | "
                f"{fmt(s['threads'], digits=0)} | "
                f"{fmt(s['first_paint_ms'], digits=1)} | {fmt(s['first_data_ms'], digits=1)} | {ok}/{len(mr)} |")
        split = thread_medians([r for r in rows if r["monitor"] == "gpumeter"])
        if split:
            lines += ["", "gpumeter's CPU s/min by thread (median of runs): " + split]
        g = stats.get("gpumeter")
        if g:
            lines += ["", "gpumeter ÷ peer (below 1 = gpumeter cheaper):", ""]
            for m, s in stats.items():
                if m == "gpumeter" or m in HEADLESS:
                    continue
                lines.append(f"- {m}: CPU {ratio(g['cpu_s_per_min'], s['cpu_s_per_min'])}"
                             f"{round_spread(rows, 'gpumeter', m)}, "
                             f"PSS {ratio_smaps(g, s, 'pss_kib')}, "
                             f"private dirty {ratio_smaps(g, s, 'private_dirty_kib')}, "
                             f"steady RSS {ratio(g['rss_steady_kib'], s['rss_steady_kib'])}, "
                             f"first data {ratio(g['first_data_ms'], s['first_data_ms'])}")
        peer = stats.get("nvtop")
        heads = [(m, stats[m]) for m in HEADLESS if m in stats]
        if peer and heads:
            lines += ["", "headless gpumeter ÷ nvtop's TUI (target: 0.5 or below):", ""]
            for m, s in heads:
                lines.append(f"- {m}: CPU {ratio(s['cpu_s_per_min'], peer['cpu_s_per_min'])}"
                             f"{round_spread(rows, m, 'nvtop')}")
        lines.append("")
    return "\n".join(lines)


def round_spread(rows, a, b):
    """` (rounds 0.47–0.50×)`: the CPU ratio of `a` to `b` within each round, lowest and highest.
    The monitors of a round run back to back, so a round's ratio is the least disturbed by the
    machine's drift over a run; their spread says how far one run's ratio of medians can be
    trusted. Empty with fewer than two rounds in which both ran."""
    per = collections.defaultdict(dict)
    for r in rows:
        if r.get("cpu_s_per_min") is not None and r.get("round") is not None:
            per[r["round"]][r["monitor"]] = r["cpu_s_per_min"]
    ratios = sorted(x[a] / x[b] for x in per.values() if a in x and x.get(b))
    if len(ratios) < 2:
        return ""
    return f" (rounds {ratios[0]:.2f}–{ratios[-1]:.2f}×)"


def thread_medians(rows, scale=1.0, digits=3):
    """`name v, name v …`: the median per thread name over runs (absent in a run = 0), scaled."""
    splits = [r["thread_cpu_s_per_min"] for r in rows if r.get("thread_cpu_s_per_min")]
    if not splits:
        return ""
    names = {n for sp in splits for n in sp}
    meds = {n: statistics.median(sp.get(n, 0.0) for sp in splits) * scale for n in names}
    return ", ".join(f"{n} {v:.{digits}f}" for n, v in sorted(meds.items(), key=lambda kv: -kv[1]))


def kib_mib(v):
    return None if v is None else v / 1024


def smaps_cells(r):
    """`PSS | PSS anon | private dirty | private clean` cells (MiB) of a run or of medians."""
    return " | ".join(fmt_smaps(r.get(n), n) for n in SMAPS_KEYS.values())


def ratio_smaps(a, b, name):
    return "N/A" if smaps_lacks(name) else ratio(a.get(name), b.get(name))


def ratio(a, b):
    if a is None or not b:
        return "–"
    return f"{a / b:.2f}×"


# ---------------------------------------------------------------- scale curves (gpumeter alone)

def scale(args, lib_dir, env, workdir, out, base_ms):
    """gpumeter alone over GPU count, GPU-process count and host-process count, TUI and watch."""
    lib1 = os.path.join(lib_dir, "libnvidia-ml.so.1")
    tui = [args.gpumeter, "--nvml-lib", lib1, "--no-ledger", "--interval", "1s"]
    watch = [args.gpumeter, "watch", "--nvml-lib", lib1, "--no-ledger", "--interval", "1s"]
    serve = [args.gpumeter, "serve", "--nvml-lib", lib1, "--no-ledger", "--interval", "1s",
             "--listen", "127.0.0.1:19958"]
    cases = [(g, 64, 0) for g in (1, 8, 64)]
    cases += [(8, p, 0) for p in (10, 500, 5000)]
    cases += [(8, 64, h) for h in (0, 1000, 4000)]
    seen, rows = set(), []
    for gpus, gprocs, hosts in cases:
        if (gpus, gprocs, hosts) in seen:
            continue
        seen.add((gpus, gprocs, hosts))
        machine = Machine(workdir, gpus, gprocs)
        try:
            machine.set_host_procs(hosts)
            e = dict(env, GPUMETER_FAKE_NVML_SCENARIO=machine.scenario)
            modes = [("tui", tui), ("watch", watch)]
            if gprocs == 64 and gpus == 8:
                modes.append(("serve", serve))
            if (gpus, gprocs, hosts) == (8, 64, 0):
                # The ledger writing too: a rate makes the meter run, the state dir is a temp one.
                ledger = [a for a in watch if a != "--no-ledger"] + ["--rate", "3.10/gpu-h"]
                modes.append(("watch+ledger", ledger))
            for mode, argv in modes:
                r = run_once("gpumeter", argv, e, args.seconds, args.warmup, "scale")
                r.update(mode=mode, gpus=gpus, gpu_procs=gprocs, host_procs=hosts,
                         proc_count=proc_count())
                if mode == "tui":
                    shots = [first_frame(argv, e)[1] for _ in range(max(1, args.frames // 3))]
                    shots = [max(0.0, v - base_ms) for v in shots if v is not None]
                    r["first_data_ms"] = statistics.median(shots) if shots else None
                rows.append(r)
                print(f"  scale {mode:12} {gpus:3} GPUs {gprocs:5} GPU procs {hosts:5} host: "
                      f"{fmt(r['cpu_s_per_min'], digits=3)} CPU s/min, "
                      f"{fmt(kib_mib(r['rss_steady_kib']), digits=1)} MiB", flush=True)
        finally:
            machine.close()
    lines = ["| mode | GPUs | GPU procs | host procs (/proc) | CPU ms/tick | PSS MiB | PSS anon MiB | "
             "private dirty MiB | private clean MiB | steady RSS MiB | peak RSS MiB | anon MiB | "
             "first data ms |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per_tick = None if r["cpu_s_per_min"] is None else r["cpu_s_per_min"] * 1000 / 60
        lines.append(f"| {r['mode']} | {r['gpus']} | {r['gpu_procs']} | {r['host_procs']} ({r['proc_count']}) | "
                     f"{fmt(per_tick, digits=2)} | {smaps_cells(r)} | "
                     f"{fmt(kib_mib(r['rss_steady_kib']), digits=1)} | "
                     f"{fmt(kib_mib(r['rss_peak_kib']), digits=1)} | "
                     f"{fmt(kib_mib(r['anon_kib']), digits=1)} | "
                     f"{fmt(r.get('first_data_ms'), digits=1)} |")
    out.write("## Scale: gpumeter alone (1 s interval; CPU per tick = CPU s/min ÷ 60)\n\n")
    out.write("\n".join(lines) + "\n")
    out.write("\nCPU ms/tick by thread:\n\n")
    for r in rows:
        split = thread_medians([r], scale=1000 / 60, digits=2)
        out.write(f"- {r['mode']}, {r['gpus']} GPUs, {r['gpu_procs']} GPU procs, "
                  f"{r['host_procs']} host: {split or '–'}\n")
    return rows


# ---------------------------------------------------------------- growth (gpumeter alone, long)

def parse_span(text):
    """`30m`, `90s`, `2h` or plain seconds -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    text = text.strip()
    if text and text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)


def rss_parts_kib(pid):
    """(VmRSS, Anonymous, file-backed Rss) in KiB, or None once the process is gone."""
    rss = status_kib(pid, "VmRSS")
    anon = anon_kib(pid)
    if rss is None or anon is None:
        return None
    return rss, anon, rss - anon


def slope_kib_per_h(points):
    """Least-squares slope of (seconds, KiB) points, in KiB an hour."""
    if len(points) < 2:
        return None
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    if den == 0:
        return None
    return sum((t - mt) * (v - mv) for t, v in points) / den * 3600


def growth(args, lib_dir, env, workdir, out):
    """One gpumeter TUI for a long run; RSS, anon, PSS and private every `--growth-every` s."""
    lib1 = os.path.join(lib_dir, "libnvidia-ml.so.1")
    argv = [args.gpumeter, "--nvml-lib", lib1, "--no-ledger", "--interval", "1s"]
    total = parse_span(args.growth)
    machine = Machine(workdir, 8, 64)
    rows = []
    exited = False
    try:
        e = dict(env, GPUMETER_FAKE_NVML_SCENARIO=machine.scenario)
        session = fresh("growth")
        r = tmux("new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", session,
                 "-x", str(COLS), "-y", str(ROWS), pane_cmd(argv, e))
        pid = int(r.stdout.strip())
        t0 = time.monotonic()
        cpu0 = tree_cpu_s(pid)
        while True:
            now = time.monotonic() - t0
            parts = rss_parts_kib(pid)
            if parts is None:
                exited = True
                print("    growth: gpumeter exited; last screen:\n" + pane_text(session)[:800])
                break
            sm = smaps_kib(pid) or {}
            rows.append({"t_s": now, "rss_kib": parts[0], "anon_kib": parts[1],
                         "file_kib": parts[2],
                         **{n: sm.get(k) for k, n in SMAPS_KEYS.items()}})
            if len(rows) % 6 == 1:
                print(f"  growth {now:7.0f} s: RSS {parts[0] / 1024:.1f} MiB, anon "
                      f"{parts[1] / 1024:.1f} MiB", flush=True)
            if now >= total:
                break
            time.sleep(max(0.0, min(args.growth_every, total - now)))
        cpu_s = None if exited else tree_cpu_s(pid) - cpu0
        hwm = status_kib(pid, "VmHWM")
        tmux("kill-session", "-t", session, check=False)
    finally:
        machine.close()
    if not rows:
        return rows
    # Steady: from the coarsest history tier's first close (10 min) on, when every ring is
    # allocated at its full size; for a shorter run, what was sampled after the first minute.
    steady_from = 600 if rows[-1]["t_s"] >= 600 else 60
    steady = [r for r in rows if r["t_s"] >= steady_from] or rows
    first = next((r for r in rows if r["t_s"] >= 10), rows[-1])
    last = rows[-1]

    def mib(v):
        return fmt(kib_mib(v), digits=2)

    ran = rows[-1]["t_s"]
    lines = [f"## Growth: one gpumeter TUI for {ran / 60:.0f} of {total / 60:.0f} min (8 GPUs, "
             f"64 GPU processes, RSS every {args.growth_every:.0f} s)", ""]
    if exited:
        lines += ["**gpumeter exited before the end**: the figures cover only what ran.", ""]
    lines += [
             f"| what | at start (~10 s) | steady median (≥ {steady_from // 60} min) | end | peak | "
             f"slope from {steady_from // 60} min |",
             "|---|---|---|---|---|---|"]
    for key, name in (("pss_kib", "PSS MiB"), ("pss_anon_kib", "PSS anon MiB"),
                      ("private_dirty_kib", "private dirty MiB"),
                      ("private_clean_kib", "private clean MiB"),
                      ("rss_kib", "RSS MiB"), ("anon_kib", "anon MiB"), ("file_kib", "file MiB")):
        if key in SMAPS_KEYS.values() and smaps_lacks(key):
            lines.append(f"| {name} | N/A | N/A | N/A | N/A | N/A |")
            continue
        pts = [(r["t_s"], r[key]) for r in steady if r.get(key) is not None]
        got = [r[key] for r in rows if r.get(key) is not None]
        sl = slope_kib_per_h(pts)
        lines.append(f"| {name} | {mib(first.get(key))} | "
                     f"{mib(statistics.median(v for _, v in pts) if pts else None)} | "
                     f"{mib(last.get(key))} | {mib(max(got) if got else None)} | "
                     f"{fmt(sl, ' KiB/h', digits=0)} |")
    window = rows[-1]["t_s"] - rows[0]["t_s"]
    cpu = fmt(cpu_s * 60 / window if cpu_s is not None and window else None, digits=3)
    marks = []
    for m in (1, 5, 10, 20, 30, 60, 120):
        at = [r for r in rows if r["t_s"] >= m * 60]
        if at:
            marks.append(f"{m} min {mib(at[0]['rss_kib'])} / {mib(at[0]['anon_kib'])}")
    lines += ["", "RSS / anon MiB at " + ("; ".join(marks) if marks else "–") + ".",
              f"VmHWM {mib(hwm)} MiB (start-up's peak); CPU {cpu} s/min over the run.", ""]
    out.write("\n".join(lines) + "\n")
    return rows


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpumeter", required=True)
    ap.add_argument("--lib-dir", required=True, help="folder with the fake libnvidia-ml.so{,.1}")
    ap.add_argument("--nvtop")
    ap.add_argument("--all-smi")
    ap.add_argument("--venv", help="venv with nvitop and gpustat")
    ap.add_argument("--stand-in-bin", help="folder with the nvidia-smi stand-in, put on PATH")
    ap.add_argument("--hosts", default="0,1000,4000", help="extra host process counts")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30, help="measured seconds per run")
    ap.add_argument("--warmup", type=float, default=5, help="seconds after start not measured")
    ap.add_argument("--only", help="comma-separated monitors")
    ap.add_argument("--scale", action="store_true", help="also the gpumeter-alone scale curves")
    ap.add_argument("--no-peers", action="store_true", help="skip the side-by-side runs")
    ap.add_argument("--headless", action="store_true",
                    help="also gpumeter watch and serve in the side-by-side rounds (CPU and RSS only)")
    ap.add_argument("--frames", type=int, default=10,
                    help="first-frame probes per monitor and host count (a third of it per scale case)")
    ap.add_argument("--frames-only", action="store_true",
                    help="only the first-frame probes (no CPU/RSS runs)")
    ap.add_argument("--growth", help="also one long gpumeter TUI run of this span (30m, 1800s): "
                    "RSS, anon, file, PSS and private pages sampled over it")
    ap.add_argument("--growth-every", type=float, default=10, help="seconds between growth samples")
    ap.add_argument("--cpu", choices=("auto", "ticks"), default="auto",
                    help="ticks: /proc/<pid>/stat's 10 ms ticks even where the CPU-time clock works")
    ap.add_argument("--out", required=True, help="folder for results.md and results.json")
    args = ap.parse_args()
    for k in ("gpumeter", "lib_dir", "nvtop", "all_smi", "venv", "stand_in_bin", "out"):
        if getattr(args, k):
            setattr(args, k, os.path.abspath(getattr(args, k)))
    if not shutil.which("tmux"):
        sys.exit("overhead: tmux is not installed")

    global CPU_METHOD
    CPU_METHOD = "clock" if args.cpu != "ticks" and clock_works() else "ticks"
    SMAPS_HAS.update(smaps_kib(os.getpid()) or {})
    os.makedirs(args.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="gpumeter-overhead-")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = args.lib_dir + ":" + env.get("LD_LIBRARY_PATH", "")
    env["XDG_CONFIG_HOME"] = os.path.join(workdir, "config")  # no user config in the way
    env["XDG_STATE_HOME"] = os.path.join(workdir, "state")
    env["HOME"] = workdir  # nvitop/gpustat keep no state here either
    env.pop("GPUMETER_NVML_LIB", None)
    if args.stand_in_bin:
        env["PATH"] = args.stand_in_bin + ":" + env["PATH"]
    tmux("kill-server", check=False)
    # One idle session keeps the server up, so no run pays for starting it.
    tmux("new-session", "-d", "-s", "keep", "-x", str(COLS), "-y", str(ROWS), "sleep 1000000")
    report = open(os.path.join(args.out, "results.md"), "w")
    results = {"machine": machine_info(), "smaps_fields": sorted(SMAPS_HAS), "runs": [],
               "frames": [], "scale": [], "growth": []}
    try:
        found, notes = monitors(args, args.lib_dir)
        report.write(f"# gpumeter overhead, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n")
        report.write(f"{results['machine']}\n\n")
        for n in notes:
            print(n)
            report.write(f"- {n}\n")
        env_keep = dict(env)
        base_ms = spawn_baseline(env_keep)
        report.write(f"\nCPU: {CPU_METHODS[CPU_METHOD]}; per thread from /proc/<pid>/task/*/"
                     f"schedstat (ns){' or stat (ticks)' if CPU_METHOD == 'ticks' else ''}.\n")
        lacks = [k for k in SMAPS_KEYS if k not in SMAPS_HAS]
        report.write("\nMemory: what a monitor costs the box is its private memory. PSS (its pages, "
                     "a shared one divided among its sharers), PSS anon, private dirty and private "
                     "clean are medians over the second half of each run of /proc/<pid>/smaps_rollup "
                     "read every second, beside steady RSS (VmRSS, the same samples), which also "
                     "counts whole every clean file-backed page of code and libraries the kernel "
                     "drops and rereads at will. Peak RSS is VmHWM, anon smaps_rollup's Anonymous at "
                     "the end."
                     + (f" This kernel has no {', '.join(lacks)} (N/A)." if lacks else "") + "\n")
        if args.frames_only:
            runs = "no CPU/RSS runs"
        else:
            per_run = (f"{args.seconds:.0f} s measured (after {args.warmup:.0f} s), "
                       f"tmux {COLS}×{ROWS}")
            parts = [] if args.no_peers else [f"side by side: {args.rounds} rounds × {per_run}"]
            if args.scale:
                parts.append(f"scale: one run per case × {per_run}")
            if args.growth:
                parts.append(f"growth: one run of {args.growth}")
            runs = "; ".join(parts) or "no CPU/RSS runs"
        shots = (f"{args.frames} starts per monitor" if not args.no_peers else
                 f"{max(1, args.frames // 3)} starts per scale case")
        report.write(f"\n{runs}, 1 s refresh, 8 GPUs, 64 GPU processes unless said. First paint / "
                     f"data: median of {shots} in a {COLS}×{ROWS} pseudo-terminal read by "
                     f"the script, from the spawn, net of the probe's own share ({base_ms:.1f} ms "
                     f"for a program that prints at once).\n\n")
        if not args.no_peers:
            machine = Machine(workdir, 8, 64)
            env_keep["GPUMETER_FAKE_NVML_SCENARIO"] = machine.scenario
            try:
                for hosts in [int(h) for h in args.hosts.split(",") if h != ""]:
                    machine.set_host_procs(hosts)
                    names = list(found)
                    for r in first_frames(found, env_keep, args.frames, hosts, base_ms):
                        r["proc_count"] = proc_count()
                        results["frames"].append(r)
                    for rnd in range(0 if args.frames_only else args.rounds):
                        k = rnd % len(names)
                        for name in names[k:] + names[:k]:  # a different monitor goes first each round
                            r = run_once(name, found[name], env_keep, args.seconds, args.warmup, "m")
                            r.update(host_procs=hosts, round=rnd, proc_count=proc_count())
                            results["runs"].append(r)
                            print(f"  {hosts:5} host, round {rnd}: {name:9} "
                                  f"{fmt(r['cpu_s_per_min'], digits=3)} CPU s/min, "
                                  f"{fmt(kib_mib(r['rss_steady_kib']), digits=1)} MiB RSS, "
                                  f"{fmt_smaps(r['pss_kib'], 'pss_kib')} MiB PSS, "
                                  f"{fmt_smaps(r['private_dirty_kib'], 'private_dirty_kib')} MiB "
                                  "private dirty"
                                  + ("" if r["alive"] else "  (EXITED)"), flush=True)
                            if r["last_screen"]:
                                print("    last screen:\n" + r["last_screen"][:800])
            finally:
                machine.close()
            report.write(summarize(results["runs"], results["frames"], list(found)) + "\n")
        if args.scale:
            results["scale"] = scale(args, args.lib_dir, env_keep, workdir, report, base_ms)
        if args.growth:
            results["growth"] = growth(args, args.lib_dir, env_keep, workdir, report)
        load = os.getloadavg()
        report.write(f"\nLoad average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}\n")
    finally:
        report.close()
        tmux("kill-server", check=False)
        shutil.rmtree(workdir, ignore_errors=True)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
    print(open(os.path.join(args.out, "results.md")).read())


def machine_info():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()
    return (f"Machine: {os.cpu_count()} cores ({cpu}), kernel {os.uname().release}, "
            f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min)")


if __name__ == "__main__":
    main()
