"""gauss-copula: public cells, marginal post-processing, quota decoding, atoms, streaming, contract."""

import math

import numpy as np
import pandas as pd
import pytest

from privrelease.errors import ParameterError
from privrelease.errors import DataWarning
from privrelease.mechanisms.gauss_mixture.copula_estimate import denoise, project_to_simplex
from privrelease.mechanisms.gauss_mixture.copula_measure import CellCounter
from privrelease.mechanisms.gauss_mixture.copula_plan import histogram_sensitivity
from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from privrelease.mechanisms.gauss_mixture.quotas import quota_assign
from privrelease.release import release
from privrelease.schema import Encoder, Schema


def _mixed(n=3000, seed=0):
    """A zero-inflated integer column, an integer column with a spike, a continuous one, two categoricals."""
    g = np.random.default_rng(seed)
    y = (g.random(n) < 0.3).astype(int)
    gain = np.where(g.random(n) < 0.9 - 0.5 * y, 0, g.integers(1, 20000, n))
    hours = np.where(g.random(n) < 0.5, 40, g.integers(1, 100, n))
    cont = np.clip(g.normal(0.5 + 0.2 * y, 0.15, n), 0, 1)
    cat = np.where(g.random(n) < 0.7, "a", np.where(g.random(n) < 0.5, "b", "c"))
    sex = np.where(g.random(n) < 0.5 + 0.3 * y, "m", "f")
    df = pd.DataFrame({"gain": gain, "hours": hours, "cont": cont, "cat": cat, "sex": sex,
                       "label": np.where(y == 1, "hi", "lo")})
    schema = Schema.from_dict({"columns": {
        "gain": {"type": "numeric", "lower": 0, "upper": 99999, "integer": True},
        "hours": {"type": "numeric", "lower": 1, "upper": 99, "integer": True},
        "cont": {"type": "numeric", "lower": 0, "upper": 1},
        "cat": {"type": "categorical", "categories": ["a", "b", "c"]},
        "sex": {"type": "categorical", "categories": ["f", "m"]},
        "label": {"type": "categorical", "categories": ["lo", "hi"], "role": "label"}}})
    return df, schema


def test_histogram_sensitivity_is_sqrt_2d():
    assert histogram_sensitivity(11) == pytest.approx(math.sqrt(22))


def test_histogram_sensitivity_attained_by_a_replacement():
    """Replacing one record (its class too) moves two cells per column: the norm is sqrt(2 d)."""
    df, schema = _mixed(50)
    enc = Encoder(schema, [c for c in schema.names if c != "label"])
    m = GaussCopula(math.inf, domain=enc.domain, **GaussCopula.schema_params(enc, Encoder(schema, ["label"])))
    m._setup(enc.width)
    a = enc.encode(pd.DataFrame([{"gain": 0, "hours": 40, "cont": 0.1, "cat": "a", "sex": "f"}])).X
    b = enc.encode(pd.DataFrame([{"gain": 5000, "hours": 41, "cont": 0.9, "cat": "b", "sex": "m"}])).X

    dom = m.domain_
    counter = CellCounter(p=dom.p, numeric=tuple(dom.numeric), cells=tuple(m.cells_), blocks=tuple(dom.blocks),
                          n_classes=2)

    def counts(X, label):
        return np.concatenate([h.ravel() for h in counter(X, np.array([label]))[2]])

    for la, lb in ((0, 0), (0, 1)):
        assert np.linalg.norm(counts(a, la) - counts(b, lb)) == pytest.approx(histogram_sensitivity(5))


def test_project_to_simplex():
    v = np.array([5.0, -2.0, 1.0, 0.5])
    c = project_to_simplex(v, 4.0)
    assert c.min() >= 0 and c.sum() == pytest.approx(4.0)
    assert c[1] == 0.0


def test_cells_keep_atoms_on_integer_grid_and_bounds():
    grid = NumericTree(1, 99, 1.0, branching=16, max_leaves=128)  # hours 1..99: an atom per value
    assert grid.grid and grid.n_cells == 99 and grid.atom.all() and grid.depth == 2
    assert grid.index(np.array([39 / 98]))[0] == 39
    wide = NumericTree(0, 99999, 1.0, branching=16, max_leaves=34)  # atoms at both bounds, 32 intervals
    assert not wide.grid and wide.n_cells == 34
    k = wide.index(np.array([0.0, 1e-4, 0.5, 1.0]))
    assert k[0] == 0 and k[1] == 1 and k[3] == 33 and wide.atom[[0, 33]].all()


def test_quota_assign_meets_quotas_and_follows_scores():
    g = np.random.default_rng(0)
    s = g.random((1000, 4))
    s[:100, 3] += 10  # rows 0..99 strongly prefer level 3
    codes = quota_assign(s, np.array([0.4, 0.3, 0.2, 0.1]), g)
    assert np.bincount(codes, minlength=4).tolist() == [400, 300, 200, 100]
    assert np.all(codes[:100] == 3)


def _fit_release(df, schema, seed=0, eps=1.0, **kw):
    return release(df, schema, "gauss-copula", eps, delta=1e-5, rng=seed, **kw)


def test_marginals_and_atoms_survive_the_release():
    """The zero-inflated column keeps its atom at 0 and the spike at 40 comes back exactly."""
    df, schema = _mixed()
    out = _fit_release(df, schema, eps=4.0).data
    assert abs((out["gain"] == 0).mean() - (df["gain"] == 0).mean()) < 0.05
    assert abs((out["hours"] == 40).mean() - (df["hours"] == 40).mean()) < 0.05
    real = df["cat"].value_counts(normalize=True)
    rel = out["cat"].value_counts(normalize=True)
    assert abs(real["a"] - rel["a"]) < 0.05  # not inflated by argmax decoding


def test_same_rng_same_output_and_fit_returns_self():
    df, schema = _mixed(800)
    a = _fit_release(df, schema, seed=3).data
    b = _fit_release(df, schema, seed=3).data
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == schema.names
    enc = Encoder(schema, [c for c in schema.names if c != "label"])
    m = GaussCopula(1.0, domain=enc.domain, rng=0, n_classes=2)
    assert m.fit(enc.encode(df).X, Encoder(schema).encode_labels(df)) is m
    assert sum(m.rho_split_.values()) <= m.rho_ * (1 + 1e-9)


def test_streamed_chunks_give_a_valid_release():
    df, schema = _mixed(1200)
    enc = Encoder(schema, [c for c in schema.names if c != "label"])
    X, y = enc.encode(df).X, Encoder(schema).encode_labels(df)
    m = GaussCopula(1.0, domain=enc.domain, rng=1, n_classes=2,
                    **{k: v for k, v in GaussCopula.schema_params(enc, None).items()})
    m.fit_passes(lambda: ((X[i:i + 250], y[i:i + 250]) for i in range(0, len(X), 250)))
    # the cells, then the graphical model's candidates
    assert m.model_plan_ is not None
    assert m.n_ == 1200 and m.passes_ == 2
    Xs, ys = m.sample(500)
    assert Xs.shape == (500, enc.width) and set(np.unique(ys)) <= {0, 1}


def test_epsilon_accounting_matches_target():
    df, schema = _mixed(800)
    cert = _fit_release(df, schema, eps=1.0).certificate
    assert cert.extra["epsilon_check_dp_accounting"] <= 1.0 + 1e-6


@pytest.mark.parametrize("bad", [{"marginal_share": 0}, {"marginal_share": 1.0}, {"branching": 1},
                                 {"grids": ((0, 1, 0),)}, {"max_leaves": 2}, {"missing": (True,)},
                                 {"grids": ((0, 1, 0), (1, 0, 0), (0, 1, -1))}])
def test_bad_parameters_refused(bad):
    df, schema = _mixed(300)
    with pytest.raises(ParameterError):
        _fit_release(df, schema, **bad)


def test_class_conditional_marginals_follow_the_label():
    """With by_label, each class keeps its own atom share (0 gain is 90 % in one class, 40 % in the other)."""
    df, schema = _mixed(4000)
    out = _fit_release(df, schema, eps=4.0).data
    for lv in ("lo", "hi"):
        real = (df.loc[df["label"] == lv, "gain"] == 0).mean()
        rel = (out.loc[out["label"] == lv, "gain"] == 0).mean()
        assert abs(real - rel) < 0.06, (lv, real, rel)


def test_streamed_file_release(tmp_path):
    """The file path streams: the pipeline calls fit_passes over fresh chunk iterators."""
    from privrelease.release import release_file

    df, schema = _mixed(1500)
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    cert = release_file(src, schema, tmp_path / "out.csv", "gauss-copula", 1.0, delta=1e-5, rng=0, chunk_rows=400)
    out = pd.read_csv(tmp_path / "out.csv")
    assert len(out) == 1500 and list(out.columns) == schema.names
    assert cert.extra["passes"] == 2  # the cells and the graphical model's candidates


def test_denoise():
    v = denoise(np.array([100.0, 3.0, -5.0, 50.0]), 150.0, 10.0)
    assert v.tolist() == [100.0, 0.0, 0.0, 50.0]


def test_few_records_many_columns_release_the_coarsest_cells_and_say_so():
    """Many numeric columns, few records: every tree is released at its coarsest level (a public rule,
    announced in one warning); sampled values stay inside the bounds and off them."""
    g = np.random.default_rng(0)
    X = 0.25 + 0.5 * g.random((400, 60))
    with pytest.warns(DataWarning, match="coarsest cells"):
        m = GaussCopula(1.0, rng=0, n_classes=2).fit(X, (X[:, 0] > 0.5).astype(int))
    assert set(m.depths_) == {1} and len(m.marginals_) == 60
    Xs, ys = m.sample(1000)
    assert Xs.shape == (1000, 60) and Xs.min() >= 0 and Xs.max() <= 1
    assert np.mean((Xs == 0) | (Xs == 1)) < 0.01  # nothing piled onto the bounds


@pytest.mark.parametrize("labelled, declared, reads, dependence", [(False, None, 2, "auto"), (True, 2, 2, "auto"),
                                                                 (False, None, 3, "mixture"), (True, 2, 4, "mixture")])
def test_passes_over_the_input(labelled, declared, reads, dependence):
    """The default reads a table twice (cells, then the graphical model's candidates). The mixture reads an
    unlabelled table three times (cells, then the mixture's centre and moments), and with labels once more
    (the within-class pass)."""
    from privrelease.engine.passes import ChunkPasses

    df, schema = _mixed(600)
    enc = Encoder(schema, [c for c in schema.names if c != "label"])
    X, y = enc.encode(df).X, (Encoder(schema).encode_labels(df) if labelled else None)
    calls = []

    def chunks():
        calls.append(1)
        return iter([(X[:300], None if y is None else y[:300]), (X[300:], None if y is None else y[300:])])

    m = GaussCopula(1.0, domain=enc.domain, rng=0, n_classes=declared, dependence=dependence,
                    **GaussCopula.schema_params(enc, None))
    m.fit_executor(ChunkPasses(chunks))
    assert len(calls) == reads and m.n_ == 600 and m.labelled_ == labelled
    assert (m.n_classes_ == 2) if labelled else (m.n_classes_ == 1)
