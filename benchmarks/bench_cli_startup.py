"""Benchmark: CPU time of ``privrelease --help`` against ``python -c pass`` in the same run.

Each command runs REPEATS times in a fresh interpreter; the child's CPU time (user + system,
from ``os.wait4``) is steadier than wall-clock time on a shared machine. Prints the median
CPU times, their ratio and the increment over the bare interpreter. The target is an
increment under 0.5 s of CPU.

Usage::

    PYTHONPATH=src python benchmarks/bench_cli_startup.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU seconds of one run of ``argv`` (output discarded)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "privrelease --help": [sys.executable, "-m", "privrelease.cli.app", "--help"],
        "privrelease mechanisms": [sys.executable, "-m", "privrelease.cli.app", "mechanisms"],
    }
    med = {}
    for name, argv in commands.items():
        med[name] = statistics.median(cpu_seconds(argv) for _ in range(args.repeats))
    base = med["python -c pass"]
    print(f"{'command':<26} {'CPU s (median)':>15} {'ratio':>7} {'increment s':>12}")
    for name, t in med.items():
        print(f"{name:<26} {t:>15.3f} {t / base:>7.1f} {t - base:>12.3f}")
    inc = med["privrelease --help"] - base
    print(f"--help increment {inc:.3f} s CPU: {'under' if inc < 0.5 else 'OVER'} the 0.5 s target")


if __name__ == "__main__":
    main()
