"""Identifiers with repeats (issue 35, item 12): a text column of about 5,700 distinct values in 13,000
records (a household or person code held by a few records each) is identifier-like, left out by both
drafts with a hint that a 'unique' constraint releases fresh identifiers; a categorical column of many
records per level is not."""

import warnings

import numpy as np
import pandas as pd

from privrelease.dp.draft import dp_draft
from privrelease.errors import DataWarning
from privrelease.schema import draft_schema_dict
from privrelease.schema.values import ColumnCounts, canonical_text, decide_kind


def _table(n=13_000, seed=0):
    rng = np.random.default_rng(seed)
    household = np.array([f"H{i:06d}" for i in rng.integers(0, 7000, n)], dtype=object)  # about 5,700 distinct
    return pd.DataFrame({"household": household, "city": rng.choice([f"c{i}" for i in range(300)], n),
                         "x": rng.uniform(0, 1, n)})


def test_an_identifier_with_repeats_is_recognised():
    df = _table()
    assert 5000 < df["household"].nunique() < 6500
    assert decide_kind(ColumnCounts.exact(canonical_text(df["household"])), len(df)) == "identifier"
    assert decide_kind(ColumnCounts.exact(canonical_text(df["city"])), len(df)) == "categorical"
    d = dp_draft(df, 0.5, 1e-6, rng=0)
    assert "household" not in d.schema["columns"] and "city" in d.schema["columns"]
    said = [w for w in d.warnings if "column 'household'" in w]
    assert len(said) == 1 and "constraints: [{type: unique, column: household}]" in said[0]


def test_the_non_private_draft_leaves_it_out_with_the_same_hint():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cols = draft_schema_dict(_table(3000))["columns"]
    assert "household" not in cols
    said = [str(w.message) for w in caught if issubclass(w.category, DataWarning) and "household" in str(w.message)]
    assert said and "{type: unique, column: household}" in said[0]
