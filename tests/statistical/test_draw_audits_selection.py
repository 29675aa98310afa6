"""Audits of the exponential-mechanism selections (exact sampler) and DiffGen's leaf counts.

A selection's "halved noise" mutant is the selection run at twice its epsilon: the mutant
source draws that selection at twice its rate (``epsilon / (2 Delta_u)``), through
:class:`~privrelease.audit.HalvedNoiseSource`, so nothing of the mechanism is
patched. The exponential mechanism's analysis keeps a factor 2 of slack (the normaliser may
move against the selected score); on these pairs the normalisers are equal, so the real
mechanism realises epsilon/2 exactly, the 2x-epsilon mutant realises epsilon (caught against
the calibrated loss epsilon/2, not against the claim), and the 4x-epsilon (quarter-noise)
mutant realises 2 epsilon and is caught against the claim.

* exponential (per-record, public grid): one numeric column, the record 0 replaced by 1;
  each row of a row-aligned release is an independent run, so k runs are one transform of k
  copies of the record (one selection draw for all of them). Event: output 0.
* blr: a pool of two one-record candidates and 20 queries, the same for every run (the pool
  and queries are public randomness drawn from the source's generator before the data are
  read; the audit fixes them and redraws only the selection). One record: the
  first candidate's record in d0, the second's in d1, so the utilities move from (0, -1) to
  (-1, 0). Event: the first candidate is selected.
* gauss-pca dimension selection (``n_components="select"`` over the grid (1, 2)): two numeric
  columns, 199 records at (0.5, 0.5), the record at (0.8, 0.5) in d0 and (0.5, 0.8) in d1 (public
  clip radius R = 0.2: z = R e1 or R e2). The earlier releases (centre, sums, basis) are fixed
  at their exact values on d0 (:func:`~privrelease.audit.exact_prefix`): V = (e1, e2),
  so the captured energy of P = 1 moves from R^2 to 0 (the utility's sensitivity) while P = 2
  keeps R^2; each run replays them and stops after the selection. The audit compares with the
  selection's own epsilon (``selection_["epsilon"]`` = sqrt(8 rho_sel), 1.05 here: total epsilon
  30 with a small selection share, so that the penalty term does not swamp the selection).
  Event: P = 2 selected.
* diffgen specialisation choice (h = 1, two categorical attributes A, B of two levels, two
  classes, MAX score, no numeric attribute: the first noise draw is that choice, charged
  epsilon' = epsilon / 4 = 1 at epsilon 4): the record (A, B, y) = (0, 0, 1) -> (0, 0, 0) moves
  the score of specialising A from 6 to 7 and that of B from 9 to 8. A replacement moves a MAX
  score by at most 1 (removing lowers it by 0 or 1, adding raises it by 0 or 1), half the
  sensitivity 2 used, so the real choice realises at most epsilon'/2 on any pair; the audit
  compares with epsilon' (``eps_prime_``). Event: A chosen. Runs stop after the choice.
* diffgen root split point (one numeric attribute, h = 1, MAX score, epsilon 6: the first noise
  draw is the split interval's choice, charged epsilon' = epsilon / 6 = 1): 12 records of class
  0 at 0.2 and 12 of class 1 at 0.8; the record at 0.427 changes class 0 -> 1, which moves the
  scores of the intervals [0.2, 0.427) and [0.427, 0.8) by +1 and -1 (lengths in the ratio
  e^-0.5, so the choice is not balanced). Statistic: the released split (``cut_``); event: it
  lies in [0.2, 0.427). Whole runs (the split is released only when the attribute is specialised).
* diffgen leaf counts (h = 0, one categorical attribute, two classes): a record changes
  class, the two (root, class) counts move by 1 each: L1 change 2, the sensitivity used.
"""

from __future__ import annotations

import numpy as np
import pytest

from draw_audit_cases import DrawCase, case_tests
import privrelease.mechanisms.gauss_mixture.gauss_pca as gp
from privrelease.audit import HalvedNoiseSource, StopAtDraw, TranscriptSource, audit_epsilon, exact_prefix
from privrelease.mechanisms import baselines as B
from privrelease.mechanisms.baselines.diffgen import DiffGen
from privrelease.mechanisms.baselines.exponential import ExponentialRecords
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


# ---- gauss-pca's private dimension --------------------------------------------------------------

_REST = np.full((199, 2), 0.5)
SELECT_PAIR = (np.vstack([[0.8, 0.5], _REST]), np.vstack([[0.5, 0.8], _REST]))


def select_mechanism(source):
    split = {k: 1e-6 for k in gp.PARTS}
    split.update(centre=0.02, basis=1.0, moments=30.0)
    return gp.GaussPCA(epsilon=30.0, delta=1e-5, n_components="select", component_grid=(1, 2),
                       selection_share=0.013, clip_radius=0.2, budget_split=split, rng=source)


def select_prefix():
    """Exact centre, sums and basis of d0, then the selection (of the largest score); its index."""
    def fit(X, s):
        return select_mechanism(s).fit(X)
    full = exact_prefix(fit, SELECT_PAIR[0], 4)
    k = [d.kind for d in full].index("selection")
    return full[:k], k


def select_run(factor):
    prefix, k = select_prefix()

    def run(X, rng):
        inner = SeededSource(rng) if factor == 1 else HalvedNoiseSource(rng, draw=k, factor=factor)
        mech = select_mechanism(TranscriptSource(inner, replay=prefix, stop_at=k + 1))
        try:
            mech.fit(X)
        except StopAtDraw:  # the releases after the selection are not needed
            pass
        return float(mech.selection_["chosen"])
    return run


def select_epsilon():
    return select_mechanism(0).fit(SELECT_PAIR[0]).selection_["epsilon"]


def audit_gauss_pca_select(factor, trials, seed):
    d0, d1 = SELECT_PAIR
    return audit_epsilon(run=select_run(factor), d0=d0, d1=d1, event=lambda s: s == 2.0, trials=trials,
                         seed=seed, claimed=select_epsilon())


# ---- diffgen's specialisation choice ---------------------------------------------------------------

SPEC_DOM = EncodedDomain(p=4, numeric=(), blocks=((0, 2), (2, 4)))
SPEC_BASE = [(0, 1, 0), (0, 0, 0), (1, 1, 0), (1, 1, 0), (0, 1, 1), (0, 0, 1), (1, 0, 1), (1, 0, 1), (1, 0, 1),
             (1, 0, 0), (0, 1, 0)]  # (level of A, level of B, class)


def spec_data(target):
    recs = [target] + SPEC_BASE
    X = np.zeros((len(recs), 4))
    for i, (a, b, _) in enumerate(recs):
        X[i, a] = X[i, 2 + b] = 1.0
    return X, np.array([r[2] for r in recs])


def spec_mechanism(source):
    return DiffGen(4.0, score="max", n_specializations=1, domain=SPEC_DOM, n_classes=2, rng=source)


def spec_run(factor):
    def run(D, rng):
        mech = spec_mechanism(TranscriptSource(mutant(rng, factor), stop_at=1))
        try:
            mech.fit(*D)
        except StopAtDraw:  # the leaf counts are not needed
            pass
        return float(mech.specializations_[0]["attribute"])
    return run


def audit_diffgen_specialise(factor, trials, seed):
    d0, d1 = spec_data((0, 0, 1)), spec_data((0, 0, 0))
    eps_prime = spec_mechanism(0).fit(*d0).eps_prime_
    return audit_epsilon(run=spec_run(factor), d0=d0, d1=d1, event=lambda s: s == 0.0, trials=trials, seed=seed,
                         claimed=eps_prime)


def test_diffgen_specialise_pair_moves_the_scores_by_one():
    from privrelease.mechanisms.baselines.diffgen import max_score

    def scores(D):
        X, y = D
        out = []
        for a, b in SPEC_DOM.blocks:
            cc = np.zeros((2, 2))
            np.add.at(cc, (X[:, a:b].argmax(1), y), 1)
            out.append(float(max_score(cc)))
        return out

    assert scores(spec_data((0, 0, 1))) == [6.0, 9.0] and scores(spec_data((0, 0, 0))) == [7.0, 8.0]


# ---- diffgen's root split point -----------------------------------------------------------------------

SPLIT_AT = 0.427


def split_data(label):
    X = np.r_[SPLIT_AT, np.full(12, 0.2), np.full(12, 0.8)][:, None]
    return X, np.r_[label, np.zeros(12, int), np.ones(12, int)]


def split_mechanism(source):
    return DiffGen(6.0, score="max", n_specializations=1, domain=EncodedDomain.numeric_box(1), n_classes=2,
                   rng=source)


def split_run(factor):
    def run(D, rng):
        return split_mechanism(mutant(rng, factor)).fit(*D).cut_[0][0][1]
    return run


def audit_diffgen_split(factor, trials, seed):
    d0, d1 = split_data(0), split_data(1)
    eps_prime = split_mechanism(0).fit(*d0).eps_prime_
    return audit_epsilon(run=split_run(factor), d0=d0, d1=d1, event=lambda s: (s >= 0.2) & (s < SPLIT_AT),
                         trials=trials, seed=seed, claimed=eps_prime)


# ---- the selections: real <= claim, 2x-epsilon mutant at the calibrated loss, 4x caught -----------

SELECTIONS = {"exponential": (audit_exponential, 200_000, 1_000_000), "blr": (audit_blr, 10_000, 40_000),
              "gauss-pca-select": (audit_gauss_pca_select, 4_000, 20_000),
              "diffgen-specialise": (audit_diffgen_specialise, 4_000, 20_000),
              "diffgen-split": (audit_diffgen_split, 15_000, 40_000)}


def check_selection(name, trials, seed):
    audit, _, _ = SELECTIONS[name]
    real = audit(1, trials, seed)
    eps = real.claimed
    assert real.epsilon_lower <= eps, real.summary()
    half = audit(0.5, trials, seed + 1)
    assert half.epsilon_lower > eps / 2, half.summary()  # caught against the loss this pair realises
    quarter = audit(0.25, trials, seed + 2)
    assert quarter.epsilon_lower > eps, quarter.summary()
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
        for trials, seed in ((ci, 1), (full, 11)):  # the seeds of the CI slice and the full run
            t = time.perf_counter()
            r, h, q = (audit(f, trials, seed + i) for i, f in enumerate((1, 0.5, 0.25)))
            print(f"{name} trials {trials} claimed {r.claimed:.3f}: real {r.epsilon_lower:.3f}, x0.5 {h.epsilon_lower:.3f}, "
                  f"x0.25 {q.epsilon_lower:.3f} ({time.perf_counter() - t:.1f}s)")
