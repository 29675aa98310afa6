"""Information preservation of a released table: entropy and KL divergence (Jiang et al. Fig. 4).

The paper names the measures but not the estimator (ALGORITHMS.md 7.1 [A]). Ours:

* Discretisation (public, data-independent): each numeric attribute is cut into
  ``bins`` = 10 equal-width bins of its declared schema range; each categorical attribute
  keeps its declared levels. The label is included when present.
* ``kind="joint"`` (default): the empirical distribution of whole discretised records
  (one cell per distinct combination of all attributes).
  Entropy: plug-in ``H(P) = -sum_cells p log2 p`` (bits, no smoothing).
  KL: ``D_KL(P || Q) = sum_cells p log2 (p / q)`` with P the released and Q the original
  table (the paper's order), both smoothed by adding ``alpha = 0.5`` to every cell of
  the union of the cells observed in either table (add-one-half/Jeffreys smoothing on
  the observed support; cells seen in neither table are left out).
* ``kind="marginals"``: the same quantities per attribute over all of its public cells
  (bins or levels), smoothed with ``alpha`` on every cell, summed over attributes.

Generalised tables (DiffGen) can be measured on their own generalised values by passing
code matrices directly (:func:`entropy_bits` takes any integer or string codes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..schema import Schema

ALPHA = 0.5
BINS = 10


def discretize(df: pd.DataFrame, schema: Schema, bins: int = BINS, columns=None) -> np.ndarray:
    """Integer codes (n, attributes): numeric attributes in equal-width public bins, categories as levels."""
    cols = [c for c in schema.columns if columns is None or c.name in columns]
    out = np.zeros((len(df), len(cols)), dtype=np.int64)
    for j, c in enumerate(cols):
        if c.kind == "numeric":
            v = pd.to_numeric(df[c.name]).to_numpy(dtype=float)
            t = (np.clip(v, c.lower, c.upper) - c.lower) / (c.upper - c.lower)
            out[:, j] = np.minimum((t * bins).astype(np.int64), bins - 1)
        else:
            codes = pd.Categorical(df[c.name].astype(str), categories=list(c.categories)).codes
            out[:, j] = codes
    return out


def cardinalities(schema: Schema, bins: int = BINS, columns=None) -> list[int]:
    return [bins if c.kind == "numeric" else len(c.categories)
            for c in schema.columns if columns is None or c.name in columns]


def _cells(codes: np.ndarray):
    codes = np.asarray(codes)
    if codes.ndim == 1:
        codes = codes[:, None]
    keys = pd.MultiIndex.from_arrays([codes[:, j] for j in range(codes.shape[1])]) if codes.shape[1] > 1 \
        else pd.Index(codes[:, 0])
    return pd.Series(1, index=keys).groupby(level=list(range(codes.shape[1]))).sum()


def entropy_bits(codes: np.ndarray, kind: str = "joint") -> float:
    """Plug-in entropy (bits) of the rows of ``codes`` (joint) or the sum of column entropies (marginals).

    >>> entropy_bits(np.array([[0], [1], [0], [1]]))
    1.0
    """
    codes = np.asarray(codes)
    if kind == "marginals":
        return float(sum(entropy_bits(codes[:, j:j + 1]) for j in range(codes.shape[1])))
    c = _cells(codes).to_numpy(dtype=float)
    p = c / c.sum()
    return float(-(p * np.log2(p)).sum())


def kl_divergence_bits(released: np.ndarray, original: np.ndarray, kind: str = "joint", alpha: float = ALPHA,
                       cardinality=None) -> float:
    """``D_KL(P_released || Q_original)`` in bits with additive smoothing (see the module notes).

    >>> round(kl_divergence_bits(np.array([[0], [1]]), np.array([[0], [1]])), 12)
    0.0
    """
    released, original = np.asarray(released), np.asarray(original)
    if kind == "marginals":
        total = 0.0
        for j in range(released.shape[1]):
            k = None if cardinality is None else cardinality[j]
            cells = np.arange(k) if k is not None else np.union1d(released[:, j], original[:, j])
            p = pd.Series(released[:, j]).value_counts().reindex(cells, fill_value=0).to_numpy(float) + alpha
            q = pd.Series(original[:, j]).value_counts().reindex(cells, fill_value=0).to_numpy(float) + alpha
            p, q = p / p.sum(), q / q.sum()
            total += float((p * np.log2(p / q)).sum())
        return total
    cp, cq = _cells(released), _cells(original)
    support = cp.index.union(cq.index)
    p = cp.reindex(support, fill_value=0).to_numpy(float) + alpha
    q = cq.reindex(support, fill_value=0).to_numpy(float) + alpha
    p, q = p / p.sum(), q / q.sum()
    return float((p * np.log2(p / q)).sum())
