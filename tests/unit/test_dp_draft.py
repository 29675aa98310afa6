"""The DP schema draft: every decision stated or charged, usable bounds, levels, provenance and its cost."""

import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

from privrelease.dp.draft import OTHER, dp_draft, dp_draft_schema, draft_cost
from privrelease.dp.partition import partition_parameters, select_partitions
from privrelease.dp.quantiles import approx_range, default_grid, dp_quantile, quantile_scores, range_grid
from privrelease.errors import DataWarning, InputDataError, ParameterError, SchemaError
from privrelease.noise import make_source
from privrelease.schema import Encoder, Schema
from privrelease.schema.values import StatedFacts


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


def test_approx_range_finds_the_magnitude_of_the_values():
    x = np.random.default_rng(0).integers(17, 91, 30_000)
    lo, hi, ok, missing, b = approx_range(x, 0.05, make_source(0))[:5]
    assert abs(missing) < 10 * b  # the missing bin: none missing, give or take the noise
    assert ok and lo == 4.0 and hi == 512.0  # the octaves [16, 128) and two more at each end


def test_noise_in_far_empty_bins_seldom_makes_a_bound():
    """Empty bins start a kept run in about 0.1 % of drafts, runs of two or three noisy bins included: their total
    against the one-bin threshold kept a far run in 0.5 % of these drafts (a bound up to 2^42 away from values of
    -1..51)."""
    rng = np.random.default_rng(0)
    x = np.concatenate([np.clip(rng.normal(20, 10, 17_978), 0, 51).round(), np.zeros(19), -np.ones(3)])
    far = sum(bool(s.supported and (s.lo < -1024 or s.hi > 1024 * 51))
              for s in (approx_range(x, 0.0385, make_source(seed), x.size) for seed in range(4000)))
    assert far <= 12  # 0.3 % (4 here); 19 before


def test_quantile_bounds_only_where_their_choice_is_reliable_else_magnitudes_named_in_one_warning():
    """45,000 values in 43-79 (a diamond's depth): at 0.05 a column the quantiles' signal (3.4) is below
    ln(K / 0.1) for the K readable candidates of [8, 512], so the bounds are the range's magnitudes (a choice
    among K candidates would land beyond the data about as often as not) and the draft says so; at 2 a column
    the quantiles run and the bounds lie near the data."""
    from privrelease.dp.quantiles import dp_scaled_bounds

    x = np.random.default_rng(0).normal(61.7, 1.4, 45_000).clip(43, 79)
    weak = dp_scaled_bounds(x, 0.05, make_source(0), n=45_000)
    assert not weak.quantiles and (weak.lo, weak.hi) == (8.0, 512.0)
    strong = dp_scaled_bounds(x, 2.0, make_source(0), n=45_000)
    assert strong.quantiles and 50 <= strong.lo <= 59 and 64 <= strong.hi <= 75
    df = pd.DataFrame({"depth": x, "table": x - 4})
    d = dp_draft(df, 0.1, rng=0, facts=StatedFacts.of(None, numeric=("depth", "table")))
    (line,) = [w for w in d.warnings if "powers of two" in w]
    assert line.endswith("['depth', 'table']") and "\n" not in line
    assert not [w for w in dp_draft(df, 20.0, rng=0, facts=StatedFacts.of(None, numeric=("depth", "table"))).warnings
                if "powers of two" in w]


def test_approx_range_says_when_a_thin_tail_is_left_out():
    """70 % zeros and 30 % spread over ten octaves: only the bin around 0 clears the thresholds, it holds
    less than 80 % of the values, and no range is given (the draft then writes no bound, with the fix)."""
    rng = np.random.default_rng(0)
    x = np.r_[np.zeros(21_000), 2.0 ** rng.uniform(5, 15, 9000)]
    lo, hi, ok = approx_range(x, 0.003, make_source(0), n=30_000)[:3]
    assert not ok and np.isnan(lo) and np.isnan(hi)
    lo, hi, ok = approx_range(x, 5.0, make_source(0), n=30_000)[:3]  # with budget, the tail's bins clear it
    assert ok and lo == 0.0 and 2.0 ** 15 <= hi <= 2.0 ** 17


def test_small_counts_most_of_them_zero_get_a_range_when_stated_integer():
    """Counts of visits (3,525 records: 80 % zeros, 14 % ones, a few up to 5) at 0.0105 for the range (Laplace scale
    190): the ones' bin clears the run threshold but not the one-bin one, so the zero bin alone held too little and
    no bound was drafted (Ecdat's OFP, eight such columns). Stated integer, no value lies between 0 and 1: the ones'
    bin is the zero bin's neighbour and kept with it."""
    rng = np.random.default_rng(0)
    x = np.r_[np.zeros(2820), np.ones(494), np.full(176, 2.0), rng.integers(3, 6, 35)]
    def holding(integer: bool) -> int:  # drafts (of 50) whose range holds every value
        ranges = (approx_range(x, 0.0105, make_source(seed), n=x.size, integer=integer) for seed in range(50))
        return sum(bool(r.supported and r.lo <= 0.0 and r.hi >= 8.0) for r in ranges)

    assert holding(True) >= 35  # 37; the rest: no range (9), or the zeros' alone (4)
    assert holding(False) <= 5  # 0: half no range, half [0, 1] or less


def test_an_empty_bin_beside_the_zero_bin_seldom_widens_the_range():
    """A column of zeros, stated integer: each of the zero bin's two neighbours ([1, 2) and [-2, -1)) is kept by
    its noise alone with probability SCALE_STEP_RATE (5 %), far bins in about 0.1 % of drafts."""
    x = np.zeros(3525)
    wide = sum(not (r.lo == 0.0 and r.hi == 1.0)
               for r in (approx_range(x, 0.0105, make_source(seed), n=x.size, integer=True) for seed in range(2000)))
    assert wide <= 0.14 * 2000


def test_dp_draft_schema_bounds_levels_other_and_provenance():
    df = _table()
    s, cost = dp_draft_schema(df, 8.0, 1e-6, rng=0, label="y")
    assert (cost.epsilon, cost.delta) == (8.0, 1e-6)
    age, income, city, y = (s[c] for c in ("age", "income", "city", "y"))
    assert age.integer and 15 <= age.lower <= 22 and 68 <= age.upper <= 75
    assert 900 <= income.lower <= 1200 and 8800 <= income.upper <= 17000
    assert list(city.categories) == ["Lyon", "Nice", "Paris", OTHER] and city.other == OTHER
    assert y.role == "label" and list(y.categories) == ["no", "yes", OTHER]
    p = s.provenance
    assert p["method"] == "dp-draft" and p["epsilon"] == 8.0 and p["delta"] == 1e-6
    assert p["per_column"]["epsilon"] == pytest.approx(8.0 / 4) and p["stated"] == {"y": "categorical"}
    # the unselected unique levels encode into the 'other' level instead of failing
    X = Encoder(s, ["city"]).encode(df).X
    assert X[:3, 3].tolist() == [1.0, 1.0, 1.0]
    # the provenance survives YAML
    again = Schema.from_dict(yaml.safe_load(s.to_yaml()))
    assert again.provenance == p and again["city"].other == OTHER


def test_dp_draft_with_a_public_range_and_no_categorical_column():
    df = _table()[["age", "income"]]
    facts = StatedFacts.of(numeric=["income"], integer=["age"])
    d = dp_draft(df, 4.0, rng=1, facts=facts, ranges={"income": (0, 10_000)})
    assert d.cost.delta == 0.0 and d.schema["provenance"]["ranges"]["income"] == [0.0, 10000.0]
    assert draft_cost(df.columns, 4.0, None, facts).delta == 0.0
    # a public range is set as stated, nothing spent on it (issue 35, item 8: it used to be narrowed)
    assert (d.schema["columns"]["income"]["lower"], d.schema["columns"]["income"]["upper"]) == (0, 10_000)


def test_a_constant_column_is_a_public_value_drafted_stated_and_released_as_it_is():
    """A range of one number (a single-year extract's year) drafts the column as that constant; the schema states
    it as a formula, so the mechanism never reads it and every released row holds the value."""
    df = _table()[["age", "income"]].assign(year=2013)
    facts = StatedFacts.of(numeric=["income"], integer=["age", "year"])
    d = dp_draft(df, 4.0, rng=1, facts=facts, ranges={"income": (0, 10_000), "year": (2013, 2013)})
    spec = d.schema["columns"]["year"]
    assert (spec["lower"], spec["upper"], spec.get("missing")) == (2013, 2013, None)
    s = Schema.from_dict(d.schema)
    assert [c.label for c in s.constraints] == ["year = 2013"] and s["year"].upper > s["year"].lower
    assert Schema.from_dict(yaml.safe_load(s.to_yaml())) == s  # the stated form survives YAML
    from privrelease.release import release

    out = release(df, s, epsilon=1.0, rng=0).data
    assert (out["year"] == 2013).all() and len(out) == len(df)
    with pytest.raises(ParameterError, match="lo = hi for a column of one value"):
        dp_draft(df, 4.0, rng=1, facts=facts, ranges={"year": (2014, 2013)})
    for other in ({"missing": "allowed"}, {"role": "target"}):  # one value or missing, a target: not a constant
        with pytest.raises(SchemaError, match="lower and upper are both 1: a column of one value"):
            Schema.from_dict({"columns": {"y": {"type": "numeric", "lower": 1, "upper": 1, **other}}})


def test_dp_draft_refusals():
    df = _table()
    with pytest.raises(ParameterError, match="needs a delta"):
        dp_draft_schema(df, 1.0)
    with pytest.raises(SchemaError, match="label column 'nosuch'"):
        dp_draft_schema(df, 1.0, 1e-6, label="nosuch")
    with pytest.raises(ParameterError):
        dp_draft_schema(df, float("inf"), 1e-6)
    with pytest.raises(SchemaError, match="two kinds"):
        draft_cost(df.columns, 1.0, 1e-6, StatedFacts.of(numeric=["age"], categorical=["age"]))
    with pytest.raises(SchemaError, match="not in the table"):
        draft_cost(df.columns, 1.0, 1e-6, StatedFacts.of(numeric=["nosuch"]))


# ---- issue 22.1: nothing decided from the data uncharged ---------------------------------

def _kinds(schema: Schema) -> dict:
    return {c.name: (c.kind, getattr(c, "integer", None), tuple(getattr(c, "categories", ()))) for c in schema.columns}


def _neighbours(n=4000):
    """A table and three neighbours, each with one record replaced: 35 -> '?', 40 -> 40.5, a missing label."""
    rng = np.random.default_rng(3)
    d0 = pd.DataFrame({"x": rng.integers(20, 71, n), "w": rng.integers(0, 40, n),
                       "lab": rng.choice([0, 1], n)})
    x_text = d0.assign(x=d0["x"].astype(object))
    x_text.loc[0, "x"] = "?"
    w_frac = d0.assign(w=d0["w"].astype(float))
    w_frac.loc[0, "w"] = 40.5
    lab_missing = d0.assign(lab=d0["lab"].astype(float))
    lab_missing.loc[0, "lab"] = np.nan
    return d0, {"x": x_text, "w": w_frac, "lab": lab_missing}


@pytest.mark.parametrize("column", ["x", "w", "lab"])
def test_replacing_one_record_does_not_flip_the_drafted_schema(column):
    """The old draft read kinds, the integer flag and level spellings off the pandas dtypes: one
    replaced record flipped them with probability 1. Now both tables give the same decisions
    in most seeded runs."""
    d0, d1 = _neighbours()
    same = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(10):
            k0 = _kinds(dp_draft_schema(d0, 6.0, 1e-6, rng=seed, label="lab")[0])[column]
            k1 = _kinds(dp_draft_schema(d1[column], 6.0, 1e-6, rng=seed, label="lab")[0])[column]
            same += k0 == k1
    assert same >= 8, (column, k0, k1)


def test_level_spelling_is_each_values_own_text():
    s, _ = dp_draft_schema(pd.DataFrame({"lab": [0.0] * 3000 + [1.0] * 3000}), 4.0, 1e-6, rng=0, label="lab")
    assert list(s["lab"].categories) == ["0", "1", OTHER]
    X = Encoder(s, ["lab"]).encode(pd.DataFrame({"lab": [0.0, 1.0, 0.5]})).X
    assert X.argmax(axis=1).tolist() == [0, 1, 2]  # 0.5 goes to (other); 0.0 is '0' whatever the others are


# ---- issue 21.1: bounds of the right order of magnitude at small budgets --------------------

def _wide_table(n=30_000, seed=0):
    rng = np.random.default_rng(seed)
    cols = {"age": rng.integers(17, 91, n), "limit": rng.lognormal(11, 1, n).round(-3)}
    cols.update({f"pay_{i}": rng.normal(5000, 3000, n).round(2) for i in range(10)})
    cols.update({f"cat_{i}": rng.choice(["a", "b", "c"], n) for i in range(11)})
    cols["y"] = rng.choice(["no", "yes"], n, p=[0.78, 0.22])
    return pd.DataFrame(cols)


def test_bounds_of_the_right_order_of_magnitude_at_epsilon_half():
    """24 columns, 30,000 records, epsilon 0.5: the old draft gave age -5.6e11 .. 1.8e8."""
    df = _wide_table()
    facts = StatedFacts.of("y", numeric=[c for c in df if c.startswith(("pay", "limit"))], integer=["age"],
                           categorical=[c for c in df if c.startswith("cat")])
    for seed in range(3):
        cols = dp_draft(df, 0.5, 1e-6, rng=seed, facts=facts).schema["columns"]
        assert 0 <= cols["age"]["lower"] <= 17 and 90 <= cols["age"]["upper"] <= 16 * 90, cols["age"]
        limit = df["limit"]
        assert cols["limit"]["upper"] is None or (0 <= cols["limit"]["lower"] <= limit.quantile(0.05)
                                                  and limit.quantile(0.95) <= cols["limit"]["upper"] <= 16 * limit.max())
        assert cols["y"]["categories"] == ["no", "yes", OTHER]


def test_a_column_the_budget_cannot_support_is_named_with_its_fix():
    """344 records, 7 columns, epsilon 0.3: the label keeps no level; the warnings name the columns and the fixes."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"m{i}": rng.integers(2700, 6300, 344) for i in range(6)})
    df["species"] = rng.choice(["A", "C", "G"], 344)
    facts = StatedFacts.of("species", integer=[f"m{i}" for i in range(6)])
    d = dp_draft(df, 0.3, 1e-4, rng=0, facts=facts)
    text = " ".join(d.warnings)
    assert "column 'species'" in text and "--levels" in text and "refuses a label" in text
    unbounded = [c for c, spec in d.schema["columns"].items() if spec.get("lower") is None and c != "species"]
    assert len(unbounded) > 1 and all(f"'{c}'" in text for c in unbounded)
    assert f"{len(unbounded)} columns: the budget" in text and "--range COLUMN=lo,hi" in text  # one line, the fix
    # the schema refuses the columns without bounds, all of them in one line
    with pytest.warns(DataWarning, match="column 'species'"), \
            pytest.raises(SchemaError, match=r"column\(s\) \[" + ", ".join(f"'{c}'" for c in unbounded) + r"\] have no bounds"):
        dp_draft_schema(df, 0.3, 1e-4, rng=0, label="species", integer=list(facts.integer))


def test_declared_levels_cost_nothing_and_keep_the_label():
    df = pd.DataFrame({"x": np.arange(344) % 50, "species": ["A", "C", "G", "A"] * 86})
    facts = StatedFacts.of("species", integer=["x"], levels={"species": ["A", "C", "G"]})
    d = dp_draft(df, 0.5, 1e-4, rng=0, facts=facts)
    assert d.schema["columns"]["species"]["categories"] == ["A", "C", "G"]  # the whole domain: no catch-all
    assert d.cost.delta == 0.0 and d.schema["provenance"]["per_column"]["epsilon"] == 0.5


def test_declared_levels_unread_and_allowing_missing_values_are_named_in_one_line_with_the_fix():
    """Declared levels cost nothing, so nothing of those columns is read and they allow missing values: a complete
    one would get a few in the release. One line names them with --complete; a label or a column stated complete
    is not named."""
    df = pd.DataFrame({"a": ["y", "n"] * 200, "b": ["p", "q"] * 200, "c": ["u", "v"] * 200, "lab": ["0", "1"] * 200})
    levels = {"a": ["n", "y"], "b": ["p", "q"], "c": ["u", "v"], "lab": ["0", "1"]}
    d = dp_draft(df, 0.5, rng=0, facts=StatedFacts.of("lab", levels=levels, complete=("c",)))
    (line,) = [w for w in d.warnings if "declared levels were not read" in w]
    assert "(--complete a,b)" in line and "\n" not in line
    assert [c for c, spec in d.schema["columns"].items() if spec.get("missing") == "allowed"] == ["a", "b"]
    quiet = dp_draft(df, 0.5, rng=0, facts=StatedFacts.of("lab", levels=levels, complete=("a", "b", "c")))
    assert not [w for w in quiet.warnings if "declared levels" in w]


# ---- issue 21.2/21.3: missing values, dates, identifiers ------------------------------------

def test_dp_draft_dates_identifiers_missing_and_empty_columns():
    n = 6000
    rng = np.random.default_rng(0)
    ages = rng.integers(20, 80, n).astype(object)
    ages[: n // 10] = "NA"
    df = pd.DataFrame({"visit": pd.date_range("2021-01-01", periods=n, freq="3h").strftime("%Y-%m-%d"),
                       "patient_id": np.arange(n), "code": [f"K{i:05d}" for i in range(n)], "age": ages,
                       "empty": [""] * n, "y": rng.choice(["a", "b"], n)})
    d = dp_draft(df, 8.0, 1e-6, rng=0, facts=StatedFacts.of("y"))
    cols = d.schema["columns"]
    assert set(cols) == {"visit", "age", "y"}
    assert cols["visit"]["type"] == "datetime" and cols["visit"]["step"] == "day"
    # the calendar years that hold the visits (2021-01-01 to 2023-01-20), or DP quantiles inside them
    assert "2021-01-01" <= cols["visit"]["lower"] <= "2021-01-31" and "2022-10-01" <= cols["visit"]["upper"] <= "2023-12-31"
    assert cols["age"]["missing"] == "allowed" and cols["age"]["integer"] is True
    assert "NA" in d.schema["na_values"] and "?" in d.schema["na_values"]
    said = " ".join(d.warnings)
    assert all(f"column '{c}' left out" in said for c in ("patient_id", "code", "empty"))
    assert type(Schema.from_dict(d.schema)["visit"]).__name__ == "DatetimeColumn"  # the schema's datetime type


def test_the_two_drafts_agree_on_types():
    """The same rule decides kinds from exact counts (non-private draft) and from noisy ones (DP draft)."""
    from privrelease.schema import draft_schema_dict

    n = 5000
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "w": rng.normal(70, 10, n).round(1),
                       "code": rng.integers(0, 4, n), "city": rng.choice(["a", "b", "c"], n),
                       "day": pd.date_range("2020-01-01", periods=n, freq="12h").strftime("%Y-%m-%d"),
                       "y": rng.choice(["no", "yes"], n)})

    def types(cols):
        return {k: (v["type"], v.get("integer", False)) for k, v in cols.items()}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = types(draft_schema_dict(df, facts=StatedFacts.of("y"))["columns"])
        for seed in range(3):
            assert types(dp_draft(df, 20.0, 1e-6, rng=seed, facts=StatedFacts.of("y")).schema["columns"]) == exact
    assert exact == {"age": ("numeric", True), "w": ("numeric", False), "code": ("categorical", False),
                     "city": ("categorical", False), "day": ("datetime", False), "y": ("categorical", False)}


def test_declared_levels_are_the_same_in_both_drafts():
    from privrelease.schema import draft_schema_dict

    df = pd.DataFrame({"x": np.arange(400) % 50, "sp": ["A", "C", "G", "Z"] * 100})
    facts = StatedFacts.of("sp", integer=["x"], levels={"sp": ["A", "C", "G"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = draft_schema_dict(df, facts=facts)["columns"]["sp"]
    assert exact == dp_draft(df, 1.0, rng=0, facts=facts).schema["columns"]["sp"]
    assert exact["categories"] == ["A", "C", "G"] and "other" not in exact
    with pytest.raises(InputDataError, match=r"column 'sp' has 100 value\(s\) in 1 category not declared"):
        Encoder(Schema.from_dict({"columns": {"sp": exact}})).encode(df[["sp"]])  # a value outside: refused


def test_a_public_date_range_is_set_as_stated():
    """Issue 35, item 8: ``--range date=2017-01-01,2017-12-31`` sets a datetime column's bounds (it was refused)."""
    days = pd.date_range("2017-01-01", periods=3000, freq="2h").strftime("%Y-%m-%d")
    df = pd.DataFrame({"date": days})
    d = dp_draft(df, 1.0, rng=0, facts=StatedFacts.of(datetime=["date"]),
                 ranges={"date": ("2017-01-01", "2017-12-31")})
    spec = d.schema["columns"]["date"]
    assert (spec["type"], spec["lower"], spec["upper"]) == ("datetime", "2017-01-01", "2017-12-31")
    with pytest.raises(ParameterError, match="lo < hi"):
        dp_draft(df, 1.0, rng=0, facts=StatedFacts.of(datetime=["date"]), ranges={"date": ("2018-01-01", "2017-01-01")})


def test_unstated_kinds_the_budget_cannot_tell_are_left_out_from_public_facts():
    """75 columns at epsilon 0.5 and n = 5,000 give each unstated column's profile a Laplace scale of
    about 2,400 records: its kind would be decided by the noise (a URL drafted as numeric, latitude as
    categorical). Every unstated column is then left out, in one line, and the stated ones get the budget."""
    rng = np.random.default_rng(0)
    n = 5000
    df = pd.DataFrame({f"text_{i}": rng.choice(["a", "b", "c"], n) for i in range(70)})
    df["age"] = rng.integers(18, 90, n).astype(str)
    df["score"] = rng.normal(50, 5, n).round(2).astype(str)
    facts = StatedFacts.of(numeric=["score"], integer=["age"])
    d = dp_draft(df, 0.5, 1e-6, rng=0, facts=facts)
    assert set(d.schema["columns"]) == {"age", "score"}
    line = [w for w in d.warnings if "whose kind you did not state left out" in w]
    assert len(line) == 1 and "text_0" in line[0] and "--columns" in line[0]
    assert draft_cost(df.columns, 0.5, 1e-6, facts, n).delta == 0.0  # no column may select levels any more
    assert d.schema["provenance"]["per_column"]["epsilon"] == pytest.approx(0.25)  # 0.5 over the 2 stated
    # with enough budget for them, the unstated columns are drafted
    small = df[[f"text_{i}" for i in range(3)] + ["age", "score"]]
    assert "text_0" in dp_draft(small, 5.0, 1e-6, rng=0, facts=facts).schema["columns"]


def test_a_date_columns_bounds_are_the_years_that_hold_it_on_a_small_budget():
    """A date column's scale step counts calendar years: the magnitudes of day numbers put every date from 1992
    to 2014 in one octave, and at a small budget the draft wrote that octave (1981-2014 for flights of 2013)."""
    n = 2000
    rng = np.random.default_rng(1)
    t = pd.Timestamp("2013-01-01") + pd.to_timedelta(rng.integers(0, 365 * 24, n), unit="h")
    df = pd.DataFrame({"when": t.strftime("%Y-%m-%dT%H:00:00Z"), **{f"x{i}": rng.integers(0, 9, n) for i in range(7)}})
    for seed in range(3):  # a run grows into an empty neighbouring year in 5 % of drafts (SCALE_STEP_RATE)
        d = dp_draft(df, 0.5, rng=seed, facts=StatedFacts.of(datetime=["when"], integer=[f"x{i}" for i in range(7)],
                                                            steps={"when": "hour"}))
        when = d.schema["columns"]["when"]
        assert when["lower"] in ("2012-01-01", "2013-01-01") and when["upper"] in ("2013-12-31", "2014-12-31"), when
        assert when["step"] == "hour"
    assert not any("--datetime when=" in w for w in d.warnings)  # the step was stated
    d = dp_draft(df, 0.5, rng=0, facts=StatedFacts.of(datetime=["when"]))
    assert d.schema["columns"]["when"]["step"] == "day"
    assert any("--datetime when=hour" in w for w in d.warnings)  # a public line: no value read for it


def test_the_drafted_step_is_the_precision_the_values_are_written_with():
    """Both drafts give a column of fractions the step its values are written with (ratings to one decimal, prices
    to cents; a few values written finer do not count), none to a continuous one; the release keeps the values on
    that grid."""
    rng = np.random.default_rng(3)
    n = 20_000
    rating = np.round(rng.uniform(1, 10, n), 1)
    rating[:200] = np.round(rng.uniform(1, 10, 200), 3)  # 1 % written finer
    df = pd.DataFrame({"rating": rating, "price": np.round(rng.gamma(2.0, 20.0, n), 2),
                       "x": rng.normal(size=n), "y": rng.choice(["no", "yes"], n)})
    facts = StatedFacts.of(label="y", numeric=["rating", "price", "x"])
    cols = dp_draft(df, 2.0, 1e-6, rng=0, facts=facts).schema["columns"]
    assert cols["rating"]["step"] == 0.1 and cols["price"]["step"] == 0.01 and "step" not in cols["x"]
    from privrelease.schema.drafting import draft_schema_dict
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = draft_schema_dict(df, facts=facts)["columns"]
    assert exact["rating"]["step"] == 0.1 and exact["price"]["step"] == 0.01 and "step" not in exact["x"]
    from privrelease.release import release
    cols["rating"].update(lower=1.0, upper=10.0)
    out = release(df, Schema.from_dict({"columns": cols}), "gauss-copula", 1.0, delta=1e-6, rng=0).data["rating"]
    assert np.allclose(out * 10, np.round(out * 10)) and out.nunique() <= 91


def test_an_integer_flag_the_noise_decided_is_named_with_the_fix():
    """A stated numeric column's integer flag is a charged decision; where its noisy counts of fractions lie within
    2 stds of the rule's threshold (382 records of one decimal at 0.5 of epsilon over six columns), the draft names
    the column and what it drafted in one warning, with the fix; with the budget to tell, it says nothing."""
    g = np.random.default_rng(0)
    n = 382
    df = pd.DataFrame({f"x{i}": g.uniform(0, 20, n).round(1) for i in range(6)})
    facts = StatedFacts.of(None, numeric=tuple(df.columns))
    d = dp_draft(df, 0.5, rng=0, facts=facts, ranges={c: (0, 20) for c in df.columns})
    said = [w for w in d.warnings if "the noise decided" in w]
    assert len(said) == 1 and "--integer" in said[0] and "x0 (" in said[0] and "\n" not in said[0]
    big = pd.DataFrame({"x0": g.uniform(0, 20, 20_000).round(1)})
    d = dp_draft(big, 20.0, rng=0, facts=StatedFacts.of(None, numeric=("x0",)), ranges={"x0": (0, 20)})
    assert not [w for w in d.warnings if "the noise decided" in w]
    assert "integer" not in d.schema["columns"]["x0"]


def test_columns_the_budget_cannot_draft_alike_are_named_in_one_line():
    """A wide table at a small epsilon: the categorical columns whose levels all miss the threshold, and the numeric
    ones without bounds, are each said in one line naming every column (Ecdat's Car, 70 columns: 55 lines before);
    one such column keeps its own line."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({**{f"c{i}": rng.choice(list("abcdef"), 300) for i in range(5)},
                       **{f"x{i}": rng.normal(0, 1, 300) for i in range(4)}})
    d = dp_draft(df, 0.3, 1e-4, rng=0, facts=StatedFacts.of(categorical=[f"c{i}" for i in range(5)],
                                                            numeric=[f"x{i}" for i in range(4)]))
    levels = [w for w in d.warnings if "no level cleared" in w]
    assert len(levels) == 1 and levels[0].startswith("5 columns: ")
    assert all(f"'c{i}'" in levels[0] for i in range(5)) and "--levels FILE" in levels[0]
    bounds = [w for w in d.warnings if "cannot tell where" in w]
    assert len(bounds) == 1 and all(f"'x{i}'" in bounds[0] for i in range(4))
    one = dp_draft(df[["c0", "x0"]], 0.3, 1e-4, rng=0, facts=StatedFacts.of(categorical=["c0"], numeric=["x0"]))
    assert any(w.startswith("column 'c0': no level cleared") for w in one.warnings)
