"""Neighbouring-dataset audits of the DP schema draft's primitives (privrelease.dp.quantiles / .partition).

Quantile (exponential mechanism, utility sensitivity 1). Grid {0, 1}, q = 1/2, n = 2;
d0 = [0.5, -1] and d1 = [0.5, 1.5] differ in one record. Utilities (minus the distance from
q n = 1 to [#{x < c}, #{x <= c}]): d0 -> (0, -1), d1 -> (-1, 0). Event "output 0": the exact
loss is epsilon/2 (the mechanism's factor 2 covers the normaliser, which does not move
here); a halved-noise mutant realises epsilon and is caught against the calibrated loss
epsilon/2; a quarter-noise mutant realises 2 epsilon and is caught against the claim.

Partition selection (Laplace scale b = 2/epsilon, threshold tau). Two levels present in
both datasets: d0 = {a: ca, b: cb}, d1 = {a: ca + 1, b: cb - 1} (one record moved from b to
a), with ca + 1 <= tau <= cb - 1 so both decisions sit in the Laplace tails. Event "a kept,
b dropped" has the exact loss 2/b = epsilon (no delta is involved: no level appears or
disappears); a halved-noise mutant (scale b/2, same threshold) realises 2 epsilon and is caught.
"""

import math

import numpy as np
import pandas as pd
import pytest

import privrelease.dp.draft as draft
import privrelease.dp.partition as part
import privrelease.dp.quantiles as quant
from privrelease.audit import audit_epsilon
from privrelease.noise import make_source
from privrelease.schema.values import StatedFacts

EPS = 2.0
GRID = np.array([0.0, 1.0])
D0, D1 = [0.5, -1.0], [0.5, 1.5]


def _quantile_batch(data, rng, k):
    return quant.dp_quantile(data, 0.5, EPS, GRID, make_source(rng), size=k)


def _quantile_audit(seed, trials):
    return audit_epsilon(batch=_quantile_batch, d0=D0, d1=D1, event=lambda s: s == 0.0, trials=trials, seed=seed)


def test_quantile_utilities_of_the_audit_pair():
    assert quant.quantile_scores(D0, 0.5, GRID).tolist() == [0.0, -1.0]
    assert quant.quantile_scores(D1, 0.5, GRID).tolist() == [-1.0, 0.0]


def _quantile_mutants(monkeypatch, trials):
    res = _quantile_audit(0, trials)
    assert res.epsilon_lower <= EPS, res
    assert res.epsilon_lower > 0.4 * EPS, res  # tight on this pair (exact loss EPS/2)
    monkeypatch.setattr(quant, "QUANTILE_SENSITIVITY", 0.5)  # halved noise
    half = _quantile_audit(1, trials)
    assert half.epsilon_lower > 0.5 * EPS, half
    monkeypatch.setattr(quant, "QUANTILE_SENSITIVITY", 0.25)
    quarter = _quantile_audit(2, trials)
    assert quarter.epsilon_lower > EPS, quarter


TRIALS = [pytest.param(200_000, marks=pytest.mark.slow, id="full"),
          pytest.param(20_000, marks=[pytest.mark.slow, pytest.mark.ci_slice], id="slice")]


@pytest.mark.parametrize("trials", TRIALS)
def test_quantile_audit_and_mutants(monkeypatch, trials):
    _quantile_mutants(monkeypatch, trials)


DELTA = 1e-3


def _pair():
    _, tau = part.partition_parameters(EPS, DELTA)
    ca, cb = math.floor(tau) - 1, math.ceil(tau) + 1
    return np.array([ca, cb]), np.array([ca + 1, cb - 1])


def _partition_batch(counts, rng, k):
    return part.keep_mask(counts, EPS, DELTA, make_source(rng), size=k)


def _partition_audit(seed, trials):
    d0, d1 = _pair()
    return audit_epsilon(batch=_partition_batch, d0=d0, d1=d1, event=lambda s: (s[:, 0] > 0) & (s[:, 1] == 0),
                         trials=trials, seed=seed)


def _partition_mutant(monkeypatch, trials, audit=_partition_audit, tight=0.75):
    res = audit(0, trials)
    assert res.epsilon_lower <= EPS, res
    assert res.epsilon_lower > tight * EPS, res  # tight: the exact loss of the event is EPS
    orig = part.partition_parameters
    monkeypatch.setattr(part, "partition_parameters", lambda e, d: (orig(e, d)[0] / 2, orig(e, d)[1]))
    half = audit(1, trials)
    assert half.epsilon_lower > EPS, half


@pytest.mark.parametrize("trials", TRIALS)
def test_partition_selection_audit_and_halved_noise_mutant(monkeypatch, trials):
    _partition_mutant(monkeypatch, trials)


# The missing values are a public key of the same selection, released with its noisy count (the
# kept levels' noisy counts too): one record moves from missing to level a. The event "noisy a at
# least d1's count and noisy missing at most d1's count" has the exact loss 2/b = epsilon.

def _missing_key_audit(seed, trials):
    d0, d1 = np.array([20.0, 30.0]), np.array([21.0, 29.0])  # (level a, missing)

    def run(d, rng):
        h = part.noisy_counts(d, EPS, DELTA, make_source(rng))[0][0]
        return float(h[0] >= d1[0] and h[1] <= d1[1])

    return audit_epsilon(run=run, d0=d0, d1=d1, event=lambda s: s == 1.0, trials=trials, seed=seed)


def test_select_levels_releases_the_counts_it_thresholds():
    sel = part.select_levels(["a"] * 500 + ["b"] * 400 + ["rare"] + [None] * 300, 1.0, 1e-6, make_source(0))
    assert sel.levels == ["a", "b"] and abs(sel.counts - [500, 400]).max() < 40 and abs(sel.missing - 300) < 40


@pytest.mark.parametrize("trials", TRIALS)
def test_missing_key_audit_and_halved_noise_mutant(monkeypatch, trials):
    _partition_mutant(monkeypatch, trials, _missing_key_audit, 0.6)


def test_a_level_held_by_one_record_is_kept_with_probability_below_delta():
    """The delta part: a level only one dataset holds (count 1) is kept with probability delta0 < delta."""
    keep = part.keep_mask([1], EPS, DELTA, make_source(0), size=200_000)
    assert keep.mean() < DELTA


# ---- the scale step: a magnitude histogram (privrelease.dp.quantiles.noisy_magnitudes) ----
# One record moves from bin [2, 4) to bin [1, 2), or (the missing bin) becomes missing. The event
# "noisy count of d1's new bin at least d1's count and noisy [2, 4) at most d1's count" has the
# exact loss 2/b = epsilon (each coordinate moves by 1 in its Laplace tail); everything after the
# histogram (magnitude_range, the missing-value flag) is post-processing.

SCALE_PAIRS = {"octave": (np.r_[np.ones(5), 2 * np.ones(7)], np.r_[np.ones(6), 2 * np.ones(6)]),
               "missing": (np.r_[np.ones(5), 2 * np.ones(7)], np.r_[np.ones(5), 2 * np.ones(6), np.nan])}
# A date column's year histogram (noisy_years): one record moves from 2013 to 2012 (days since 1970-01-01).
_Y2012, _Y2013 = 15_400.0, 15_800.0
SCALE_PAIRS["year"] = (np.r_[_Y2012 * np.ones(5), _Y2013 * np.ones(7)], np.r_[_Y2012 * np.ones(6), _Y2013 * np.ones(6)])
SCALE_PAIRS["year-missing"] = (SCALE_PAIRS["year"][0], np.r_[_Y2012 * np.ones(5), _Y2013 * np.ones(6), np.nan])
_HISTOGRAMS = {"octave": (quant.magnitude_counts, quant.noisy_magnitudes, quant.magnitude_edges),
               "year": (quant.year_counts, quant.noisy_years, quant.year_edges)}


def _scale_audit(seed, trials, pair="octave"):
    d0, d1 = SCALE_PAIRS[pair]
    counts, noisy, edges = _HISTOGRAMS["year" if pair.startswith("year") else "octave"]
    bins = np.searchsorted(edges(), [_Y2012, _Y2013] if pair.startswith("year") else [1.0, 2.0], side="right") - 1
    if pair.endswith("missing"):
        bins[0] = edges().size - 1  # the missing bin
    c1 = counts(d1)[bins]

    def run(d, rng):
        h = noisy(d, EPS, make_source(rng))[0][bins]
        return float(h[0] >= c1[0] and h[1] <= c1[1])

    return audit_epsilon(run=run, d0=d0, d1=d1, event=lambda s: s == 1.0, trials=trials, seed=seed)


PRIMITIVE_TRIALS = [pytest.param(50_000, marks=pytest.mark.slow, id="full"),
                    pytest.param(20_000, marks=[pytest.mark.slow, pytest.mark.ci_slice], id="slice")]


def test_scale_pairs_move_the_whole_sensitivity():
    for name, (d0, d1) in SCALE_PAIRS.items():
        counts = _HISTOGRAMS["year" if name.startswith("year") else "octave"][0]
        diff = counts(d1) - counts(d0)
        assert np.abs(diff).sum() == quant.SCALE_SENSITIVITY and sorted(diff[diff != 0]) == [-1, 1]


@pytest.mark.parametrize("pair", sorted(SCALE_PAIRS))
@pytest.mark.parametrize("trials", PRIMITIVE_TRIALS)
def test_scale_audit_and_halved_noise_mutant(monkeypatch, trials, pair):
    res = _scale_audit(0, trials, pair)
    assert res.epsilon_lower <= EPS, res
    assert res.epsilon_lower > 0.6 * EPS, res  # tight: the exact loss of the event is EPS
    monkeypatch.setattr(quant, "SCALE_SENSITIVITY", 1.0)  # halved noise
    half = _scale_audit(1, trials, pair)
    assert half.epsilon_lower > EPS, half


# ---- the profile of a column (privrelease.dp.draft.noisy_profile) -------------------------------
# d0: 'a' x 40 and ten levels b0..b9 held twice each; d1: one b9 record missing. The missing count
# rises by 1, the text count, the values outside the 10 most frequent and the repeats fall by 1:
# the whole L1 sensitivity 4. The event "each moved coordinate on d1's side of d1's value" has
# the exact loss 4/b = epsilon.

def _profile_pair():
    d0 = ["a"] * 40 + [f"b{i}" for i in range(10) for _ in range(2)]
    d1 = list(d0)
    d1[-1] = ""
    return pd.Series(d0, dtype=object), pd.Series(d1, dtype=object)


def _profile_audit(seed, trials):
    d0, d1 = _profile_pair()
    stats = lambda d, rng: draft.noisy_profile(d, EPS, make_source(rng))[0]  # noqa: E731
    e1 = draft.ColumnCounts.exact(d1)
    v1 = np.r_[e1.classes, e1.outside_top, e1.repeats]

    def run(d, rng):
        c = stats(d, rng)
        y = np.r_[c.classes, c.outside_top, c.repeats]
        return float(y[0] >= v1[0] and y[4] <= v1[4] and y[6] <= v1[6] and y[7] <= v1[7])

    return audit_epsilon(run=run, d0=d0, d1=d1, event=lambda s: s == 1.0, trials=trials, seed=seed)


def test_profile_pair_moves_the_whole_sensitivity():
    d0, d1 = _profile_pair()
    e0, e1 = draft.ColumnCounts.exact(d0), draft.ColumnCounts.exact(d1)
    diff = np.r_[e1.classes, e1.outside_top, e1.repeats] - np.r_[e0.classes, e0.outside_top, e0.repeats]
    assert diff.tolist() == [1, 0, 0, 0, -1, 0, -1, -1] and np.abs(diff).sum() == draft.PROFILE_SENSITIVITY


@pytest.mark.parametrize("trials", PRIMITIVE_TRIALS)
def test_profile_audit_and_halved_noise_mutant(monkeypatch, trials):
    res = _profile_audit(0, trials)
    assert res.epsilon_lower <= EPS, res
    assert res.epsilon_lower > 0.6 * EPS, res  # tight: the exact loss of the event is EPS
    monkeypatch.setattr(draft, "PROFILE_SENSITIVITY", draft.PROFILE_SENSITIVITY / 2)
    half = _profile_audit(1, trials)
    assert half.epsilon_lower > EPS, half


# A part of a class: d1's last b9 becomes a value counted in one part (the decimals: "0.25", a fraction of two
# decimals; the zeros: "0", whole numbers being counted as zeros and the others). The text count and the repeats fall
# by 1 and the part's count rises by 1 (the values outside the top 10 stay at 2): L1 3 of the 4 the noise is
# calibrated to, so the event below has the exact loss 3/4 epsilon (the halved-noise mutant's: 3/2 epsilon).

PARTS = {"decimals": ("0.25", lambda c: c.decimals[1]), "zeros": ("0", lambda c: c.zeros)}


def _part_pair(name):
    d0, _ = _profile_pair()
    d1 = d0.copy()
    d1.iloc[-1] = PARTS[name][0]
    return d0, d1


def test_the_zeros_pair_moves_three_of_the_four():
    d0, d1 = _part_pair("zeros")
    e0, e1 = draft.ColumnCounts.exact(d0), draft.ColumnCounts.exact(d1)
    vector = lambda e: np.r_[e.classes, e.zeros, e.outside_top, e.repeats]  # noqa: E731
    assert (vector(e1) - vector(e0)).tolist() == [0, 1, 0, 0, -1, 0, 1, 0, -1]  # the integer class is the zero


def _part_audit(seed, trials, name):
    d0, d1 = _part_pair(name)
    moved, e1 = PARTS[name][1], draft.ColumnCounts.exact(d1)

    def run(d, rng):
        c = draft.noisy_profile(d, EPS, make_source(rng))[0]
        return float(moved(c) >= moved(e1) and c.classes[4] <= e1.classes[4] and c.repeats <= e1.repeats)

    return audit_epsilon(run=run, d0=d0, d1=d1, event=lambda s: s == 1.0, trials=trials, seed=seed)


@pytest.mark.parametrize("name", sorted(PARTS))
@pytest.mark.parametrize("trials", PRIMITIVE_TRIALS)
def test_profile_part_audit_and_halved_noise_mutant(monkeypatch, trials, name):
    res = _part_audit(0, trials, name)
    assert res.epsilon_lower <= 0.75 * EPS, res
    assert res.epsilon_lower > 0.45 * EPS, res
    monkeypatch.setattr(draft, "PROFILE_SENSITIVITY", draft.PROFILE_SENSITIVITY / 2)
    half = _part_audit(1, trials, name)
    assert half.epsilon_lower > EPS, half


# ---- the whole draft, end to end (privrelease.dp.draft.dp_draft) --------------------------------
# One stated integer column and few records, so the column's bounds are its scale step with the
# whole of epsilon (a stated integer column has no profile).
# d0: 40 records at 1 and c at 2, d1: one record 2 -> 1. Bin [1, 2) is always kept; the event
# "drafted as [0, 8]" happens when bin [2, 4) stays below the run threshold t (its count c near t),
# so its loss is at most 1/b = epsilon / 2 for the real draft. A mutant that gives every
# numeric column twice its epsilon realises up to epsilon and is caught against the real
# draft's largest loss on this event.

EPS_DRAFT = 2.0


def _laplace_below(count, t, b):
    """P[count + Lap(b) <= t]."""
    x = t - count
    return 1 - 0.5 * math.exp(-x / b) if x >= 0 else 0.5 * math.exp(x / b)


def _draft_pair(factor=1.0):
    eps_s = factor * EPS_DRAFT
    b = quant.SCALE_SENSITIVITY / eps_s
    t = quant.laplace_threshold(b, quant.SCALE_STEP_RATE)

    def score(c):  # the loss of the event, weighted by how often it occurs
        p1, p0 = _laplace_below(c - 1, t, b), _laplace_below(c, t, b)
        return math.log(p1 / p0) + 0.5 * math.log(p1)

    c = max(range(1, math.ceil(t) + 8), key=score)
    return pd.DataFrame({"x": [1] * 40 + [2] * c}), pd.DataFrame({"x": [1] * 41 + [2] * (c - 1)})


def _draft_run(d, rng):
    cols = draft.dp_draft(d, EPS_DRAFT, rng=rng, facts=StatedFacts.of(integer=["x"])).schema["columns"]
    return float((cols["x"]["lower"], cols["x"]["upper"]) == (0.0, 8.0))


def _draft_audit(seed, trials, factor=1.0):
    d0, d1 = _draft_pair(factor)
    return audit_epsilon(run=_draft_run, d0=d0, d1=d1, event=lambda s: s == 1.0, trials=trials, seed=seed,
                         claimed=EPS_DRAFT)


DRAFT_TRIALS = [pytest.param(20_000, marks=pytest.mark.slow, id="full"),
                pytest.param(5_000, marks=[pytest.mark.slow, pytest.mark.ci_slice], id="slice")]


@pytest.mark.parametrize("trials", DRAFT_TRIALS)
def test_draft_end_to_end_audit_catches_twice_the_epsilon_per_numeric_column(monkeypatch, trials):
    d0, _ = _draft_pair()
    assert 0.3 * EPS_DRAFT / 2 * 0.01 * len(d0) / 2 < quant.MIN_QUANTILE_SIGNAL  # the quantile step is skipped
    res = _draft_audit(0, trials)
    real = EPS_DRAFT / 2  # the largest loss of the real draft on this event
    assert not res.caught and res.epsilon_lower <= real, res
    assert res.epsilon_lower > 0.4 * real, res
    orig = draft._bounded_column
    monkeypatch.setattr(draft, "_bounded_column", lambda t, n, k, e, c: orig(t, n, k, 2 * e, c))
    twice = _draft_audit(1, trials, factor=2.0)
    assert twice.epsilon_lower > real, twice
