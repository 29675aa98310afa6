"""Every DP mechanism draws its noise through the source API, so audits can reach each draw.

The per-statistic audits (tests/statistical/test_draw_audits_*.py, docs/audits.md) record a
mechanism's noise transcript (:class:`~privrelease.audit.TranscriptSource`) and
build mutants by halving one draw (:class:`~privrelease.audit.HalvedNoiseSource`).
These checks hold for every registered (epsilon, delta)- or epsilon-DP mechanism: its fit
(and, for row-aligned output, its transform) makes noise draws through the source, and
halving draw k changes draw k's noise scale (or a selection's rate is doubled) while the
draws before it are unchanged.
"""

import numpy as np
import pytest

from privrelease.audit import HalvedNoiseSource, TranscriptSource
from privrelease.mechanisms import list_mechanisms
from privrelease.mechanisms.pca_gauss.unsupervised import PCAGauss
from privrelease.release import build_mechanism, encoders
from privrelease.release.construct import schema_facts

DP = [m for m in list_mechanisms() if m.guarantee in ("epsilon-DP", "(epsilon,delta)-DP")]
#: Noise that does not go through the draw API: blocki-jl's Gaussian JL matrix comes from the
#: source's generator (its audit reduces w directly, tests/statistical/test_blocki_jl_privacy.py).
GENERATOR_NOISE = {"blocki-jl"}


def _run(cls, small_schema, small_df, source):
    enc, lab = encoders(small_schema, PCAGauss if cls.name == "pca-gauss-supervised" else cls)
    X = enc.encode(small_df).X
    y = lab.encode(small_df).X.argmax(1) if lab is not None else None
    delta = 1e-5 if cls.uses_delta or cls.guarantee == "(epsilon,delta)-DP" else None
    params = dict(getattr(cls, "contract_params", {}))
    if cls.name in ("jiang-public", "pca-gauss-supervised"):  # not releasable through `release` as is
        V = np.linalg.qr(np.random.default_rng(3).standard_normal((X.shape[1], 2)))[0].T
        params.update(n_components=2, public_components=V)
        if cls.name == "pca-gauss-supervised":
            params["pca_source"] = "public"
            y = X[:, 0] * 0.5 + 0.2
    else:  # the public facts the release passes (n_classes, ...)
        params = schema_facts(cls, small_schema, enc, lab, params)
    est = build_mechanism(cls.name, 1.0, delta, source, enc.domain, **params)
    est.fit(X, y)
    if cls.output_kind == "row-aligned":
        est.transform(X)
    return est


def transcript(cls, small_schema, small_df, inner=3):
    src = TranscriptSource(inner)
    _run(cls, small_schema, small_df, src)
    return src.draws


@pytest.mark.parametrize("cls", DP, ids=[m.name for m in DP])
def test_noise_goes_through_the_source(cls, small_schema, small_df):
    draws = transcript(cls, small_schema, small_df)
    if cls.name in GENERATOR_NOISE:
        return
    assert draws, f"{cls.name} made no noise draw through its source"


@pytest.mark.parametrize("cls", [m for m in DP if m.name not in GENERATOR_NOISE],
                         ids=[m.name for m in DP if m.name not in GENERATOR_NOISE])
def test_halving_one_draw_changes_only_that_draw(cls, small_schema, small_df):
    ref = transcript(cls, small_schema, small_df)
    for k in sorted({0, len(ref) // 2, len(ref) - 1}):
        mutant = HalvedNoiseSource(3, draw=k)
        got = transcript(cls, small_schema, small_df, inner=mutant)
        assert mutant.hits == 1
        for a, b in zip(ref[:k], got[:k]):
            assert a.kind == b.kind and a.scale == b.scale
            assert np.array_equal(a.output, b.output)
        a, b = ref[k], got[k]
        assert a.kind == b.kind
        if a.kind == "selection":
            assert b.param == a.param and np.array_equal(b.value, a.value)  # the mechanism's rate is untouched
        else:
            assert b.sensitivity == a.sensitivity  # the mechanism's calibration is untouched ...
            assert b.scale == pytest.approx(a.scale / 2)  # ... only the noise is halved
