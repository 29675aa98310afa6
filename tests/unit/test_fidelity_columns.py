"""Measures inside the bins (KS, W1 / range, quantiles, atoms, missing shares, 3-way TVD, majority rate)
on hand-made tables whose answers are known."""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from privrelease.evaluation.columns import (
    ks_statistic,
    majority_rate,
    numeric_column,
    numeric_columns,
    tvd_3way,
    wasserstein_1,
)
from privrelease.evaluation.fidelity import evaluate, tvd_1way
from privrelease.schema import CategoricalColumn, NumericColumn, Schema


def _num(name="x", lower=0, upper=10, **kw):
    return NumericColumn(name, lower, upper, **kw)


def test_ks_identical_disjoint_and_known():
    assert ks_statistic([1, 2, 3, 3], [3, 1, 3, 2]) == 0.0
    assert ks_statistic([1, 2, 3], [4, 5]) == 1.0
    # F_r(1) = 1/2, F_s(1) = 0: the largest gap; ties count once
    assert ks_statistic([1, 1, 2, 2], [2, 2, 2, 2]) == pytest.approx(0.5)
    # missing values are left out; a side with no values at all is as far as can be
    assert ks_statistic([1, np.nan, 2], [1, 2, np.nan, np.nan]) == 0.0
    assert ks_statistic([1, 2], [np.nan]) == 1.0 and ks_statistic([np.nan], []) == 0.0


def test_w1_over_range():
    assert wasserstein_1([0, 0, 0, 0], [0, 0, 0, 8]) == pytest.approx(2.0)  # a quarter of the mass moves 8
    m = numeric_column(pd.Series([0.0] * 4), pd.Series([10.0] * 4), _num())
    assert m["w1_range"] == pytest.approx(1.0) and m["ks"] == 1.0
    same = numeric_column(pd.Series([1.0, 5.0]), pd.Series([5.0, 1.0]), _num())
    assert same["w1_range"] == 0.0


def test_quantiles_and_their_error():
    real = pd.Series(np.arange(101, dtype=float))  # median 50, p90 90, p99 99
    m = numeric_column(real, real * 2, _num(upper=200))
    assert m["quantiles"]["median"] == {"real": 50.0, "released": 100.0, "error": pytest.approx(1.0)}
    assert m["quantiles"]["p90"]["released"] == 180.0 and m["quantiles"]["p99"]["real"] == 99.0
    assert m["quantile_error"] == pytest.approx(1.0)
    # a real quantile of 0: the error is counted in steps of the declared resolution
    z = numeric_column(pd.Series([0.0] * 10), pd.Series([0.5] * 10), _num(step=0.5))
    assert z["quantiles"]["median"]["error"] == pytest.approx(1.0)


def test_atom_shares():
    # of 200 real records 0 holds 50 % (10 % of the released ones); 1..40 and 0.5 hold 1 % each (atoms);
    # values of a single record (0.5 %) are not atoms
    real = pd.Series([0.0] * 100 + [float(v) for v in range(1, 41)] * 2 + [0.5] * 2 + list(np.linspace(50, 60, 18)))
    released = pd.Series([0.0] * 20 + [1.0] * 180)
    m = numeric_column(real, released, _num(upper=100))
    atoms = {a["value"]: a for a in m["atoms"]}
    assert set(atoms) == {0.0, 0.5, *map(float, range(1, 41))}
    assert atoms[0.0]["real"] == pytest.approx(0.5) and atoms[0.0]["released"] == pytest.approx(0.1)
    assert atoms[1.0]["released"] == pytest.approx(0.9) and atoms[0.5]["released"] == 0.0
    assert m["atom_gap"] == pytest.approx(0.89)


def test_missing_values_and_shares():
    real = pd.Series([1.0, np.nan, 2.0, np.nan])
    m = numeric_column(real, pd.Series([1.0, 2.0, 2.0, 1.0]), _num())
    assert m["missing"] == {"real": 0.5, "released": 0.0} and m["ks"] == 0.0
    # the atoms' shares are shares of all records, missing ones included
    assert [a["real"] for a in m["atoms"]] == [0.25, 0.25]
    empty = numeric_column(real, pd.Series([np.nan] * 4), _num())
    assert empty["ks"] == 1.0 and np.isnan(empty["w1_range"]) and np.isnan(empty["quantiles"]["median"]["released"])


def test_columns_worst_first():
    s = Schema([_num("a"), _num("b"), CategoricalColumn("c", ("u", "v"))])
    real = pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, 2.0], "c": ["u", "v"]})
    got = numeric_columns(real, pd.DataFrame({"a": [1.0, 2.0], "b": [7.0, 8.0], "c": ["u", "v"]}), s)
    assert list(got) == ["b", "a"] and got["b"]["ks"] == 1.0


@dataclass(frozen=True)
class DatetimeColumn(NumericColumn):
    """Stands for the schema's datetime column: a numeric column in days since 1970-01-01."""


def test_datetime_columns_are_read_as_dates():
    day = pd.Timestamp("2020-01-01").value // 86_400_000_000_000
    s = Schema([DatetimeColumn("d", day, day + 365), CategoricalColumn("c", ("u",))])
    real = pd.DataFrame({"d": ["2020-01-01", "2020-03-01", None, "2020-12-31"], "c": "u"})
    released = pd.DataFrame({"d": ["2020-01-01", "2020-03-01", "2020-12-31", np.nan], "c": "u"})
    m = numeric_columns(real, released, s)["d"]
    assert m["ks"] == 0.0 and m["quantiles"]["median"]["real"] == day + 60
    assert tvd_1way(real, released, s)["d"] == 0.0
    shifted = released.assign(d=["2020-07-01"] * 4)
    assert numeric_columns(real, shifted, s)["d"]["ks"] == pytest.approx(2 / 3)  # 2 of 3 real dates precede July
    # datetime64 values (a table read with dates parsed) mean the same
    assert numeric_columns(real, released.assign(d=pd.to_datetime(released["d"])), s)["d"]["ks"] == 0.0
    ev = evaluate(real, shifted, s, sdmetrics=False)  # every measure runs on dates with a missing one
    assert ev.numeric["d"]["missing"] == {"real": 0.25, "released": 0.0} and ev.tvd_1way["d"] > 0
    assert "numeric column (worst KS first)" in ev.to_table()


def test_evaluate_with_missing_numbers_everywhere(small_df, small_schema):
    real = small_df.assign(score=small_df["score"].where(small_df.index % 4 != 0))
    released = small_df.assign(score=np.nan)
    ev = evaluate(real, released, small_schema, test=small_df.iloc[:50], sdmetrics=True)
    m = ev.numeric["score"]
    assert m["ks"] == 1.0 and m["missing"] == {"real": 0.25, "released": 1.0} and np.isnan(m["w1_range"])
    assert list(ev.numeric)[0] == "score" and "w1_range_max" in ev.summary()


PARITY = Schema([CategoricalColumn("a", ("0", "1")), CategoricalColumn("b", ("0", "1")),
                 CategoricalColumn("y", ("0", "1"), role="label")])


def test_tvd_3way_sees_what_pairs_miss():
    real = pd.DataFrame({"a": list("0011"), "b": list("0101"), "y": list("0110")})  # y = a xor b
    flipped = real.assign(y=list("1001"))  # every 1- and 2-way marginal the same, every triple wrong
    assert tvd_3way(real, real.copy(), PARITY, "y") == {("a", "b"): 0.0}
    assert tvd_3way(real, flipped, PARITY, "y") == {("a", "b"): 1.0}
    half = real.assign(y=list("1010"))  # a = y now: the triples with a = 0 swap their label
    assert tvd_3way(real, half, PARITY, "y")[("a", "b")] == pytest.approx(0.5)
    ev = evaluate(real, flipped, PARITY, sdmetrics=False)
    assert ev.tvd_2way_mean == 0.0 and ev.tvd_3way == {("a", "b"): 1.0} and ev.label_3way == "y"


def test_majority_rate_and_evaluation_fields(small_df, small_schema):
    col = small_schema["label"]
    real = small_df.iloc[:150].assign(label=["yes"] * 100 + ["no"] * 50)
    test = small_df.iloc[150:]
    assert majority_rate(real, test, col) == pytest.approx(np.mean(test["label"] == "yes"))
    ev = evaluate(real, small_df.iloc[:150], small_schema, test=test, sdmetrics=False)
    s = ev.summary()
    assert s["majority_rate"] == ev.majority_rate and {"ks_max", "ks_mean", "tvd_3way", "atom_gap_max"} <= set(s)
    assert s["ks_max"] == max(m["ks"] for m in ev.numeric.values())
    table = ev.to_table()
    assert "majority class for everyone" in table and "3-way TVD" in table and "numeric column (worst KS" in table
    d = ev.to_dict()
    assert list(d["numeric_columns"]) == sorted(ev.numeric, key=lambda k: -ev.numeric[k]["ks"])
    assert d["tvd_3way"]["label"] == "label" and len(d["tvd_3way"]["per_pair"]) == 3
