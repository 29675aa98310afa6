"""Privacy defects of the release pipeline, each pinned by a test that failed before its fix."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from privrelease import release, release_file
from privrelease.engine import RecordMap, SufficientStats, stream_stats
from privrelease.errors import ParameterError, SchemaError, WeakPrivacyWarning
from privrelease.io import write_table
from privrelease.mechanisms.gauss_mixture import gauss_pca as gp
from privrelease.release import default_delta
from privrelease.schema import Encoder, Schema


@pytest.fixture
def ball_schema():
    """One numeric column and a public row-norm bound far below the column's range."""
    return Schema.from_dict({"row_norm_bound": 0.1, "columns": {"x": {"type": "numeric", "lower": 0, "upper": 1}}})


def _ones(n=400):
    return pd.DataFrame({"x": np.ones(n)})


# ---- defect 1: gauss-pca's one-pass path ignored the public row-norm bound -------------------------

def test_one_pass_fit_stats_refuses_statistics_of_unscaled_rows(ball_schema):
    """Defect 1: fit_stats on raw statistics (rows of norm 1 > B = 0.1) used sensitivities that assume
    ||x|| <= B; it must refuse statistics not computed with the mechanism's row scaling."""
    X = Encoder(ball_schema).encode(_ones()).X
    m = gp.GaussPCA(epsilon=1.0, row_norm_bound=0.1, n_components=1, rng=0)
    with pytest.raises(ParameterError, match="row_norm_bound"):
        m.fit_stats(SufficientStats.from_matrix(X))
    ok = gp.GaussPCA(epsilon=1.0, row_norm_bound=0.1, n_components=1, rng=0)
    ok.fit_stats(SufficientStats.from_matrix(X, preprocessing=ok.record_preprocessing()))
    assert ok.passes_ == 1


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_every_engine_scales_rows_before_the_centre_pass(tmp_path, ball_schema, engine, monkeypatch):
    """Defect 1: with --engine dask, gauss-pca fell back to its one-pass fit on statistics of unscaled rows
    (mean 1.0 here); every engine now runs gauss-pca's own passes with the same per-chunk maps, so the
    centre pass sums rows scaled into the ball (mean 0.1) and the clipped pass follows."""
    if engine == "dask":
        pytest.importorskip("dask.dataframe", reason="dask[dataframe] is an optional extra")
    seen = []
    original = gp.GaussPCA.fit_centre

    def spy(self, n, s1, sq_norm_sum, **kw):
        seen.append((n, s1.copy(), kw))
        return original(self, n, s1, sq_norm_sum, **kw)

    monkeypatch.setattr(gp.GaussPCA, "fit_centre", spy)
    src = tmp_path / "in.parquet"
    write_table(_ones(), src)
    cert = release_file(src, ball_schema, tmp_path / "out.csv", "gauss-pca", 1.0, rng=0, engine=engine,
                        n_components=1)
    n, s1, kw = seen[0]
    assert n == 400 and math.isclose(s1[0] / n, 0.1)  # was 1.0 on dask: rows not scaled into the ball
    assert not kw.get("one_pass") and cert.extra["passes"] >= 2


def test_streamed_and_in_memory_maps_agree(small_schema, small_df, tmp_path):
    """The local streamed engine and the in-memory statistics run the same per-record map."""
    rmap = RecordMap(Encoder(small_schema), preprocessing=(("row_norm_bound", 0.5),))
    path = tmp_path / "d.csv"
    write_table(small_df, path)
    from privrelease.io import iter_table_chunks

    st = stream_stats(iter_table_chunks(path, small_schema, 37), rmap)
    ref = SufficientStats.from_matrix(Encoder(small_schema).encode(small_df).X, preprocessing=rmap.preprocessing)
    assert st.n == ref.n and np.allclose(st.s2, ref.s2) and st.preprocessing == ref.preprocessing
    with pytest.raises(ValueError, match="preprocessed differently"):
        st.merge(SufficientStats(p=st.p))


# ---- defect 6: the certificate published exact private counts --------------------------------------

def test_certificate_does_not_depend_on_exact_private_counts(small_schema, small_df):
    """Defect 6: per-column clip counts (and the input hash) changed deterministically with one record; the
    publishable certificate must be the same for two neighbouring tables (same seed), the exact facts
    going to the private diagnostics."""
    other = small_df.copy()
    other.loc[0, "age"] = 150  # out of bounds: clipped and counted
    certs, diags = [], []
    for df in (small_df, other):
        r = release(df, small_schema, "laplace", 1.0, rng=0)
        d = r.certificate.to_dict()
        certs.append({k: v for k, v in d.items() if k not in ("output_sha256", "created_utc")})
        diags.append(r)
    assert certs[0] == certs[1]
    diags = [r.private_diagnostics for r in diags]
    assert "clip_counts" not in certs[0] and "input_sha256" not in certs[0]
    assert diags[1].clip_counts == {"age": 1} and diags[0].input_sha256 != diags[1].input_sha256
    assert diags[1].to_json().splitlines()[0].startswith('{"warning": "PRIVATE')


def test_pca_gauss_clip_count_is_private(small_schema, small_df):
    """Defect 6: pca-gauss's exact ``projected_records_clipped`` left the certificate's extra."""
    r = release(small_df, small_schema, "pca-gauss", 1.0, rng=0, n_components=2, pca_source="laplace",
                clip_radius=0.05)
    assert "projected_records_clipped" not in r.certificate.extra
    assert "projected_records_clipped" in r.private_diagnostics.mechanism


# ---- defect 7: n_public: false did nothing ---------------------------------------------------------

def test_n_public_false_is_refused(small_schema, small_df):
    """Defect 7: every mechanism divides by the true n, so ``n_public: false`` is refused, not ignored."""
    s = Schema.from_dict({**small_schema.to_dict(), "n_public": False})
    with pytest.raises(SchemaError, match="n_public: false is not supported"):
        release(small_df, s, "laplace", 1.0, rng=0)


# ---- defect 8: epsilon = inf released the input ----------------------------------------------------

@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_non_finite_epsilon_is_refused(small_schema, small_df, bad):
    """Defect 8: epsilon = inf released laplace's input unchanged (exit 0)."""
    with pytest.raises(ParameterError, match="epsilon"):
        release(small_df, small_schema, "laplace", bad, rng=0)


def test_large_epsilon_warns(small_schema, small_df):
    """Defect 8: a weak guarantee (epsilon > 10) is said, not silent."""
    with pytest.warns(WeakPrivacyWarning, match="above 10"):
        release(small_df, small_schema, "laplace", 11.0, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", WeakPrivacyWarning)
        release(small_df, small_schema, "laplace", 10.0, rng=0)


# ---- defect 9: delta was 1e-5 whatever n -----------------------------------------------------------

def test_default_delta_depends_on_the_public_n():
    """Defect 9: the default delta is min(1e-5, 1/(10 n))."""
    assert default_delta(1000) == 1e-5 and default_delta(200_000) == 5e-7


def test_release_states_the_n_dependent_default_delta():
    """Defect 9: gauss-pca at n = 200,000 used delta = 1e-5 = 2/n, and the certificate was silent."""
    s = Schema.from_dict({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 1},
                                      "b": {"type": "numeric", "lower": 0, "upper": 1}}})
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.random((200_000, 2)), columns=["a", "b"])
    cert = release(df, s, "gauss-pca", 1.0, rng=0, n_components=1).certificate
    assert cert.delta == 5e-7 and "1/(10 n)" in cert.delta_source and "200000" in cert.delta_source


def test_delta_at_least_one_over_n_is_refused(small_schema, small_df):
    """Defect 9: delta >= 1/n (here 1/200) is refused."""
    with pytest.raises(ParameterError, match="1/n"):
        release(small_df, small_schema, "gauss-pca", 1.0, delta=0.005, rng=0)


# ---- defect 10: --budget / --dataset-id without --ledger were ignored --------------------------------

@pytest.mark.parametrize("kw", [{"budget": 3.0}, {"dataset_id": "adult"}])
def test_budget_or_dataset_id_without_ledger_is_refused(small_schema, small_df, tmp_path, kw):
    """Defect 10: a budget or dataset id without a ledger was silently ignored (API)."""
    with pytest.raises(ParameterError, match="need\\(s\\) a ledger"):
        release(small_df, small_schema, "laplace", 1.0, rng=0, **kw)
    src = tmp_path / "in.csv"
    write_table(small_df, src)
    with pytest.raises(ParameterError, match="need\\(s\\) a ledger"):
        release_file(src, small_schema, tmp_path / "out.csv", "laplace", 1.0, rng=0, **kw)
    assert not (tmp_path / "out.csv").exists()


# ---- issue 35, item 6: a warning present because of one record is private ---------------------------

def test_data_dependent_warnings_say_they_are_private_and_go_to_the_diagnostics(small_schema, small_df):
    """Issue 35, item 6: the clip warning (and the one-class label warning) appears if and only if some record
    is out of bounds (or every label is one class), a one-record signal; it says that it is private and the
    private diagnostics hold it, the neighbouring table without it has no such warning."""
    from privrelease.errors import PrivateDataWarning

    other = small_df.assign(label="no")
    other.loc[0, "age"] = 150
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = release(other, small_schema, "laplace", 1.0, rng=0)
    private = [str(w.message) for w in rec if issubclass(w.category, PrivateDataWarning)]
    assert len(private) == 2 and all(m.startswith("PRIVATE") for m in private), private
    assert r.private_diagnostics.warnings == private
    assert r.private_diagnostics.to_dict()["warnings"] == private
    clean = release(small_df, small_schema, "laplace", 1.0, rng=0)
    assert clean.private_diagnostics.warnings == []
