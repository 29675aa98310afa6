import numpy as np
import pandas as pd
import pytest

from privrelease.errors import InputDataError, SchemaError
from privrelease.schema import Encoder, Schema


def test_roundtrip_within_bounds(small_schema, small_df):
    enc = Encoder(small_schema)
    X = enc.encode(small_df).X
    assert X.shape == (len(small_df), 2 + 3 + 2)
    assert X.min() >= 0 and X.max() <= 1
    back = enc.decode(X)
    assert list(back.columns) == small_schema.names
    assert (back["color"] == small_df["color"]).all()
    assert np.allclose(back["score"], small_df["score"])
    assert (back["age"] == small_df["age"]).all()


def test_decode_clips_and_argmax(small_schema):
    enc = Encoder(small_schema)
    X = np.array([[1.7, -3.0, 0.1, 0.9, 0.2, 0.6, 0.4]])
    out = enc.decode(X)
    assert out.loc[0, "age"] == 100 and out.loc[0, "score"] == 0.0
    assert out.loc[0, "color"] == "green" and out.loc[0, "label"] == "no"


def test_out_of_bounds_clip_counts_and_error(small_schema, small_df):
    df = small_df.copy()
    df.loc[:2, "age"] = 150
    enc = Encoder(small_schema)
    e = enc.encode(df)
    assert e.clip_counts == {"age": 3}
    with pytest.raises(InputDataError, match="outside the declared bounds"):
        enc.encode(df, on_out_of_bounds="error")


def test_nan_refused_naming_column(small_schema, small_df):
    df = small_df.copy()
    df.loc[5, "score"] = np.nan
    with pytest.raises(InputDataError, match="'score' has 1 missing"):
        Encoder(small_schema).encode(df)
    df = small_df.copy()
    df.loc[[1, 2], "color"] = None
    with pytest.raises(InputDataError, match="'color' has 2 missing"):
        Encoder(small_schema).encode(df)


def test_missing_level_declared(small_df):
    s = Schema.from_dict({"na_values": ["?"], "columns": {
        "color": {"type": "categorical", "categories": ["red", "green", "blue", "unknown"], "missing": "unknown"}}})
    df = small_df[["color"]].copy()
    df.loc[0, "color"] = "?"
    df.loc[1, "color"] = None
    out = Encoder(s).decode(Encoder(s).encode(df).X)
    assert out.loc[0, "color"] == "unknown" and out.loc[1, "color"] == "unknown"


def test_unknown_categories_listed(small_schema, small_df):
    df = small_df.copy()
    df.loc[0, "color"] = "purple"
    df.loc[1, "color"] = "teal"
    with pytest.raises(InputDataError, match=r"\['purple', 'teal'\]"):
        Encoder(small_schema).encode(df)


def test_non_numeric_text_refused(small_schema, small_df):
    df = small_df.copy().astype({"score": object})
    df.loc[0, "score"] = "high"
    with pytest.raises(InputDataError, match="non-numeric"):
        Encoder(small_schema).encode(df)


def test_wrong_type_and_missing_column(small_schema, small_df):
    with pytest.raises(InputDataError, match="DataFrame"):
        Encoder(small_schema).encode(small_df.to_numpy())
    with pytest.raises(InputDataError, match="no column"):
        Encoder(small_schema).encode(small_df.drop(columns=["color"]))


@pytest.mark.parametrize("bad, msg", [
    ({"columns": {}}, "no columns"),
    ({"columns": {"a": {"type": "numeric", "lower": 1, "upper": 0}}}, "smaller than upper"),
    ({"columns": {"a": {"type": "numeric", "lower": 0}}}, "have no bounds"),
    ({"columns": {"a": {"type": "text"}}}, "type must be"),
    ({"columns": {"a": {"type": "categorical", "categories": ["x", "x"]}}}, "duplicated"),
    ({"columns": {"a": {"type": "numeric", "lower": 0, "upper": 1, "lowr": 0}}}, "unknown keys"),
    ({"colums": {}}, "unknown schema keys"),
    ({"columns": {"a": {"type": "categorical", "categories": ["x"], "role": "label"},
                  "b": {"type": "categorical", "categories": ["y"], "role": "label"}}}, "at most one label"),
])
def test_bad_schemas(bad, msg):
    with pytest.raises(SchemaError, match=msg):
        Schema.from_dict(bad)


def test_yaml_roundtrip(tmp_path, small_schema):
    p = tmp_path / "s.yaml"
    p.write_text(small_schema.to_yaml())
    assert Schema.from_yaml(p) == small_schema


def test_numeric_category_values_match_strings():
    s = Schema.from_dict({"columns": {"c": {"type": "categorical", "categories": [0, 1]}}})
    X = Encoder(s).encode(pd.DataFrame({"c": [1.0, 0.0, 1.0]})).X
    assert X.tolist() == [[0, 1], [1, 0], [0, 1]]


def test_categorical_values_read_one_at_a_time_whatever_the_mix():
    # each distinct value is read once and mapped back; the codes must be those of reading every row
    s = Schema.from_dict({"columns": {"c": {"type": "categorical", "categories": ["1", "a", "b"]}}})
    raw = pd.Series([" a", "b ", 1, "1", "a", " 1", "b", " a"], dtype=object)
    X = Encoder(s).encode(pd.DataFrame({"c": raw})).X
    assert X.argmax(axis=1).tolist() == [1, 2, 0, 0, 1, 0, 2, 1]
    # in an object column a float is read as its text, whichever value comes first
    for col in ([1.0, 1], [1, 1.0]):
        with pytest.raises(InputDataError, match=r"'1\.0'"):
            Encoder(s).encode(pd.DataFrame({"c": pd.Series(col, dtype=object)}))
    cat = pd.DataFrame({"c": pd.Categorical(["b", "a", "b", "1"])})
    assert Encoder(s).encode(cat).X.argmax(axis=1).tolist() == [2, 1, 2, 0]
    with pytest.raises(InputDataError, match=r"2 value\(s\) in 1 category.*\['z'\]"):
        Encoder(s).encode(pd.DataFrame({"c": ["a", " z", "z", "b"]}))


def test_bundled_adult_schema_has_35_columns(adult):
    df, schema = adult
    enc = Encoder(schema)
    assert enc.width == 35 and enc.n_numeric == 5 and enc.n_categorical == 6
    assert len(df) == 30162
    enc.encode(df, on_out_of_bounds="error")  # every value inside the documented bounds


def test_encoder_warns_clipped_columns_and_one_class_label(small_schema, small_df):
    """Pins silent clipping in the library: the warning names the column and the count."""
    import warnings as _w

    from privrelease.errors import DataWarning

    df = small_df.assign(label="no")
    df.loc[:2, "age"] = -5
    with _w.catch_warnings(record=True) as rec:
        _w.simplefilter("always")
        Encoder(small_schema).encode(df)
    msgs = [str(r.message) for r in rec if issubclass(r.category, DataWarning)]
    assert ("PRIVATE (depends on single records of the input; keep out of shared logs): values of column 'age' "
            "outside the declared bounds [0, 100] were clipped to them (how many: in the private diagnostics)") in msgs
    # no exact count on the console
    assert not any("3 of 200" in m for m in msgs)
    assert any("single class ('no')" in m for m in msgs)
    with _w.catch_warnings():
        _w.simplefilter("error")
        Encoder(small_schema).encode(df, warn=False)  # chunked callers warn once from the totals


def test_in_memory_release_warns_extra_columns(small_schema, small_df):
    from privrelease import release
    from privrelease.errors import DataWarning

    with pytest.warns(DataWarning, match=r"1 column\(s\) not declared in the schema.*\['ssn'\]"):
        release(small_df.assign(ssn=1), small_schema, mechanism="laplace", epsilon=1.0, rng=0)
