"""Audits of the exponential-mechanism selections (Gumbel-max) and DiffGen's leaf counts.

A selection's "halved noise" mutant is the selection run at twice its epsilon: the mutant
source multiplies that Gumbel draw by one half (``argmax(a + G/2) = argmax(2a + G)``), through
:class:`~privrelease.evaluation.audit.HalvedNoiseSource`, so nothing of the mechanism is
patched. The exponential mechanism's analysis keeps a factor 2 of slack (the normaliser may
move against the selected score); on these pairs the normalisers are equal, so the real
mechanism realises epsilon/2 exactly, the 2x-epsilon mutant realises epsilon (caught against
the calibrated loss epsilon/2, not against the claim), and the 4x-epsilon (quarter-noise)
mutant realises 2 epsilon and is caught against the claim.

* exponential (per-record, public grid): one numeric column, the record 0 replaced by 1;
  each row of a row-aligned release is an independent run, so k runs are one transform of k
  copies of the record (one Gumbel draw for all of them). Event: output 0.
* blr: a pool of two one-record candidates and 20 queries, the same for every run (the pool
  and queries are public randomness drawn from the source's generator before the data are
  read; the audit fixes them and redraws only the selection's Gumbel noise). One record: the
  first candidate's record in d0, the second's in d1, so the utilities move from (0, -1) to
  (-1, 0). Event: the first candidate is selected.
* diffgen leaf counts (h = 0, one categorical attribute, two classes): a record changes
  class, the two (root, class) counts move by 1 each: L1 change 2, the sensitivity used.
"""

from __future__ import annotations

import numpy as np
import pytest

from draw_audit_cases import DrawCase, case_tests
from privrelease.evaluation.audit import HalvedNoiseSource, audit_epsilon
from privrelease.mechanisms import pca_gauss_baselines as B
from privrelease.mechanisms.diffgen import DiffGen
from privrelease.mechanisms.exponential import ExponentialRecords
from privrelease.noise import SeededSource
from privrelease.schema.encoding import EncodedDomain

EPS = 1.0


def mutant(rng, factor, inner=None):
    """The seeded source, or the mutant with the first noise draw (the selection) times ``factor``."""
    inner = SeededSource(rng) if inner is None else inner
    return inner if factor == 1 else HalvedNoiseSource(inner, draw=0, factor=factor)


# ---- exponential -----------------------------------------------------------------------------

def exponential_batch(factor):
    def batch(x, rng, k):
        X = np.full((k, 1), float(x))
        return ExponentialRecords(EPS, rng=mutant(rng, factor)).fit(X).transform(X)[:, 0]
    return batch


def audit_exponential(factor, trials, seed):
    return audit_epsilon(batch=exponential_batch(factor), d0=0.0, d1=1.0, event=lambda s: s == 0.0,
                         trials=trials, seed=seed, claimed=EPS)


# ---- blr -------------------------------------------------------------------------------------

BLR_PARAMS = dict(n_candidates=2, candidate_size=1, n_queries=20)
POOL_SEED = 3


class FixedPoolSource(SeededSource):
    """Fresh noise from ``rng``; the public pool and queries from a generator seeded with POOL_SEED."""

    def __init__(self, rng):
        super().__init__(rng)
        self._pool = np.random.default_rng(POOL_SEED)

    @property
    def generator(self):
        return self._pool


def blr_candidates():
    """The two candidates' records (public): read from runs at a negligible epsilon (uniform choice)."""
    found = {}
    for t in range(200):
        m = B.BLR(1e-9, rng=FixedPoolSource(np.random.default_rng(t)), **BLR_PARAMS).fit(np.zeros((1, 2)))
        found.setdefault(m.selected_, m.chosen_.copy())
        if len(found) == 2:
            return found[0], found[1]
    raise AssertionError("the pool's candidates were not found")


def blr_run(factor):
    def run(X, rng):
        return float(B.BLR(EPS, rng=mutant(rng, factor, FixedPoolSource(rng)), **BLR_PARAMS).fit(X).selected_)
    return run


def audit_blr(factor, trials, seed):
    a, b = blr_candidates()
    return audit_epsilon(run=blr_run(factor), d0=a, d1=b, event=lambda s: s == 0.0, trials=trials, seed=seed,
                         claimed=EPS)


def test_blr_pair_moves_both_utilities_by_the_sensitivity():
    a, b = blr_candidates()
    s0 = B.BLR(EPS, rng=FixedPoolSource(np.random.default_rng(0)), **BLR_PARAMS).fit(a).scores_
    s1 = B.BLR(EPS, rng=FixedPoolSource(np.random.default_rng(0)), **BLR_PARAMS).fit(b).scores_
    assert np.array_equal(s0, [0.0, -1.0]) and np.array_equal(s1, [-1.0, 0.0])  # Delta_u = 1/n = 1


# ---- the selections: real <= claim, 2x-epsilon mutant at the calibrated loss, 4x caught -----------

SELECTIONS = {"exponential": (audit_exponential, 200_000, 1_000_000), "blr": (audit_blr, 10_000, 40_000)}


def check_selection(name, trials, seed):
    audit, _, _ = SELECTIONS[name]
    real = audit(1, trials, seed)
    assert real.epsilon_lower <= EPS, real.summary()
    half = audit(0.5, trials, seed + 1)
    assert half.epsilon_lower > EPS / 2, half.summary()  # caught against the loss this pair realises
    quarter = audit(0.25, trials, seed + 2)
    assert quarter.epsilon_lower > EPS, quarter.summary()
    return real, half, quarter


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_ci_slice(name):
    check_selection(name, SELECTIONS[name][1], seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_full(name):
    check_selection(name, SELECTIONS[name][2], seed=11)


# ---- diffgen's leaf counts (Laplace): audited per draw like the other Laplace statistics ------------

DIFFGEN_DOM = EncodedDomain(p=2, numeric=(), blocks=((0, 2),))


def diffgen_data(n0):
    X = np.zeros((20, 2))
    X[:, 0] = 1
    return X, np.r_[np.zeros(n0), np.ones(20 - n0)].astype(int)


def diffgen_fit(D, source):
    return DiffGen(EPS, n_specializations=0, domain=DIFFGEN_DOM, n_classes=2, rng=source).fit(*D)


CASES = [DrawCase("diffgen", "counts", diffgen_fit, diffgen_data(10), diffgen_data(9),
                  "h=0, one record changes class (10/10 -> 9/11)", EPS)]

test_ci_slice, test_full = case_tests(CASES)


if __name__ == "__main__":  # pragma: no cover - measured numbers of docs/audits.md
    import time

    for name, (audit, ci, full) in sorted(SELECTIONS.items()):
        for trials in (ci, full):
            t = time.perf_counter()
            r, h, q = (audit(f, trials, s) for f, s in ((1, 1), (0.5, 2), (0.25, 3)))
            print(f"{name} trials {trials}: real {r.epsilon_lower:.3f}, x0.5 {h.epsilon_lower:.3f}, "
                  f"x0.25 {q.epsilon_lower:.3f} ({time.perf_counter() - t:.1f}s)")
