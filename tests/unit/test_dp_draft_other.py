"""The DP draft says how much of a column went to '(other)' (issue 35, item 11): levels too rare for the
threshold are merged on purpose (partition selection), and the draft names the column with the DP share of
its records in '(other)' when that share is notable; a release without an 'other' level refuses an
undeclared value."""

import numpy as np
import pandas as pd
import pytest

from privrelease.dp.draft import OTHER, dp_draft
from privrelease.errors import InputDataError
from privrelease.schema import Encoder, Schema
from privrelease.schema.values import StatedFacts


def _table(n=8000, seed=0):
    rng = np.random.default_rng(seed)
    common = rng.choice(["a", "b"], n, p=[0.55, 0.45]).astype(object)
    rare = np.array([f"r{i:03d}" for i in rng.integers(0, 400, n)], dtype=object)  # about 2 records a level
    city = np.where(rng.random(n) < 0.06, rare, common)  # 6 % of the records in rare levels
    return pd.DataFrame({"city": city, "kind": rng.choice(["u", "v"], n), "x": rng.uniform(0, 1, n)})


def test_the_share_that_went_to_other_is_said_when_notable():
    df = _table()
    d = dp_draft(df, 3.0, 1e-6, rng=0, facts=StatedFacts.of(numeric=["x"]))
    assert d.schema["columns"]["city"]["categories"] == ["a", "b", OTHER]
    said = [w for w in d.warnings if "column 'city'" in w]
    assert len(said) == 1 and OTHER in said[0] and "DP estimate" in said[0] and "--levels" in said[0], d.warnings
    share = float(said[0].split("about ")[1].split("%")[0])
    assert 4 <= share <= 8  # 6 % in truth
    assert not [w for w in d.warnings if "column 'kind'" in w]  # nothing rare: nothing said


def test_a_release_refuses_an_undeclared_value_without_an_other_level():
    s = Schema.from_dict({"columns": {"c": {"type": "categorical", "categories": ["a", "b"]}}})
    with pytest.raises(InputDataError, match="not declared in the schema"):
        Encoder(s).encode(pd.DataFrame({"c": ["a", "z"]}))
