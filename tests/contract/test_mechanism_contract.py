"""Shared checks over every registered mechanism.

A mechanism takes part in the release-level checks when it can be released through
``privrelease.release`` on a small mixed table; its class may set
``contract_params`` (a dict of quick parameters) and ``contract_release = False`` when
it is not released through ``release`` (e.g. owner-side perturbation).
"""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from privrelease import release
from privrelease.mechanisms import GUARANTEES, list_mechanisms
from privrelease.release import build_mechanism
from privrelease.schema import Encoder

MECHS = list_mechanisms()
IDS = [m.name for m in MECHS]


def _releasable(cls):
    return getattr(cls, "contract_release", True)


def _kwargs(cls):
    eps = None if cls.guarantee == "distributional" else 1.0
    delta = 1e-5 if cls.uses_delta or cls.guarantee == "(epsilon,delta)-DP" else None
    return eps, delta, dict(getattr(cls, "contract_params", {}))


@pytest.mark.parametrize("cls", MECHS, ids=IDS)
def test_metadata(cls):
    info = cls.info()
    assert info["guarantee"] in GUARANTEES
    assert info["neighbouring_relation"] and info["summary"]
    doc = cls.__doc__ or ""
    assert "Notes" in doc, "the docstring must state guarantee, relation and sensitivity derivation in Notes"
    assert "Guarantee" in doc or "guarantee" in doc


@pytest.mark.parametrize("cls", [m for m in MECHS if _releasable(m)], ids=[m.name for m in MECHS if _releasable(m)])
def test_release_contract(cls, small_schema, small_df):
    eps, delta, params = _kwargs(cls)
    state = np.random.get_state()[1].copy()
    a = release(small_df, small_schema, cls.name, eps, delta=delta, rng=7, **params)
    b = release(small_df, small_schema, cls.name, eps, delta=delta, rng=7, **params)
    assert np.array_equal(np.random.get_state()[1], state), "must not touch numpy's global random state"
    pd.testing.assert_frame_equal(a.data, b.data)  # same seed, same output
    cert = a.certificate.to_dict()
    assert cert["guarantee"] == cls.guarantee
    assert cert["neighbouring_relation"] == cls.relation
    assert "seeded" in cert["randomness"]
    if eps is not None:
        assert math.isclose(cert["epsilon"], eps)
        split = sum(v for v in cert["budget_split"].values() if isinstance(v, (int, float)))
        assert split <= eps * (1 + 1e-9), "the budget split cannot exceed epsilon"
    reduced = getattr(a.mechanism, "output_columns_", None) is not None
    if not reduced:
        assert list(a.data.columns) == small_schema.names
        Encoder(small_schema).encode(a.data, on_out_of_bounds="error")  # released values are inside the schema
    if cls.output_kind == "row-aligned":
        assert len(a.data) == len(small_df)


@pytest.mark.parametrize("cls", [m for m in MECHS if _releasable(m)], ids=[m.name for m in MECHS if _releasable(m)])
def test_estimator_contract(cls, small_schema, small_df):
    eps, delta, params = _kwargs(cls)
    from privrelease.release import encoders
    from privrelease.release.construct import schema_facts

    enc, lab = encoders(small_schema, cls)
    X = enc.encode(small_df).X
    y = lab.encode(small_df).X.argmax(1) if lab is not None else None
    params = schema_facts(cls, small_schema, enc, lab, params)  # the public facts the release passes (n_classes, ...)
    est = build_mechanism(cls.name, eps, delta, 3, enc.domain, **params)
    before = est.get_params(deep=False)
    assert est.fit(X, y) is est
    after = est.get_params(deep=False)
    assert before.keys() == after.keys() and all(before[k] is after[k] for k in before), "fit must not rewrite params"
    clone(est)  # sklearn-clonable
    assert hasattr(est, "privacy_cost_")


@pytest.mark.parametrize("cls", [m for m in MECHS if _releasable(m) and m.guarantee != "distributional"],
                         ids=[m.name for m in MECHS if _releasable(m) and m.guarantee != "distributional"])
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "1", True])
def test_bad_epsilon_refused(cls, bad, small_schema, small_df):
    from privrelease.errors import ParameterError

    _, delta, params = _kwargs(cls)
    with pytest.raises(ParameterError):
        release(small_df, small_schema, cls.name, bad, delta=delta, rng=0, **params)


def _noiseless(name, small_schema, small_df, **params):
    """The test-only noiseless mode: the estimator itself at epsilon = inf (the release API refuses it)."""
    enc = Encoder(small_schema)
    X = enc.encode(small_df).X
    return enc.decode(build_mechanism(name, float("inf"), None, 0, enc.domain, **params).fit(X).transform(X))


def test_laplace_infinite_epsilon_is_identity(small_schema, small_df):
    out = _noiseless("laplace", small_schema, small_df)
    pd.testing.assert_frame_equal(out, small_df[small_schema.names].reset_index(drop=True), check_dtype=False)


def test_jiang_pca_infinite_epsilon_full_rank_is_identity(small_schema, small_df):
    out = _noiseless("jiang-pca", small_schema, small_df, n_components=Encoder(small_schema).width)
    pd.testing.assert_frame_equal(out, small_df[small_schema.names].reset_index(drop=True), check_dtype=False)


def test_jiang_pca_infinite_epsilon_is_nonprivate_pca(small_schema, small_df):
    from sklearn.decomposition import PCA

    from privrelease.mechanisms import JiangPCA

    X = Encoder(small_schema).encode(small_df).X
    m = JiangPCA(epsilon=float("inf"), n_components=3).fit(X)
    ref = PCA(3).fit(X)
    assert np.allclose(m.transform(X), ref.inverse_transform(ref.transform(X)))


@pytest.mark.parametrize("cls", MECHS, ids=IDS)
def test_declared_capabilities_match_the_methods(cls):
    """The release pipeline picks its strategy from ``capabilities`` alone; each declared kind of pass must
    have the method it calls, and nothing else is read from the class."""
    from privrelease.mechanisms import Capabilities, RowAlignedMechanism

    caps = cls.capabilities
    assert isinstance(caps, Capabilities)
    if caps.passes == "statistics":
        assert cls.fit_stats is not RowAlignedMechanism.fit_stats and callable(getattr(cls, "fit_stats", None))
    if caps.passes == "multi-pass":
        assert callable(getattr(cls, "fit_executor", None)) and callable(getattr(cls, "fit_stats", None))
    if caps.passes == "stream":
        assert callable(getattr(cls, "fit_stream", None))
    if caps.samples_in_chunks or caps.fixed_output_rows:
        assert cls.output_kind != "row-aligned"
    for flag in ("multi_pass", "can_stream", "needs_stats", "samples_in_chunks", "fixed_output_rows",
                 "uses_label", "needs_target"):
        assert flag not in vars(cls), f"{cls.name}: '{flag}' is declared outside capabilities"
