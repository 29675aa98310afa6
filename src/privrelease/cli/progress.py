"""A one-line progress bar on stderr for long work (rows read per pass, records written).

Quiet when stderr is not a terminal (logs and pipes get nothing). The bar is a
:class:`~privrelease.release.progress.Progress`: the release pipeline tells it the number of
records (:meth:`ProgressBar.start`) once it has counted them, then calls
``progress(stage, rows_so_far)``. Knowing the total it shows the share done and the time left,
otherwise the count and the rate.
"""

from __future__ import annotations

import sys
import time

from ..release.progress import Progress


def _duration(seconds: float) -> str:
    """``"4s"``, ``"2m05s"``, ``"1h02m"``.

    >>> _duration(4.2), _duration(125), _duration(3720)
    ('4s', '2m05s', '1h02m')
    """
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class ProgressBar(Progress):
    """Callable ``(stage, n)`` drawing ``stage [#####.....] 45% 1,234/2,742 rows 5,000 rows/s 1m02s left``.

    Parameters
    ----------
    stream : a text stream (default ``sys.stderr``); nothing is drawn unless its ``isatty()`` says it is a
        terminal
    width : characters of the bar
    min_interval : seconds between redraws (the last update of a stage is always drawn)
    clock : a monotonic clock (for tests)
    """

    def __init__(self, stream=None, width: int = 24, min_interval: float = 0.1, clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(self.stream.isatty())
        self.total: int | None = None
        self.width = int(width)
        self.min_interval = float(min_interval)
        self.clock = clock
        self._stage = None
        self._start = 0.0
        self._drawn = 0.0
        self._open = False

    def start(self, total: int) -> None:
        """The number of records the stages count up to."""
        self.total = total

    def __call__(self, stage: str, n: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if stage != self._stage:
            self.close()
            self._stage, self._start, self._drawn = stage, now, -float("inf")
        done = self.total is not None and n >= self.total
        if now - self._drawn < self.min_interval and not done:
            return
        self._drawn = now
        self.stream.write("\r" + self.line(stage, n, now - self._start) + "\033[K")
        self.stream.flush()
        self._open = True

    def line(self, stage: str, n: int, elapsed: float) -> str:
        """The text of the bar after ``n`` rows in ``elapsed`` seconds."""
        rate = n / elapsed if elapsed > 0 else 0.0
        speed = f"{rate:,.0f} rows/s" if rate else ""
        if not self.total:
            return f"  {stage:<12} {n:,} rows  {speed}".rstrip()
        frac = min(n / self.total, 1.0)
        fill = int(frac * self.width)
        left = f"{_duration((self.total - n) / rate)} left" if rate and n < self.total else ""
        return (f"  {stage:<12} [{'#' * fill}{'.' * (self.width - fill)}] {frac:4.0%} "
                f"{n:,}/{self.total:,} rows  {speed}  {left}").rstrip()

    def close(self) -> None:
        """End the current line (before other output, or at the end of the work)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
