"""Mergeable sufficient statistics: ``n``, ``sum x``, ``sum x x^T``, overall and per class.

The same :class:`SufficientStats` is produced by an in-memory matrix, by chunks
streamed from CSV/Parquet (:mod:`privrelease.engine.streaming`) and by a Dask
collection (:mod:`privrelease.engine.distributed`); merging is exact addition, so the
three paths agree up to floating-point summation order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .preprocess import apply_steps, check_steps


@dataclass
class SufficientStats:
    """Sums over records of an encoded matrix (no noise: private until a mechanism adds it).

    Attributes
    ----------
    n : number of records
    s1 : ``sum_i x_i`` (length p)
    s2 : ``sum_i x_i x_i^T`` (p x p), or None if not requested
    classes : per-class statistics keyed by integer class code, or empty
    preprocessing : the per-record steps applied before summing (see
        :mod:`privrelease.engine.preprocess`); statistics merge only with equal steps
    clip_counts : per-column numbers of values clipped to the schema's bounds while encoding
        (exact, private diagnostics; never published)
    """

    p: int
    n: int = 0
    s1: np.ndarray | None = None
    s2: np.ndarray | None = None
    classes: dict[int, "SufficientStats"] = field(default_factory=dict)
    second_moment: bool = True
    preprocessing: tuple = ()
    clip_counts: dict = field(default_factory=dict)

    def __post_init__(self):
        self.preprocessing = check_steps(self.preprocessing)
        if self.s1 is None:
            self.s1 = np.zeros(self.p)
        if self.s2 is None and self.second_moment:
            self.s2 = np.zeros((self.p, self.p))

    @classmethod
    def from_matrix(cls, X: np.ndarray, y: np.ndarray | None = None, n_classes: int | None = None,
                    second_moment: bool = True, preprocessing=()) -> "SufficientStats":
        """Statistics of an encoded matrix ``X`` (and optional integer labels ``y``), after the
        per-record ``preprocessing`` steps (e.g. ``(("row_norm_bound", 0.5),)``)."""
        X = apply_steps(np.asarray(X, dtype=np.float64), preprocessing)
        st = cls(p=X.shape[1], second_moment=second_moment, preprocessing=preprocessing)
        st.update(X, y, n_classes)
        return st

    def update(self, X: np.ndarray, y: np.ndarray | None = None, n_classes: int | None = None) -> "SufficientStats":
        """Add a chunk of records in place (one BLAS call per class for the second moment)."""
        X = np.asarray(X, dtype=np.float64)
        if X.shape[1] != self.p:
            raise ValueError(f"chunk has {X.shape[1]} columns, statistics have {self.p}")
        self.n += X.shape[0]
        self.s1 += X.sum(axis=0)
        if y is None:
            if self.second_moment:
                self.s2 += X.T @ X
            return self
        y = np.asarray(y)
        k = int(n_classes) if n_classes is not None else int(y.max(initial=-1)) + 1
        for c in range(k):
            Xc = X[y == c]
            cs = self.classes.get(c)
            if cs is None:
                cs = self.classes[c] = SufficientStats(p=self.p, second_moment=self.second_moment)
            cs.n += Xc.shape[0]
            cs.s1 += Xc.sum(axis=0)
            if self.second_moment:
                cs.s2 += Xc.T @ Xc
        if self.second_moment:
            # overall second moment as the sum of the class moments (no second pass)
            self.s2 = sum((cs.s2 for cs in self.classes.values()), np.zeros((self.p, self.p)))
        return self

    def merge(self, other: "SufficientStats") -> "SufficientStats":
        """Exact sum of two statistics over disjoint record sets (returns a new object)."""
        if other.p != self.p:
            raise ValueError("cannot merge statistics of different widths")
        if other.preprocessing != self.preprocessing:
            raise ValueError(f"cannot merge statistics preprocessed differently ({self.preprocessing} and "
                             f"{other.preprocessing})")
        counts = dict(self.clip_counts)
        for k, v in other.clip_counts.items():
            counts[k] = counts.get(k, 0) + v
        out = SufficientStats(p=self.p, n=self.n + other.n, s1=self.s1 + other.s1,
                              s2=None if not self.second_moment else self.s2 + other.s2,
                              second_moment=self.second_moment, preprocessing=self.preprocessing,
                              clip_counts=counts)
        for c in set(self.classes) | set(other.classes):
            a, b = self.classes.get(c), other.classes.get(c)
            out.classes[c] = a.merge(b) if (a is not None and b is not None) else _copy(a or b)
        return out

    def __add__(self, other):
        return self.merge(other)

    @property
    def mean(self) -> np.ndarray:
        return self.s1 / max(self.n, 1)

    @property
    def covariance(self) -> np.ndarray:
        """Empirical (biased) covariance ``S2/n - mean mean^T``."""
        m = self.mean
        return self.s2 / max(self.n, 1) - np.outer(m, m)


def _copy(s: SufficientStats) -> SufficientStats:
    out = SufficientStats(p=s.p, n=s.n, s1=s.s1.copy(), s2=None if s.s2 is None else s.s2.copy(),
                          second_moment=s.second_moment, preprocessing=s.preprocessing,
                          clip_counts=dict(s.clip_counts))
    out.classes = {c: _copy(v) for c, v in s.classes.items()}
    return out
