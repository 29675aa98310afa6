"""The per-record map every engine runs: one chunk of the input table -> mergeable statistics.

``encode`` (schema bounds and levels, clipping counted) -> label codes -> the mechanism's
per-record preprocessing (e.g. scaling into the public row-norm ball) -> sums. The local
streamed engine (:func:`~privrelease.engine.stream_stats`) and the Dask engine
(:func:`~privrelease.engine.distributed.dask_stats`) both call :meth:`RecordMap.stats`, so
no engine can skip a per-record step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .preprocess import apply_steps, check_steps
from .stats import SufficientStats


@dataclass(frozen=True)
class EncodedChunk:
    """One encoded chunk: features ``X``, labels ``y`` (or None) and its clip counts."""

    X: np.ndarray
    y: np.ndarray | None
    clip_counts: dict


@dataclass(frozen=True)
class RecordMap:
    """Encode a chunk and reduce it to statistics (picklable: it runs on Dask workers).

    Parameters
    ----------
    encoder : the features' :class:`~privrelease.schema.Encoder`
    label_encoder : the label's (class codes) or regression target's (value in [0, 1]) encoder, or None
    on_out_of_bounds : "clip" (counted) or "error"
    preprocessing : per-record steps applied after encoding (see :mod:`privrelease.engine.preprocess`)
    n_classes : public label-set size (statistics per class), or None
    second_moment : whether the statistics hold ``sum x x^T``
    constraints : the schema's :class:`~privrelease.schema.constraints.ConstraintSet` (input records
        are mapped to the mechanism's columns first; rows that break a rule are counted, or refused)
    """

    encoder: object
    label_encoder: object = None
    on_out_of_bounds: str = "clip"
    preprocessing: tuple = ()
    n_classes: int | None = None
    second_moment: bool = True
    constraints: object = None

    def __post_init__(self):
        object.__setattr__(self, "preprocessing", check_steps(self.preprocessing))

    @property
    def p(self) -> int:
        return self.encoder.width

    def encode(self, df: pd.DataFrame, row_offset: int = 0) -> EncodedChunk:
        """Encoded features and labels of a chunk, before per-record preprocessing.

        A chunk issues no data warnings (clipping, one-class label): the release warns once
        from the totals over the whole table (:func:`privrelease.release.pipeline.warn_data`).
        """
        broken = {}
        if self.constraints:
            df, broken = self.constraints.prepare(df, self.on_out_of_bounds, row_offset)
        e = self.encoder.encode(df, on_out_of_bounds=self.on_out_of_bounds, row_offset=row_offset, warn=False)
        return EncodedChunk(e.X, self.labels(df), {**e.clip_counts, **broken})

    def labels(self, df: pd.DataFrame) -> np.ndarray | None:
        """Class codes of the label column, or the encoded value in [0, 1] of a regression target."""
        lab = self.label_encoder
        if lab is None:
            return None
        X = lab.encode(df, warn=False).X
        return X[:, 0] if lab.columns[0].kind == "numeric" else X.argmax(axis=1)

    def empty(self) -> SufficientStats:
        return SufficientStats(p=self.p, second_moment=self.second_moment, preprocessing=self.preprocessing)

    def stats(self, df: pd.DataFrame, row_offset: int = 0) -> SufficientStats:
        """The chunk's statistics after every per-record step."""
        st = self.empty()
        if len(df):
            ch = self.encode(df, row_offset)
            st.update(apply_steps(ch.X, self.preprocessing), ch.y, self.n_classes)
            st.clip_counts = ch.clip_counts
        return st
