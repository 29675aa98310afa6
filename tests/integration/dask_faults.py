"""A per-record map that kills its Dask worker process the first time it runs (fault-injection tests).

Pickled by value (``cloudpickle.register_pickle_by_value``), so worker processes need not import
the tests; the marker file makes only the first call fatal, whichever worker runs it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from privrelease.engine import RecordMap


@dataclass(frozen=True)
class KillOnceMap(RecordMap):
    marker: str = ""

    def encode(self, df, row_offset: int = 0):
        if self.marker and not Path(self.marker).exists():
            Path(self.marker).write_text("killed")
            os._exit(1)  # the worker process dies mid-task, as on a lost machine
        return super().encode(df, row_offset)
