"""privrelease.Synthesizer: fit(df) then sample(n), in the schema's columns."""

import pytest
from sklearn.exceptions import NotFittedError

from privrelease import Synthesizer
from privrelease.errors import ParameterError, SchemaError
from privrelease.schema import Encoder


@pytest.mark.parametrize("form", ["schema", "dict", "yaml"])
def test_fit_sample_in_the_schemas_columns(small_schema, small_df, tmp_path, form):
    schema = {"schema": small_schema, "dict": small_schema.to_dict(), "yaml": tmp_path / "s.yaml"}[form]
    (tmp_path / "s.yaml").write_text(small_schema.to_yaml())
    syn = Synthesizer(schema, mechanism="jiang-lda", epsilon=1.0, rng=0)
    assert syn.fit(small_df) is syn
    out = syn.sample(37)
    assert list(out.columns) == small_schema.names and len(out) == 37
    Encoder(small_schema).encode(out, on_out_of_bounds="error")  # values inside the declared domain
    assert syn.certificate_.epsilon == 1.0 and syn.certificate_.mechanism == "jiang-lda"


def test_sample_and_transform_before_fit_raise_not_fitted(small_schema):
    syn = Synthesizer(small_schema, mechanism="laplace")
    with pytest.raises(NotFittedError):
        syn.sample(3)
    with pytest.raises(NotFittedError):
        syn.transform()


def test_row_aligned_mechanism_transforms_and_refuses_sample(small_schema, small_df):
    syn = Synthesizer(small_schema, mechanism="laplace", epsilon=1.0, rng=0).fit(small_df)
    out = syn.transform(small_df)
    assert list(out.columns) == small_schema.names and len(out) == len(small_df)
    with pytest.raises(ParameterError, match="use transform"):
        syn.sample(5)
    with pytest.raises(ParameterError, match="fit a new Synthesizer"):
        syn.transform(small_df.head(10))


def test_default_mechanism_and_mechanism_params(small_schema, small_df):
    syn = Synthesizer(small_schema, epsilon=2.0, rng=1, dependence="mixture", n_components=2)
    assert syn.get_params()["n_components"] == 2 and syn.get_params()["mechanism"] is None
    out = syn.fit(small_df).sample(10)
    assert syn.mechanism_.name == "gauss-copula" and list(out.columns) == small_schema.names


def test_bad_schema_is_a_schema_error(small_df):
    with pytest.raises(SchemaError):
        Synthesizer(42).fit(small_df)


# ---- the API and the command line agree; what a shared model carries ---------------------------------

def test_epsilon_is_required_as_on_the_command_line(small_schema, small_df):
    """Pins `Synthesizer(schema)` fitting at a silent epsilon of 1.0 while the CLI requires --epsilon."""
    with pytest.raises(ParameterError, match=r"epsilon is required \(epsilon=\.\.\."):
        Synthesizer(small_schema, mechanism="laplace").fit(small_df)


def test_a_second_fit_without_a_ledger_warns_that_it_spends_again(small_schema, small_df):
    """Pins a second fit spending the budget again without a word."""
    import warnings

    from privrelease.errors import BudgetWarning

    syn = Synthesizer(small_schema, mechanism="laplace", epsilon=0.5, rng=0)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        syn.fit(small_df)  # the first fit: nothing about spending again
    assert not [r for r in rec if "again" in str(r.message)]
    with pytest.warns(BudgetWarning, match="spends epsilon=0.5 again"):
        syn.fit(small_df)


def test_label_in_the_schemas_place_in_the_api_and_the_cli(tmp_path, capsys, small_df):
    """Pins the command line writing the label column last while the API kept the schema's order."""
    from privrelease import release
    from privrelease.cli.app import main
    from privrelease.schema import Schema

    schema = Schema.from_dict({"columns": {
        "label": {"type": "categorical", "categories": ["no", "yes"], "role": "label"},
        "age": {"type": "numeric", "lower": 0, "upper": 100, "integer": True},
        "score": {"type": "numeric", "lower": 0.0, "upper": 1.0},
        "color": {"type": "categorical", "categories": ["red", "green", "blue"]}}})
    assert list(release(small_df, schema, "jiang-lda", 1.0, rng=0).data.columns) == schema.names
    (tmp_path / "s.yaml").write_text(schema.to_yaml())
    small_df.to_csv(tmp_path / "d.csv", index=False)
    main(["release", str(tmp_path / "d.csv"), "-s", str(tmp_path / "s.yaml"), "-m", "jiang-lda", "-e", "1",
          "--seed", "0", "--out", str(tmp_path / "o.csv")])
    import pandas as pd

    assert list(pd.read_csv(tmp_path / "o.csv", nrows=1).columns) == schema.names


@pytest.mark.parametrize("mechanism", ["gauss-copula", "pca-gauss"])
def test_a_pickled_synthesizer_carries_no_private_diagnostics(small_schema, small_df, mechanism):
    """Pins the exact clip counts and the input's sha256 travelling inside a pickled model."""
    import pickle

    df = small_df.copy()
    df.loc[:4, "age"] = 150  # clipped: an exact count of the private input
    syn = Synthesizer(small_schema, mechanism=mechanism, epsilon=1.0, rng=0)
    with pytest.warns(UserWarning):
        syn.fit(df)
    diag = syn.private_diagnostics_
    assert diag.clip_counts["age"] == 5 and diag.input_sha256
    blob = pickle.dumps(syn)
    assert diag.input_sha256.encode() not in blob
    copy = pickle.loads(blob)
    assert copy.private_diagnostics_ is None and copy.mechanism_.private_diagnostics() == {}
    assert len(copy.sample(7)) == 7
    assert syn.private_diagnostics_ is diag  # the fitted object itself keeps them


def test_in_memory_input_hash_sees_values_columns_and_types_not_the_index():
    import pandas as pd

    from privrelease.io.tables import frame_sha256

    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    h = frame_sha256(df)
    assert h == frame_sha256(df.copy()) == frame_sha256(df.set_axis([7, 8, 9]))
    changed = df.copy()
    changed.loc[1, "a"] = 5
    assert len({h, frame_sha256(changed), frame_sha256(df.rename(columns={"b": "c"})),
                frame_sha256(df.astype({"a": float}))}) == 4


@pytest.mark.parametrize("share", [0.0, 0.15, 1.0])
def test_default_release_with_a_numeric_column_that_may_be_missing(share):
    """The default's pair stage runs on a mixed table of a few thousand records whose numeric column
    is declared ``missing: allowed`` (none, some or all of it missing): the release keeps the schema."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 4000
    a = rng.normal(50, 10, n).clip(0, 100)
    df = pd.DataFrame({
        "a": a.round(1),
        "b": (a * 0.5 + rng.normal(0, 5, n)).clip(0, 100).round(0),
        "c": np.where(a > 50, "hi", "lo"),
        "d": rng.choice(list("xyz"), n),
        "e": np.where(a > 45, "p", "q"),
        "y": np.where(a + rng.normal(0, 10, n) > 50, "yes", "no"),
    })
    df.loc[rng.random(n) < share, "a"] = np.nan
    schema = {"columns": {
        "a": {"type": "numeric", "lower": 0, "upper": 100, "step": 0.1, "missing": "allowed"},
        "b": {"type": "numeric", "lower": 0, "upper": 100, "integer": True},
        "c": {"type": "categorical", "categories": ["hi", "lo"]},
        "d": {"type": "categorical", "categories": ["x", "y", "z"]},
        "e": {"type": "categorical", "categories": ["p", "q"]},
        "y": {"type": "categorical", "categories": ["no", "yes"], "role": "label"},
    }}
    syn = Synthesizer(schema, epsilon=1.0, rng=0).fit(df)
    assert syn.mechanism_.model_ is not None  # the graphical model's candidates were counted
    out = syn.sample(n)
    assert list(out.columns) == ["a", "b", "c", "d", "e", "y"] and len(out) == n
    missing = out["a"].isna().mean()
    assert abs(missing - share) < 0.1
    assert out["a"].dropna().between(0, 100).all()
