"""Statistical privacy tests of gauss-copula's numeric trees and missing cells with the empirical audit.

New noised statistics: the finer levels of every numeric tree (one Gaussian release per level, of
the children of the nodes split so far) and the missing cell of a column that may be missing.
Derivation (the class Notes, docs/derivations.md): every round uses the std
``sigma = sqrt(2 d) / sqrt(2 rho_hist)`` with ``d`` the histograms over all levels, each round's
vector has L2 sensitivity ``sqrt(2 d_l)``, so the rounds together cost ``rho_hist``.

Tree witness (worst case for one column): a tree of depth R = 3 (an atom at each bound, 32
intervals, branching 4); the other records half at value A, half at value B (so every node on
the two paths is split and measured in every round), the target at A in d0 and at B in d1 (with
labels: from (class 0, A) to (class 1, B)). The statistic sums, over the R rounds, the released
count of A's node minus B's (read from the mechanism's transcript, located with
``measured_nodes_``): its mean moves by 2R and its std is ``sqrt(2R) sigma``, so it carries the
whole privacy loss of the column's R releases (``sqrt(2R) / sigma = sqrt(2 rho_hist)`` when
``d = R``). Missing witness: a column of 11 grid values that may be missing (one level); the
target moves from missing to value A, the others sit at B: the statistic is the missing cell's
count minus A's (mean moves by 2, std ``sqrt(2) sigma``).

The audit's epsilon bound stays at or below the claimed epsilon for the real mechanism, and the GDP bound on the
same statistic exceeds the histograms' claim ``mu = sqrt(2 rho_hist)`` for a mutant whose histogram noise is halved. Paths: one chunk in memory, streamed chunks of
250 rows (this file), and the Dask engine's counts (``test_audit_gauss_copula_dask.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_audit_gauss_pca import RecordingSource

import privrelease.mechanisms.gauss_mixture.copula_measure as measure_mod
import privrelease.mechanisms.gauss_mixture.gauss_copula as gc
from privrelease.audit import audit_epsilon
from privrelease.audit.gdp_bound import audit_mu
from privrelease.engine.passes import ChunkPasses

N, SHARE, DELTA = 1000, 0.99, 1e-5
REAL_SENSITIVITY = measure_mod.histogram_sensitivity
TREE = dict(grids=((0.0, 1.0, 0.0),), branching=4, max_leaves=34)  # atom, 32 intervals, atom: depth 3
A, B = 0.05, 0.75  # leaves 2 and 25: different nodes at every level, each parent with 4 children
MISSING = dict(grids=((0.0, 10.0, 1.0),), missing=(True,), branching=16)  # 12 leaves (missing first): one level
M_A, M_B = 0.3, 0.7  # grid values 3 and 7: leaves 4 and 8


def tree_pair(labelled=False):
    others = np.where(np.arange(N - 1) < N // 2, A, B)[:, None]
    d0, d1 = np.vstack([[A], others]), np.vstack([[B], others])
    if not labelled:
        return (d0, None), (d1, None)
    y = np.concatenate([[0], (others[:, 0] == B).astype(int)])
    y1 = y.copy()
    y1[0] = 1
    return (d0, y), (d1, y1)


def missing_pair():
    others = np.full((N - 1, 1), M_B)
    return (np.vstack([[np.nan], others]), None), (np.vstack([[M_A], others]), None)


def in_memory(data):
    X, y = data
    return ChunkPasses(lambda: iter([(X, y)]))


def streamed(data):
    X, y = data
    return ChunkPasses(lambda: ((X[i:i + 250], None if y is None else y[i:i + 250]) for i in range(0, len(X), 250)))


def _tree_stat(m, src):
    """Sum over the rounds of the released count of A's node (class 0) minus B's (class 1 with labels)."""
    t = m.cells_[0]
    la, lb = t.index(np.array([A, B]))
    ga, gb = (0, 1) if m.groups_ > 1 else (0, 0)
    nodes0 = t.levels[0].size - 1
    top = src.releases[0]
    na, nb = (np.searchsorted(t.levels[0], [la, lb], side="right") - 1)
    stat = top[ga * nodes0 + na] - top[gb * nodes0 + nb]
    assert len(m.measured_nodes_) == t.depth - 1, "every level must be released in the witness"
    for lev, ids in enumerate(m.measured_nodes_, start=1):
        na, nb = (np.searchsorted(t.levels[lev], [la, lb], side="right") - 1)
        ia = np.flatnonzero((ids[:, 1] == ga) & (ids[:, 2] == na))
        ib = np.flatnonzero((ids[:, 1] == gb) & (ids[:, 2] == nb))
        stat += src.releases[lev][ia[0]] - src.releases[lev][ib[0]]
    return stat


def _missing_stat(m, src):
    la = m.cells_[0].index(np.array([M_A]))[0]
    return src.releases[0][0] - src.releases[0][la]


def batch(eps, kind, labelled, make_passes):
    params, stat = (TREE, _tree_stat) if kind == "tree" else (MISSING, _missing_stat)

    def run(data, rng, k):
        out = np.empty(k)
        passes = make_passes(data)
        for i in range(k):
            src = RecordingSource(rng)
            # the histograms' rounds are the same code under either dependence model; the witness and its
            # event were designed at the mixture's split (the labelled table would otherwise take the
            # graphical model, whose rounds' selections change the calibration a little)
            m = gc.GaussCopula(eps, DELTA, marginal_share=SHARE, rng=src, n_classes=2 if labelled else None,
                               by_label=True, dependence="mixture", **params)
            m.fit_marginals(passes, p=1)
            assert m.groups_ == (2 if labelled else 1)
            out[i] = stat(m, src)
        return out

    return run


def histograms_rho(eps, kind="tree", labelled=False):
    """The histograms' rho as the mechanism derives it from (epsilon, delta, share): public, read from one fit on
    d0 (its budget, not its noise). ``SHARE * calibrate_rho`` is 16 % more than the mechanism's conversion spends,
    which had put the event at 2.77 mutant stds above d1's mean, not 3, and the mutant's bound near the claim."""
    d0 = (tree_pair(labelled) if kind == "tree" else missing_pair())[0]
    m = gc.GaussCopula(eps, DELTA, marginal_share=SHARE, rng=0, n_classes=2 if labelled else None, by_label=True,
                       dependence="mixture", **(TREE if kind == "tree" else MISSING))
    m.fit_marginals(in_memory(d0), p=1)
    return m.rho_split_["marginals"]


def event(eps, rounds, labelled=False):
    """stat >= d1 mean + 3 mutant stds (d1 mean: 0 for the tree, -1 for the missing cell)."""
    rho_h = histograms_rho(eps, "tree" if rounds > 1 else "missing", labelled)
    sigma = math.sqrt(2.0 * rounds) / math.sqrt(2.0 * rho_h)
    std_real = math.sqrt(2.0 * rounds) * sigma
    base = 0.0 if rounds > 1 else -1.0
    return lambda stats: np.asarray(stats) >= base + 3.0 * std_real / 2.0


def audit(eps, trials, seed, kind="tree", labelled=False, make_passes=in_memory):
    d0, d1 = tree_pair(labelled) if kind == "tree" else missing_pair()
    rounds = 3 if kind == "tree" else 1
    return audit_epsilon(batch=batch(eps, kind, labelled, make_passes), d0=d0, d1=d1, event=event(eps, rounds, labelled),
                         trials=trials, seed=seed, delta=DELTA, claimed=eps)


def check_real_and_mutant(monkeypatch, eps, trials, seeds, kind="tree", labelled=False, make_passes=in_memory):
    """The real mechanism's epsilon bound at most the claim; the halved-noise mutant's GDP bound on the same statistic
    above the histograms' claim ``mu = sqrt(2 rho_hist)`` (the statistic carries it whole, above). At 20,000 trials
    the epsilon bound caught this mutant with too little margin to rely on (its bound 1.97-2.28 against 2 over the
    witnesses' seeds: the event's tail holds a few dozen runs); the mu bound uses the whole trade-off curve (it reads
    0.88 against 0.46, and the real mechanism 0.47 at its point). It needs fewer trials: at 12,000 the tree's mutant
    reads 0.85-0.89 over the CI seeds, at 8,000 the missing cell's 0.79-0.81 (the tree's fell to 0.60 on one seed at
    8,000: the threshold is chosen on half of the runs, the bound computed on the other half)."""
    real = audit(eps, trials, seeds[0], kind, labelled, make_passes)
    assert real.epsilon_lower <= eps, real.summary()
    claim = math.sqrt(2.0 * histograms_rho(eps, kind, labelled))
    monkeypatch.setattr(measure_mod, "histogram_sensitivity", lambda d: REAL_SENSITIVITY(d) / 2)
    d0, d1 = tree_pair(labelled) if kind == "tree" else missing_pair()
    mutant = audit_mu(batch=batch(eps, kind, labelled, make_passes), d0=d0, d1=d1, trials=trials, seed=seeds[1],
                      claimed=claim)
    assert mutant.caught, mutant.summary()


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("labelled", [False, True])
def test_tree_levels_audit_ci_slice(monkeypatch, labelled):
    check_real_and_mutant(monkeypatch, 2.0, 12_000, (11, 12), "tree", labelled)


@pytest.mark.slow
@pytest.mark.ci_slice
def test_missing_cell_audit_ci_slice(monkeypatch):
    check_real_and_mutant(monkeypatch, 2.0, 8_000, (13, 14), "missing")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["tree", "missing"])
def test_streamed_audit(monkeypatch, kind):
    check_real_and_mutant(monkeypatch, 2.0, 20_000, (15, 16), kind, make_passes=streamed)
