"""Statistical privacy test of the one-way marginals of `gauss-copula` with the empirical audit.

The new noised statistic is the stacked vector of one-way histograms over public cells
(L2 sensitivity ``sqrt(2 d)``, d columns). Worst-case neighbours from the derivation: one
continuous column (d = 1), the other records in a third cell, the target record in cell A
in d0 and in cell B in d1, so that two counts move by 1 each (the whole sensitivity
``sqrt(2)``). The statistic is ``noisy[A] - noisy[B]`` read from the mechanism's own
transcript (the released marginals are a post-processing of it): its mean moves by 2 and
its std is ``2 / sqrt(2 rho_hist)`` (two independent coordinates of std
``sqrt(2) / sqrt(2 rho_hist)``), so it carries the whole privacy loss of the release.
A second witness audits the joint label x column histograms (the default with a label):
the target record moves from (class 0, cell A) to (class 1, cell B). The pass runs through
:meth:`GaussCopula.fit_marginals`, the path every fit takes.

The audit's lower bound stays at or below the claimed epsilon for the real mechanism and
exceeds it for a mutant whose histogram noise is halved (its sensitivity halved).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import privrelease.mechanisms.gauss_mixture.copula_measure as measure_mod
import privrelease.mechanisms.gauss_mixture.gauss_copula as gc
from privrelease.engine.passes import ChunkPasses
from privrelease.audit import audit_epsilon
from privrelease.dp.calibration import calibrate_rho

from test_audit_gauss_pca import RecordingSource
from pca_audit_helpers import AUDITED_ACCOUNTING

N, SHARE, DELTA = 1000, 0.99, 1e-5
# one level of 6 cells (atom at 0, 4 intervals, atom at 1; branching above 6): the round-1 histogram
CELLS = dict(grids=((0.0, 1.0, 0.0),), max_leaves=6, branching=8)
BINS = 4
CELL_A, CELL_B = 1, 4  # cells of 0.1 and 0.9; others sit at 0.4 -> cell 2
REAL_SENSITIVITY = measure_mod.histogram_sensitivity


def pair(labelled=False):
    """Unlabelled: the target moves from cell A to cell B. Labelled (joint label x column
    histogram, 2 classes, rows of 6 cells): it moves from (class 0, A) to (class 1, B)."""
    others = np.full((N - 1, 1), 0.4)
    d0, d1 = np.vstack([[0.1], others]), np.vstack([[0.9], others])
    if not labelled:
        return (d0, None), (d1, None)
    y = np.zeros(N, dtype=int)
    y1 = y.copy()
    y1[0] = 1
    return (d0, y), (d1, y1)


def in_memory(data):
    """The pass executor of a fit in memory: the whole table as one chunk."""
    X, y = data
    return ChunkPasses(lambda: iter([(X, y)]))


def batch(eps, labelled=False, make_passes=in_memory):
    """``make_passes(data)``: the executor that runs the mechanism's count map over the table."""
    width = BINS + 2
    a, b = (CELL_A, width + CELL_B) if labelled else (CELL_A, CELL_B)

    def run(data, rng, k):
        out = np.empty(k)
        passes = make_passes(data)
        for i in range(k):
            src = RecordingSource(rng)
            m = gc.GaussCopula(eps, DELTA, accounting=AUDITED_ACCOUNTING, marginal_share=SHARE, rng=src,
                               n_classes=2 if labelled else None, by_label=True, **CELLS)
            m.fit_marginals(passes, p=1)
            assert m.cells_ and m.groups_ == (2 if labelled else 1), "the witness must release the histogram"
            noisy = src.releases[-1]
            out[i] = noisy[a] - noisy[b]
        return out

    return run


def event(eps):
    """stat >= d1 mean + 3 mutant stds: fixed from the design before any run."""
    rho_h = SHARE * calibrate_rho(eps, DELTA)  # at least the histograms' share (the mixture gets the rest)
    std_real = 2.0 / math.sqrt(2.0 * rho_h)
    thr = -1.0 + 3.0 * std_real / 2.0
    return lambda stats: np.asarray(stats) >= thr


def audit(eps, trials, seed, labelled=False, make_passes=in_memory):
    d0, d1 = pair(labelled)
    return audit_epsilon(batch=batch(eps, labelled, make_passes), d0=d0, d1=d1, event=event(eps), trials=trials,
                         seed=seed, delta=DELTA, claimed=eps)


def check_real_and_mutant(monkeypatch, eps, trials, seeds, labelled=False, make_passes=in_memory):
    """The real release passes the audit at ``eps``; the halved-noise mutant is caught."""
    real = audit(eps, trials, seed=seeds[0], labelled=labelled, make_passes=make_passes)
    assert real.epsilon_lower <= eps, real.summary()
    monkeypatch.setattr(measure_mod, "histogram_sensitivity", lambda d: REAL_SENSITIVITY(d) / 2)
    mutant = audit(eps, trials, seed=seeds[1], labelled=labelled, make_passes=make_passes)
    assert mutant.epsilon_lower > eps, mutant.summary()


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("labelled", [False, True])
def test_marginals_audit_ci_slice(monkeypatch, labelled):
    check_real_and_mutant(monkeypatch, 2.0, 20_000, (1, 2), labelled)


@pytest.mark.slow
def test_marginals_audit_epsilon_one(monkeypatch):
    check_real_and_mutant(monkeypatch, 1.0, 60_000, (3, 4))
