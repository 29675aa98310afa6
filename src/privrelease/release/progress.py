"""How a file release reports its progress: a declared interface.

:func:`~privrelease.release.pipeline.release_file` takes either a plain callable
``progress(stage, rows)`` or a :class:`Progress`. A :class:`Progress` is also told the
number of input records (:meth:`Progress.start`) once the pipeline has counted them, before
the first pass, so that it can show the share done and the time left; a plain callable only
sees the stages.
"""

from __future__ import annotations

from typing import Callable


class Progress:
    """Receives a release's progress: :meth:`start` once, then ``(stage, rows)`` calls.

    ``stage`` is ``"reading"``, ``"statistics"``, ``"pass 1"``, ``"pass 2"``, ... or
    ``"writing"``; ``rows`` counts the records of that stage done so far. Subclass it and
    override :meth:`__call__`, and :meth:`start` to use the total.
    """

    def start(self, total: int) -> None:
        """The number of input records (known before the first pass). Ignored by default."""

    def __call__(self, stage: str, rows: int) -> None:
        """``rows`` records of ``stage`` are done. Ignored by default."""


class _CallbackProgress(Progress):
    """A plain ``progress(stage, rows)`` callable: it sees the stages, not the total."""

    def __init__(self, callback: Callable[[str, int], None]):
        self.callback = callback

    def __call__(self, stage: str, rows: int) -> None:
        self.callback(stage, rows)


def as_progress(progress: Progress | Callable[[str, int], None] | None) -> Progress | None:
    """``progress`` as a :class:`Progress` (a plain callable is wrapped; None stays None)."""
    if progress is None or isinstance(progress, Progress):
        return progress
    return _CallbackProgress(progress)
