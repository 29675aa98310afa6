"""Calibration apart from sampling, checked over every registered mechanism.

* Before every noise draw the mechanism has already recorded, in ``noise_scales_``, the
  scale that draw uses (calibration happens before sampling, so a certificate never
  reports a scale read back from a draw).
* Every draw happens under a public bound on the noised values
  (``RandomSource.value_bound`` / ``set_value_bound``), from which the secure source
  builds its grid: the grid never depends on the data.
* ``transform`` (row-aligned mechanisms) reads the fitted state and never writes it.
"""

import copy
import inspect
import math

import numpy as np
import pytest

from privrelease.mechanisms import Mechanism, list_mechanisms
from privrelease.noise import SeededSource
from privrelease.release import build_mechanism, encoders

MECHS = [m for m in list_mechanisms() if getattr(m, "contract_release", True) and m.guarantee != "distributional"]
IDS = [m.name for m in MECHS]


class _CheckingSource(SeededSource):
    """A seeded source that checks, at each draw, that the calling mechanism recorded the scale first."""

    def __init__(self, seed):
        super().__init__(np.random.default_rng(seed))
        self.draws = 0

    def _caller_scales(self):
        frame = inspect.currentframe()
        while frame is not None:
            obj = frame.f_locals.get("self")
            if isinstance(obj, Mechanism):
                return getattr(obj, "noise_scales_", {})
            frame = frame.f_back
        raise AssertionError("a draw outside any mechanism")

    def _check(self, scale):
        self.draws += 1
        assert getattr(self, "_value_bound", None) is not None, \
            "a draw without a declared public bound on the noised values (see RandomSource.value_bound)"
        if scale == 0:
            return
        recorded = [v for v in self._caller_scales().values() if isinstance(v, (int, float))]
        assert any(math.isclose(scale, v, rel_tol=1e-12) for v in recorded), \
            f"scale {scale} drawn before it was recorded in noise_scales_ {recorded}"

    def add_laplace(self, value, l1_sensitivity, epsilon, coords):
        self._check(self.laplace_noise_scale(l1_sensitivity, epsilon, coords))
        return super().add_laplace(value, l1_sensitivity, epsilon, coords)

    def add_gaussian(self, value, l2_sensitivity, noise_multiplier, coords):
        self._check(self.gaussian_noise_std(l2_sensitivity, noise_multiplier, coords))
        return super().add_gaussian(value, l2_sensitivity, noise_multiplier, coords)


def _fit(cls, small_schema, small_df, source):
    enc, lab = encoders(small_schema, cls)
    X = enc.encode(small_df).X
    y = lab.encode(small_df).X.argmax(1) if lab is not None else None
    delta = 1e-5 if cls.uses_delta or cls.guarantee == "(epsilon,delta)-DP" else None
    params = dict(getattr(cls, "contract_params", {}))
    if "n_classes" in inspect.signature(cls.__init__).parameters and lab is not None:
        params.setdefault("n_classes", 2)
    est = build_mechanism(cls.name, 1.0, delta, source, enc.domain, **params)
    return est.fit(X, y), X


@pytest.mark.parametrize("cls", MECHS, ids=IDS)
def test_noise_scales_are_recorded_before_each_draw(cls, small_schema, small_df):
    source = _CheckingSource(5)
    est, X = _fit(cls, small_schema, small_df, source)
    if cls.output_kind == "row-aligned":
        est.transform(X[:20])


@pytest.mark.parametrize("cls", [m for m in MECHS if m.output_kind == "row-aligned"],
                         ids=[m.name for m in MECHS if m.output_kind == "row-aligned"])
def test_transform_never_writes_fitted_state(cls, small_schema, small_df):
    est, X = _fit(cls, small_schema, small_df, _CheckingSource(6))
    skip = ("source_", "rng")  # the randomness, not fitted state
    state = {k: copy.deepcopy(v) for k, v in vars(est).items() if k not in skip}
    est.transform(X[:30])
    after = {k: v for k, v in vars(est).items() if k not in skip}
    assert state.keys() == after.keys(), f"transform added {set(after) - set(state)}"
    for k, v in state.items():
        assert _same(v, after[k]), k


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("source", ["laplace", "analyze-gauss"])
def test_pca_gauss_supervised_records_scales_and_bound_first(source, small_schema, small_df):
    from privrelease.mechanisms.pca_gauss.supervised import PCAGaussSupervised
    from privrelease.schema import Encoder

    X = Encoder(small_schema.select(["age", "color"])).encode(small_df).X
    t = Encoder(small_schema.select(["score"])).encode(small_df).X[:, 0]
    src = _CheckingSource(8)
    PCAGaussSupervised(epsilon=1.0, delta=1e-5 if source == "analyze-gauss" else None, n_components=2,
                       pca_source=source, rng=src).fit(X, t)
    assert src.draws >= 3
