"""Public constraints in the schema (privrelease.schema.constraints): stated, validated in one line,
honoured in every released row on the in-memory, streamed and Dask paths, counted or refused in the
input, listed by the certificate and measured by the evaluation."""

import json

import numpy as np
import pandas as pd
import pytest

from privrelease import Synthesizer
from privrelease.errors import InputDataError, SchemaError
from privrelease.release import release, release_file
from privrelease.schema import Schema
from privrelease.schema.constraints import ConstraintSet

SUBS = ["A1", "A2", "B1", "B2", "C1"]
GRADE = {s: s[0] for s in SUBS}
COLUMNS = {
    "grade": {"type": "categorical", "categories": ["A", "B", "C"]},
    "sub_grade": {"type": "categorical", "categories": SUBS},
    "loan": {"type": "numeric", "lower": 0, "upper": 40000, "integer": True},
    "balance": {"type": "numeric", "lower": 0, "upper": 40000, "step": 0.01},
    "fees": {"type": "numeric", "lower": 0, "upper": 500, "step": 0.01},
    "total": {"type": "numeric", "lower": 0, "upper": 41000, "step": 0.01},
    "opened": {"type": "datetime", "lower": "2015-01-01", "upper": "2016-12-31", "step": "day"},
    "closed": {"type": "datetime", "lower": "2015-01-01", "upper": "2018-12-31", "step": "day"},
    "region": {"type": "categorical", "categories": ["north", "south"]},
    "city": {"type": "categorical", "categories": ["n1", "n2", "s1"]},
    "default": {"type": "categorical", "categories": ["no", "yes"], "role": "label"},
}
CONSTRAINTS = [
    {"type": "hierarchy", "child": "sub_grade", "parent": "grade", "map": GRADE},
    {"type": "inequality", "low": "balance", "high": "loan"},
    {"type": "inequality", "low": "opened", "high": "closed", "strict": True},
    {"type": "formula", "column": "total", "expression": "balance + fees"},
    {"type": "combinations", "columns": ["region", "city"],
     "allowed": [["north", "n1"], ["north", "n2"], ["south", "s1"]]},
    {"type": "unique", "column": "loan_id", "prefix": "L"},
]


def schema(constraints=CONSTRAINTS):
    return Schema.from_dict({"columns": COLUMNS, "constraints": constraints})


def table(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    sub = rng.choice(SUBS, n)
    loan = rng.integers(10, 400, n) * 100
    bal = np.round(loan * rng.beta(2, 2, n), 2)
    fees = np.where(rng.random(n) < 0.7, 0.0, np.round(rng.exponential(30, n), 2)).clip(0, 500)
    opened = pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    closed = opened + pd.to_timedelta(rng.integers(1, 700, n), unit="D")
    city = rng.choice(["n1", "n2", "s1"], n)
    return pd.DataFrame({
        "loan_id": rng.permutation(n) + 1000, "grade": [GRADE[s] for s in sub], "sub_grade": sub, "loan": loan,
        "balance": bal, "fees": fees, "total": np.round(bal + fees, 2), "opened": opened.strftime("%Y-%m-%d"),
        "closed": closed.strftime("%Y-%m-%d"), "region": np.where(city == "s1", "south", "north"), "city": city,
        "default": np.where(rng.random(n) < np.where(np.char.startswith(sub.astype(str), "C"), 0.5, 0.1), "yes", "no"),
    })


def holds_everywhere(out: pd.DataFrame, s: Schema):
    shares = ConstraintSet(s, s.constraints).shares(out)
    assert all(v == 1.0 for v in shares.values()), shares


@pytest.mark.parametrize("spec, needle", [
    ({"type": "hierarchy", "child": "sub_grade", "parent": "grade", "map": {"A1": "A"}}, "maps no parent"),
    ({"type": "hierarchy", "child": "sub_grade", "parent": "grade", "map": {**GRADE, "A1": "Z"}}, "does not declare"),
    ({"type": "inequality", "low": "balance", "high": "nope"}, "nope is not a column"),
    ({"type": "inequality", "low": "balance", "high": "opened"}, "both be numbers"),
    ({"type": "formula", "column": "total", "expression": "balance + __import__('os')"}, "is not one of the functions"),
    ({"type": "formula", "column": "total", "expression": "balance +"}, "cannot read the expression"),
    ({"type": "formula", "column": "total", "expression": "total + 1"}, "its own expression"),
    ({"type": "combinations", "columns": ["region", "city"], "allowed": [["north", "x"]]}, "not declared by city"),
    ({"type": "unique"}, "needs column"),
    ({"type": "sum", "column": "total"}, "'type' must be one of"),
    ({"type": "inequality", "low": "balance", "high": "loan", "colour": 1}, "unknown keys"),
])
def test_each_bad_constraint_is_one_line_naming_its_entry(spec, needle):
    with pytest.raises(SchemaError) as exc:
        schema([CONSTRAINTS[0], spec])
    msg = str(exc.value)
    assert msg.startswith("constraint 2 (") and needle in msg and "\n" not in msg, msg


def test_a_derived_column_read_by_another_rule_is_refused():
    with pytest.raises(SchemaError, match="derived by constraint 1"):
        schema([CONSTRAINTS[0], {"type": "hierarchy", "child": "grade", "parent": "region",
                                 "map": {"A": "north", "B": "south", "C": "south"}}])


def test_the_schema_round_trips_its_constraints():
    s = schema()
    again = Schema.from_dict(s.to_dict())
    assert again.constraints == s.constraints and s.to_dict()["constraints"][0]["map"] == GRADE


def test_the_mechanism_releases_the_reparametrised_columns():
    """Derived columns (grade, total, loan_id) are left out, combinations become one column; both
    sides of an inequality are released as they are."""
    ms = ConstraintSet(schema(), schema().constraints).mechanism_schema()
    assert ms.names == ["sub_grade", "loan", "balance", "fees", "opened", "closed", "region+city", "default"]
    assert ms["region+city"].categories == ("north\x1fn1", "north\x1fn2", "south\x1fs1")


def test_every_released_row_holds_every_constraint_and_ids_are_fresh():
    s, df = schema(), table()
    syn = Synthesizer(s, epsilon=1.0, rng=0).fit(df)
    for out in (syn.released_, syn.sample(1234)):
        holds_everywhere(out, s)
        assert list(out.columns) == ["loan_id", *s.names]
        assert out["loan_id"].str.startswith("L").all() and out["loan_id"].is_unique
        assert not set(out["loan_id"]) & set(df["loan_id"].astype(str))
    assert syn.certificate_.constraints == [c.to_dict() for c in s.constraints]


def test_the_parent_inherits_the_childs_relation_with_the_label():
    """The grade is derived from the released sub-grade: the release keeps 'C grades default more'."""
    out = Synthesizer(schema(), epsilon=2.0, rng=1).fit(table(6000)).released_
    rate = out.groupby("grade")["default"].apply(lambda s: (s == "yes").mean())
    assert rate["C"] > rate["A"] + 0.15 and rate["C"] > rate["B"] + 0.15


def test_without_the_constraints_rows_break_them():
    """The check above can fail: the same release without the constraints breaks them."""
    plain = Schema.from_dict({"columns": COLUMNS})
    out = Synthesizer(plain, epsilon=1.0, rng=0).fit(table()).released_
    shares = ConstraintSet(schema(), schema().constraints[:5]).shares(out)
    assert min(shares.values()) < 0.9, shares


def test_a_broken_input_row_is_counted_privately_or_refused():
    s, df = schema(), table()
    df.loc[3, "grade"] = "A" if df.loc[3, "grade"] != "A" else "B"
    df.loc[5, "balance"] = df.loc[5, "loan"] + 1
    res = release(df, s, epsilon=1.0, rng=0)
    assert res.private_diagnostics.clip_counts["constraint hierarchy sub_grade -> grade"] == 1
    assert res.private_diagnostics.clip_counts["constraint balance <= loan"] == 1
    assert "constraint" not in json.dumps(res.certificate.to_dict()["notes"])
    holds_everywhere(res.data, s)
    with pytest.raises(InputDataError, match="break the declared constraint hierarchy sub_grade -> grade"):
        release(df, s, epsilon=1.0, rng=0, on_out_of_bounds="error")


def test_a_mechanism_whose_output_is_not_records_refuses_in_one_line():
    with pytest.raises(SchemaError, match="cannot honour"):
        release(table(), schema(), mechanism="compression", epsilon=None, rng=0)


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_streamed_and_dask_releases_hold_every_constraint(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("dask.dataframe")
    s, df = schema(), table()
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "out.csv"
    release_file(src, s, out, epsilon=1.0, rng=0, chunk_rows=700, engine=engine)
    got = pd.read_csv(out, dtype={"grade": str, "sub_grade": str, "region": str, "city": str})
    holds_everywhere(got, s)
    assert len(got) == len(df) and got["loan_id"].is_unique


def test_row_aligned_mechanisms_honour_them_too():
    s, df = schema(), table(800)
    out = release(df, s, mechanism="laplace", epsilon=1.0, rng=0).data
    holds_everywhere(out, s)


def test_the_evaluation_reports_each_constraints_share():
    from privrelease.evaluation.fidelity import evaluate

    s, df = schema(), table()
    out = Synthesizer(s, epsilon=1.0, rng=0).fit(df).released_
    ev = evaluate(df.drop(columns="loan_id"), out, s, sdmetrics=False)
    assert ev.constraints["balance <= loan"] == {"real": 1.0, "released": 1.0}
    assert "rows holding total = balance + fees" in ev.to_table()


def test_a_chain_of_inequalities_holds_and_a_cycle_is_refused():
    cols = {k: {"type": "numeric", "lower": 0, "upper": u, "integer": True} for k, u in
            (("a30", 30), ("a60", 60), ("a90", 90))}
    chain = [{"type": "inequality", "low": "a60", "high": "a90"}, {"type": "inequality", "low": "a30", "high": "a60"}]
    s = Schema.from_dict({"columns": cols, "constraints": chain})
    rng = np.random.default_rng(0)
    a30 = rng.integers(0, 31, 2000)
    a60 = a30 + rng.integers(0, 31, 2000)
    df = pd.DataFrame({"a30": a30, "a60": a60, "a90": a60 + rng.integers(0, 31, 2000)})
    holds_everywhere(Synthesizer(s, epsilon=1.0, rng=0).fit(df).released_, s)
    with pytest.raises(SchemaError, match="form a cycle|in a chain of inequalities"):
        Schema.from_dict({"columns": cols, "constraints": [chain[1], {"type": "inequality", "low": "a60",
                                                                       "high": "a30"}]})


@pytest.mark.parametrize("mechanism, params", [("pca-gauss", {}), ("pca-gauss", {"output_space": "auto"})])
def test_a_mechanism_that_may_release_projections_refuses_unless_told_the_original_space(mechanism, params):
    """pca-gauss's default output space ('auto') may release pc1..pcP, where no rule can be honoured."""
    with pytest.raises(SchemaError, match="cannot honour"):
        release(table(800), schema(), mechanism=mechanism, epsilon=1.0, rng=0, **params)
