"""What both peer helpers share (they run in the peers' venvs, without privrelease)."""

import importlib.metadata
import json
import resource


def cpu_seconds():
    """CPU time of this process and of the worker processes it has waited for."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def write_result(path, wall, cpu, fit_wall, fit_cpu, packages, extra=None):
    """The timing, the versions of ``packages`` and any ``extra`` fields as JSON."""
    versions = {p: importlib.metadata.version(p) for p in packages}
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    with open(path, "w") as fh:
        json.dump({"wall_seconds": wall, "cpu_seconds": cpu, "fit_wall_seconds": fit_wall,
                   "fit_cpu_seconds": fit_cpu, "peak_rss_mb": peak_mb, "versions": versions,
                   **(extra or {})}, fh)
