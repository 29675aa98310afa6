"""A release that honours noisy marginal measurements: a log-linear tilt of a candidate pool.

A candidate pool (records drawn from a model) is summarised by its *codes*: for every record
and attribute, the cell the record falls in. A measurement is a noisy count vector over the
cells of a few attributes (one-, two- or three-way marginal) with its noise std. The fitted
release gives every record the weight ``exp(sum_m theta_m[cell_m(record)])``, one parameter per
measured cell, found by iterative proportional fitting on the pool's records (raking) towards the
measurements *up to their noise*: each step rescales the records of every cell of one measurement
whose weighted count lies more than ``band`` noise stds from the noisy count, onto the edge of
that band (clipped at 0); cells within the band are left alone, so the fit does not chase the
noise (an empty noisy cell would otherwise remove every pool record in it). The
weights depend on a record only through its cells, so the fit runs on the pool's unique code
rows with their multiplicities, and fresh records from the same model are weighted by the same
``theta`` (:class:`Tilt`): the release draws candidates and resamples them by weight, chunk by
chunk, in memory that does not grow with n.

Nothing here sees data or a privacy parameter: only the released measurements, their noise
scales and records drawn from a released model (post-processing).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Raking factors are clipped to [1 / FACTOR_CLIP, FACTOR_CLIP] per step.
FACTOR_CLIP = 20.0
#: Every parameter stays in [-THETA_MAX, THETA_MAX]: one measurement changes a record's weight by
#: at most that factor in the log, so a cell the pool barely covers cannot hand a few records most
#: of the weight (the tilted release would be those records repeated).
THETA_MAX = 1.0
#: A measured cell is met when the pool's count lies within BAND noise stds of the noisy count.
BAND = 1.0


@dataclass(frozen=True)
class Measurement:
    """Noisy counts over the cells of ``attrs`` (row-major over their sizes), noise std ``sigma``."""

    attrs: tuple
    values: np.ndarray
    sigma: float


def flat_cells(codes: np.ndarray, attrs, sizes) -> np.ndarray:
    """Row-major cell index of every row of ``codes`` over the attributes ``attrs``."""
    idx = np.zeros(codes.shape[0], dtype=np.int64)
    for a in attrs:
        idx = idx * int(sizes[a]) + codes[:, a]
    return idx


@dataclass
class Tilt:
    """The fitted tilt: ``log w(record) = sum_m theta_m[cell_m(record)]`` (up to a constant)."""

    sizes: tuple
    attrs: list = field(default_factory=list)
    theta: list = field(default_factory=list)

    def log_weight(self, codes: np.ndarray) -> np.ndarray:
        out = np.zeros(codes.shape[0])
        for attrs, th in zip(self.attrs, self.theta):
            out += th[flat_cells(codes, attrs, self.sizes)]
        return out


class PoolFit:
    """Raking of a pool's weights to measurements, on the pool's unique code rows.

    Parameters
    ----------
    codes : (m, A) integer array, the cells of every pool record (A attributes)
    sizes : cells of every attribute
    total : the total the weights sum to (the public number of records)
    """

    def __init__(self, codes: np.ndarray, sizes, total: float):
        self.sizes = tuple(int(s) for s in sizes)
        uniq, counts = np.unique(np.asarray(codes), axis=0, return_counts=True)
        self.codes = np.asfortranarray(uniq, dtype=np.int64)  # one contiguous column per attribute
        self.base = counts.astype(np.float64)
        self.total = float(total)
        self.logw = np.zeros(len(self.codes))
        self.tilt = Tilt(self.sizes)
        self._targets: list = []
        self._index: list = []

    @property
    def n_unique(self) -> int:
        return len(self.codes)

    def weights(self) -> np.ndarray:
        """Current weights of the unique rows, summing to ``total``."""
        w = self.base * np.exp(self.logw - self.logw.max())
        return w * (self.total / w.sum())

    def marginal(self, attrs, w: np.ndarray | None = None) -> np.ndarray:
        """The weighted pool's counts over the cells of ``attrs`` (row-major)."""
        w = self.weights() if w is None else w
        size = int(np.prod([self.sizes[a] for a in attrs]))
        return np.bincount(flat_cells(self.codes, attrs, self.sizes), weights=w, minlength=size)

    def add(self, m: Measurement) -> None:
        """Take a measurement into the fit: the band ``[y - BAND sigma, y + BAND sigma]`` (clipped at 0)."""
        v = np.asarray(m.values, dtype=np.float64).ravel()
        size = int(np.prod([self.sizes[a] for a in m.attrs]))
        if v.size != size:
            raise ValueError(f"a measurement over {m.attrs} needs {size} cells, got {v.size}")
        half = BAND * float(m.sigma)
        self._targets.append((np.maximum(v - half, 0.0), np.maximum(v + half, 0.0)))
        self._index.append(flat_cells(self.codes, m.attrs, self.sizes))
        self.tilt.attrs.append(tuple(m.attrs))
        self.tilt.theta.append(np.zeros(size))

    def fit(self, sweeps: int, order=None) -> None:
        """``sweeps`` rounds of raking over the measurements (in ``order``, default as added), warm-started."""
        order = range(len(self._targets)) if order is None else order
        for _ in range(int(sweeps)):
            for i in order:
                w = self.weights()
                lo, hi = self._targets[i]
                q = np.bincount(self._index[i], weights=w, minlength=lo.size)
                f = np.where(q > 0, np.clip(q, lo, hi) / np.where(q > 0, q, 1.0), 1.0)
                th = self.tilt.theta[i]
                new = np.clip(th + np.log(np.clip(f, 1.0 / FACTOR_CLIP, FACTOR_CLIP)), -THETA_MAX, THETA_MAX)
                self.logw += (new - th)[self._index[i]]
                self.tilt.theta[i] = new
