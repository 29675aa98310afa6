"""The DP schema draft: DP quantile bounds, DP-selected levels, an 'other' level, provenance and its cost."""

import numpy as np
import pandas as pd
import pytest

from privrelease.dp.draft import OTHER, dp_draft_schema, draft_cost
from privrelease.dp.partition import partition_parameters, select_partitions
from privrelease.dp.quantiles import default_grid, dp_quantile, quantile_scores, range_grid
from privrelease.errors import ParameterError, SchemaError
from privrelease.noise import make_source
from privrelease.schema import Encoder, Schema


def _table(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    city = rng.choice(["Paris", "Lyon", "Nice"], n).astype(object)
    city[:3] = ["Zzz-unique-1", "Zzz-unique-2", "Zzz-unique-3"]  # held by one record each: never selected
    return pd.DataFrame({"age": rng.integers(20, 71, n), "income": rng.uniform(1000, 9000, n), "city": city,
                         "y": rng.choice(["no", "yes"], n)})


def test_quantile_scores_handle_a_point_mass():
    """With most values at 0, the candidate at the mass is the quantile (it does not tie with every
    candidate below the data)."""
    x = np.r_[np.zeros(90), np.arange(1, 11)]
    s = quantile_scores(x, 0.01, np.array([-5.0, 0.0, 0.5, 20.0]))
    assert s.tolist() == [-1.0, 0.0, -89.0, -99.0]


def test_dp_quantile_concentrates_with_budget():
    x = np.random.default_rng(1).normal(50, 10, 20_000)
    src = make_source(0)
    est = dp_quantile(x, 0.5, 5.0, default_grid(), src, size=200)
    assert np.median(est) == pytest.approx(50, abs=1)
    assert dp_quantile(x, 0.5, 5.0, range_grid(0, 100), src) == pytest.approx(50, abs=1)


def test_partition_selection_keeps_frequent_levels_only():
    b, tau = partition_parameters(1.0, 1e-6)
    assert b == 2.0 and tau > 20
    vals = ["a"] * 1000 + ["b"] * 1000 + ["c"] * 2 + [None] * 5
    assert select_partitions(vals, 1.0, 1e-6, make_source(0)) == ["a", "b"]


def test_dp_draft_schema_bounds_levels_other_and_provenance():
    df = _table()
    s, cost = dp_draft_schema(df, 8.0, 1e-6, rng=0, label="y")
    assert (cost.epsilon, cost.delta) == (8.0, 1e-6)
    age, income, city, y = (s[c] for c in ("age", "income", "city", "y"))
    assert age.integer and 15 <= age.lower <= 22 and 68 <= age.upper <= 75
    assert 900 <= income.lower <= 1200 and 8800 <= income.upper <= 9100
    assert list(city.categories) == ["Lyon", "Nice", "Paris", OTHER] and city.other == OTHER
    assert y.role == "label" and list(y.categories) == ["no", "yes", OTHER]
    p = s.provenance
    assert p["method"] == "dp-draft" and p["epsilon"] == 8.0 and p["delta"] == 1e-6
    assert p["per_query"]["quantile_epsilon"] == pytest.approx(8.0 / (2 * 2 + 2))
    # the unselected unique levels encode into the 'other' level instead of failing
    X = Encoder(s, ["city"]).encode(df).X
    assert X[:3, 3].tolist() == [1.0, 1.0, 1.0]
    # the provenance survives YAML
    again = Schema.from_dict(__import__("yaml").safe_load(s.to_yaml()))
    assert again.provenance == p and again["city"].other == OTHER


def test_dp_draft_with_a_public_range_and_no_categorical_column():
    df = _table()[["age", "income"]]
    s, cost = dp_draft_schema(df, 4.0, rng=1, ranges={"income": (0, 10_000)})
    assert cost.delta == 0.0 and s.provenance["grid"]["income"] == [0.0, 10000.0]
    assert draft_cost(df, 4.0, None).delta == 0.0
    assert 900 <= s["income"].lower <= 1100


def test_dp_draft_refusals():
    df = _table()
    with pytest.raises(ParameterError, match="needs a delta"):
        dp_draft_schema(df, 1.0)
    with pytest.raises(SchemaError, match="label column 'nosuch'"):
        dp_draft_schema(df, 1.0, 1e-6, label="nosuch")
    with pytest.raises(ParameterError):
        dp_draft_schema(df, float("inf"), 1e-6)
