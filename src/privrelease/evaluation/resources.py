"""Resource measurements shared by the benchmarks and the benchmark reproductions."""

from __future__ import annotations


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB.

    ``VmHWM`` from /proc (Linux) belongs to this program's own address space, whereas
    ``ru_maxrss`` keeps the high-water mark of a forked parent across ``exec``; the latter
    is the fallback where /proc is missing.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB
