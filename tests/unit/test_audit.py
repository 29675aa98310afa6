"""Unit tests of the privacy audit (privrelease.audit)."""

import math

import numpy as np
import pytest

from privrelease.errors import ParameterError
from privrelease.audit import AuditResult, audit_epsilon, clopper_pearson


def laplace_batch(eps, sens=1.0):
    def batch(data, rng, k):
        return data + rng.laplace(0.0, sens / eps, k)

    return batch


def gaussian_batch(sigma):
    def batch(data, rng, k):
        return data + rng.normal(0.0, sigma, k)

    return batch


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_known_epsilon_bound_is_near_but_below(eps):
    res = audit_epsilon(batch=laplace_batch(eps), d0=0.0, d1=1.0, trials=40000, seed=3, claimed=eps)
    assert isinstance(res, AuditResult)
    assert res.epsilon_lower <= eps
    assert res.epsilon_lower > 0.8 * eps  # Laplace tails attain the ratio exactly
    assert res.caught is False


def test_doubled_epsilon_is_caught():
    res = audit_epsilon(batch=laplace_batch(2.0), d0=0.0, d1=1.0, trials=20000, seed=4, claimed=1.0)
    assert res.caught is True
    assert res.epsilon_lower > 1.0


def test_no_noise_gives_large_bound():
    res = audit_epsilon(run=lambda d, rng: d, d0=0.0, d1=1.0, trials=2000, seed=0)
    assert res.epsilon_lower > 5.0
    assert res.count0 in (0, res.n0) and res.count1 in (0, res.n1)


def test_direction_is_symmetric():
    a = audit_epsilon(batch=laplace_batch(1.0), d0=0.0, d1=1.0, trials=20000, seed=5)
    b = audit_epsilon(batch=laplace_batch(1.0), d0=1.0, d1=0.0, trials=20000, seed=5)
    assert {a.direction, b.direction} <= {"ln(P0/P1)", "ln(P1/P0)"}
    assert abs(a.epsilon_lower - b.epsilon_lower) < 0.2
    assert a.epsilon_lower > 0.7 and b.epsilon_lower > 0.7


def test_user_event_checks_both_directions():
    # the event {stat > 0.5} favours d1: the P1/P0 direction must be reported
    res = audit_epsilon(batch=laplace_batch(1.0), d0=0.0, d1=1.0, event=lambda s: s > 1.0, trials=20000, seed=6)
    assert res.direction == "ln(P1/P0)"
    assert 0.7 < res.epsilon_lower <= 1.0
    assert res.count1 > res.count0
    assert res.side is None and res.threshold is None
    # all four Clopper-Pearson bounds are reported for a user event
    assert res.p0_low <= res.p0 <= res.p0_high and res.p1_low <= res.p1 <= res.p1_high


def test_vector_statistic_with_event():
    def run(data, rng):
        return np.asarray(data) + rng.laplace(0.0, 2.0, 2)  # sensitivity 2 (L1), eps 1

    res = audit_epsilon(run=run, d0=np.zeros(2), d1=np.ones(2), event=lambda s: (s <= 0).all(axis=1),
                        trials=4000, seed=1)
    assert res.epsilon_lower <= 1.0
    with pytest.raises(ParameterError, match="scalar statistic"):
        audit_epsilon(run=run, d0=np.zeros(2), d1=np.ones(2), trials=100)


def test_run_and_batch_agree_in_distribution():
    r1 = audit_epsilon(run=lambda d, rng: d + rng.laplace(0, 1.0), d0=0.0, d1=1.0, trials=4000, seed=2)
    r2 = audit_epsilon(batch=laplace_batch(1.0), d0=0.0, d1=1.0, trials=4000, seed=2)
    assert abs(r1.epsilon_lower - r2.epsilon_lower) < 0.35


def test_delta_lowers_the_bound():
    # Gaussian mechanism: no finite pure epsilon; subtracting delta lowers the bound
    b = gaussian_batch(1.0)
    r0 = audit_epsilon(batch=b, d0=0.0, d1=1.0, event=lambda s: s > 2.0, trials=20000, seed=7)
    r1 = audit_epsilon(batch=b, d0=0.0, d1=1.0, event=lambda s: s > 2.0, trials=20000, seed=7, delta=0.01)
    assert r1.epsilon_lower < r0.epsilon_lower
    assert r1.delta == 0.01
    # a delta as large as the event probability removes all evidence
    r2 = audit_epsilon(batch=b, d0=0.0, d1=1.0, event=lambda s: s > 2.0, trials=20000, seed=7, delta=0.5)
    assert r2.epsilon_lower == 0.0


def test_batch_blocks_and_seed_reproducible():
    calls = []

    def batch(d, rng, k):
        calls.append(k)
        return d + rng.laplace(0, 1.0, k)

    r1 = audit_epsilon(batch=batch, d0=0.0, d1=1.0, trials=1000, seed=11, max_batch=300)
    assert max(calls) <= 300 and sum(calls) == 2000
    r2 = audit_epsilon(batch=batch, d0=0.0, d1=1.0, trials=1000, seed=11, max_batch=300)
    assert r1.epsilon_lower == r2.epsilon_lower


def test_identical_datasets_give_small_bound():
    hits = 0
    for seed in range(20):
        res = audit_epsilon(batch=laplace_batch(1.0), d0=0.0, d1=0.0, trials=2000, seed=seed)
        hits += res.epsilon_lower > 0
    assert hits <= 4  # alpha = 0.05 per audit; expectation <= 1


def test_clopper_pearson_values():
    lo, hi = clopper_pearson(0, 10, 0.05)
    assert lo == 0.0 and math.isclose(float(hi), 1 - 0.025 ** (1 / 10), rel_tol=1e-9)
    lo, hi = clopper_pearson(10, 10, 0.05)
    assert hi == 1.0 and math.isclose(float(lo), 0.025 ** (1 / 10), rel_tol=1e-9)
    with pytest.raises(ParameterError):
        clopper_pearson(1, 10, 0.05, side="middle")


def test_summary_and_dict():
    res = audit_epsilon(batch=laplace_batch(1.0), d0=0.0, d1=1.0, trials=200, seed=0, claimed=1.0)
    assert "claimed 1" in res.summary()
    d = res.to_dict()
    assert d["epsilon_lower"] == res.epsilon_lower and d["trials"] == 200


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(), "needs run"),
        (dict(run=3), "callable"),
        (dict(batch=laplace_batch(1.0), trials=5), "trials"),
        (dict(batch=laplace_batch(1.0), trials=2.5), "trials"),
        (dict(batch=laplace_batch(1.0), alpha=0.0), "alpha"),
        (dict(batch=laplace_batch(1.0), alpha=1.5), "alpha"),
        (dict(batch=laplace_batch(1.0), delta=-0.1), "delta"),
        (dict(batch=laplace_batch(1.0), delta=1.0), "delta"),
        (dict(batch=laplace_batch(1.0), selection_fraction=1.0), "selection_fraction"),
        (dict(batch=laplace_batch(1.0), claimed=-1.0), "claimed"),
        (dict(batch=lambda d, rng, k: np.zeros(k + 1)), "k = "),
        (dict(batch=lambda d, rng, k: np.full(k, np.nan)), "NaN"),
        (dict(batch=laplace_batch(1.0), event=lambda s: s[:3] > 0), "one boolean per run"),
        (dict(batch=laplace_batch(1.0), event=lambda s: s * 2.0), "booleans"),
    ],
)
def test_invalid_inputs_raise(kwargs, match):
    kwargs = dict(dict(d0=0.0, d1=1.0, trials=100), **kwargs)
    with pytest.raises(ParameterError, match=match):
        audit_epsilon(**kwargs)


def test_shape_mismatch_between_datasets_raises():
    def run(d, rng):
        return np.zeros(d)

    with pytest.raises(ParameterError, match="different shapes"):
        audit_epsilon(run=run, d0=2, d1=3, event=lambda s: s[:, 0] > 0, trials=50)


# ---- noise transcripts, replay and halved-noise mutants --------------------------------

from privrelease.audit import (  # noqa: E402
    HalvedNoiseSource,
    TranscriptSource,
    audit_draw,
    capture_draw,
    draw_index,
    exact_prefix,
    record_transcript,
)
from privrelease.noise import SeededSource, make_source  # noqa: E402


class _TwoStep:
    """Toy mechanism: a Laplace count, then a Gaussian sum whose sensitivity depends on the noisy count."""

    def __init__(self, rng):
        self.source_ = make_source(rng)

    def fit(self, x):
        c, sc = self.source_.add_laplace(np.array([float(len(x))]), 1.0, 1.0, coords=1)
        s, std = self.source_.add_gaussian(np.array([float(np.sum(x))]), 1.0 + 0 * c[0], 2.0, coords=1)
        self.noise_scales_ = {"count": sc, "sum": std}
        self.count_, self.sum_ = c, s
        return self


def _fit(x, source):
    return _TwoStep(source).fit(np.asarray(x, float))


def test_transcript_records_and_replays():
    mech, draws = record_transcript(_fit, [0.0, 1.0], rng=5)
    assert [d.kind for d in draws] == ["laplace", "gaussian"]
    assert draws[1].value[0] == 1.0 and draws[1].sensitivity == 1.0 and draws[1].param == 2.0
    assert np.array_equal(draws[0].output, mech.count_)
    assert draw_index(draws, mech.noise_scales_, "sum") == 1
    # the sum's query on another dataset, with the count's release replayed
    d = capture_draw(_fit, [1.0, 1.0], 1, draws, rng=5)
    assert d.index == 1 and d.value[0] == 2.0
    replay = TranscriptSource(9, replay=draws[:1])
    assert np.array_equal(_fit([1.0], replay).count_, draws[0].output)
    with pytest.raises(ParameterError, match="never reached"):
        capture_draw(_fit, [1.0], 2, draws, rng=5)
    with pytest.raises(ParameterError, match="no noise scale named"):
        draw_index(draws, mech.noise_scales_, "moments")


def test_halved_noise_source_halves_only_the_selected_draw():
    ref = _fit([0.0], TranscriptSource(1))
    for k, name in enumerate(("count", "sum")):
        mut = HalvedNoiseSource(1, draw=k)
        m = _fit([0.0], mut)
        assert mut.hits == 1
        assert m.noise_scales_[name] == pytest.approx(ref.noise_scales_[name] / 2)
        other = "sum" if name == "count" else "count"
        assert m.noise_scales_[other] == pytest.approx(ref.noise_scales_[other])
    seen = []

    class Spy(SeededSource):  # records the rate the mutant hands on: the selection at twice the epsilon
        def exponential_choice(self, scores, rate, base=None):
            seen.append(rate)
            return super().exponential_choice(scores, rate, base)

    mut = HalvedNoiseSource(Spy(np.random.default_rng(0)), draw=1)
    for _ in range(2):
        mut.exponential_choice(np.zeros((3, 2)), 0.25)
    assert seen == [0.25, 0.5] and mut.hits == 1
    with pytest.raises(ParameterError):
        HalvedNoiseSource(1, factor=0)


@pytest.mark.parametrize("stat", ["count", "sum"])
def test_audit_draw_passes_the_real_draw_and_catches_its_mutant(stat):
    # count: Laplace, epsilon 1 on a one-record change; sum: Gaussian with multiplier 2 (epsilon ~2.2 at 1e-5)
    claimed, delta = (1.0, 0.0) if stat == "count" else (2.5, 1e-5)
    d0, d1 = ([0.0], [0.0, 1.0]) if stat == "count" else ([0.0, 0.0], [0.0, 1.0])
    res = audit_draw(_fit, d0, d1, stat, trials=100_000, claimed=claimed, delta=delta, seed=3)
    assert res.real.epsilon_lower <= claimed, res.summary()
    assert res.mutant.epsilon_lower > claimed, res.summary()
    with pytest.raises(ParameterError, match="same query"):
        audit_draw(_fit, d0, d0, stat, trials=1000)


def test_exact_prefix_fixes_earlier_releases_at_their_exact_values():
    draws = exact_prefix(_fit, [0.0, 1.0, 1.0], 2, rng=5)
    assert [d.output[0] for d in draws] == [3.0, 2.0]  # the count, then the sum given the exact count
    assert all(d.scale == 0.0 for d in draws)
    assert np.array_equal(_fit([0.0, 1.0, 1.0], TranscriptSource(9, replay=draws)).sum_, [2.0])


def test_as_real_release_calibrates_as_a_real_release_with_seeded_noise():
    from privrelease.audit import AsRealRelease
    from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
    from privrelease.schema.encoding import EncodedDomain

    dom = EncodedDomain(p=4, numeric=(), blocks=((0, 2), (2, 4)))
    X = np.tile([1.0, 0.0, 0.0, 1.0], (50, 1))

    def fit(rng):
        return GaussCopula(1.0, 1e-2, n_classes=1, domain=dom, rng=rng).fit(X)

    real, seeded, audited = fit(None), fit(3), fit(AsRealRelease(TranscriptSource(3)))
    assert audited.rho_ == real.rho_ and audited.budget_split_ == pytest.approx(real.budget_split_)
    assert AsRealRelease(3).secure and not make_source(3).secure
    a, b = AsRealRelease(7).add_gaussian(np.zeros(3), 1.0, 2.0, 3), make_source(7).add_gaussian(np.zeros(3), 1.0, 2.0, 3)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    assert seeded.rho_ != real.rho_ or seeded.accounting_mode_ == real.accounting_mode_
