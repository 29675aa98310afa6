"""Missing categorical values stay missing (issue 35, item 10): ``missing: allowed`` on a categorical column
encodes them as one internal level that every mechanism treats as an ordinary one and decodes it back to a
missing value; the old form (``missing: LEVEL`` names a level) keeps working; a label never gains a missing
level: the schema refuses ``missing: allowed`` on it and the DP draft says the label has missing values."""

import numpy as np
import pandas as pd
import pytest

from privrelease.dp.draft import OTHER, dp_draft
from privrelease.errors import InputDataError, SchemaError
from privrelease.schema import Encoder, Schema
from privrelease.schema.values import StatedFacts

SPEC = {"columns": {"c": {"type": "categorical", "categories": ["a", "b"], "missing": "allowed"},
                    "x": {"type": "numeric", "lower": 0, "upper": 1}}}


def test_missing_allowed_encodes_one_internal_level_and_decodes_it_to_missing():
    s = Schema.from_dict(SPEC)
    enc = Encoder(s)
    assert enc.width == 1 + 3  # a, b and the missing level: an ordinary one-hot block
    df = pd.DataFrame({"c": ["a", None, "b", ""], "x": [0.1, 0.2, 0.3, 0.4]})
    s_na = Schema.from_dict({**SPEC, "na_values": [""]})
    X = Encoder(s_na).encode(df).X
    assert X[:, 0:3].sum(axis=1).tolist() == [1, 1, 1, 1] and X[:, 2].tolist() == [0, 1, 0, 1]
    out = Encoder(s_na).decode(X)
    assert out["c"].tolist()[0] == "a" and out["c"].tolist()[2] == "b"
    assert out["c"].isna().tolist() == [False, True, False, True]
    assert s.to_dict()["columns"]["c"] == {"type": "categorical", "categories": ["a", "b"], "missing": "allowed"}
    assert Schema.from_dict(s.to_dict()) == s


def test_the_internal_level_never_reads_a_value():
    """A value spelled like the internal level is a value, not a missing one: refused as undeclared."""
    s = Schema.from_dict(SPEC)
    inner = s["c"].categories[-1]
    with pytest.raises(InputDataError, match="not declared in the schema"):
        Encoder(s, ["c"]).encode(pd.DataFrame({"c": ["a", inner]}))


def test_a_named_missing_level_keeps_working():
    s = Schema.from_dict({"columns": {"c": {"type": "categorical", "categories": ["a", "b"], "missing": "Unknown"}}})
    enc = Encoder(s)
    out = enc.decode(enc.encode(pd.DataFrame({"c": ["a", None]})).X)
    assert out["c"].tolist() == ["a", "Unknown"]
    s2 = Schema.from_dict({"columns": {"c": {"type": "categorical", "categories": ["allowed", "no"],
                                             "missing": "allowed"}}})  # a level named 'allowed'
    enc2 = Encoder(s2)
    assert enc2.decode(enc2.encode(pd.DataFrame({"c": [None, "no"]})).X)["c"].tolist() == ["allowed", "no"]


def test_a_label_with_missing_allowed_is_refused_in_one_line():
    spec = {"columns": {"y": {"type": "categorical", "categories": ["no", "yes"], "missing": "allowed",
                              "role": "label"}}}
    with pytest.raises(SchemaError) as e:
        Schema.from_dict(spec)
    assert "\n" not in str(e.value) and "label" in str(e.value) and "'y'" in str(e.value)
    plain = Schema.from_dict({"columns": {"y": {"type": "categorical", "categories": ["no", "yes"],
                                                "missing": "allowed"}, "x": {"type": "numeric", "lower": 0,
                                                                              "upper": 1}}})
    with pytest.raises(SchemaError, match="label"):
        plain.with_role("y", "label")


def _table(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.choice(["u", "v", "w"], n).astype(object)
    c[rng.random(n) < 0.3] = None
    y = rng.choice(["no", "yes"], n).astype(object)
    y[rng.random(n) < 0.1] = None
    return pd.DataFrame({"c": c, "y": y, "x": rng.uniform(0, 1, n)})


def test_the_dp_draft_keeps_missing_categorical_values_missing_and_says_so_for_the_label():
    df = _table()
    d = dp_draft(df, 6.0, 1e-6, rng=0, facts=StatedFacts.of("y", numeric=["x"]))
    c, y = d.schema["columns"]["c"], d.schema["columns"]["y"]
    assert c["missing"] == "allowed" and c["categories"] == ["u", "v", "w", OTHER]
    assert "missing" not in y and y["categories"][:2] == ["no", "yes"]
    said = [w for w in d.warnings if "column 'y'" in w]
    assert len(said) == 1 and "missing values" in said[0] and "refuses" in said[0]
    s = Schema.from_dict(d.schema)
    enc = Encoder(s, ["c"])
    out = enc.decode(enc.encode(df[["c"]]).X)
    assert out["c"].isna().sum() == df["c"].isna().sum() and OTHER not in set(out["c"].dropna())
