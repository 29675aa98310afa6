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
    syn = Synthesizer(small_schema, epsilon=2.0, rng=1, n_components=2)
    assert syn.get_params()["n_components"] == 2 and syn.get_params()["mechanism"] is None
    out = syn.fit(small_df).sample(10)
    assert syn.mechanism_.name == "gauss-copula" and list(out.columns) == small_schema.names


def test_bad_schema_is_a_schema_error(small_df):
    with pytest.raises(SchemaError):
        Synthesizer(42).fit(small_df)
