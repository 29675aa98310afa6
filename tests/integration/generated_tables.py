"""Hypothesis strategies of small tables and their schemas, and the checks of a release against its schema.

A drawn :class:`Case` is a table (as the text a user's CSV holds), its schema (the YAML mapping), one
registered mechanism whose declared capabilities the schema needs, and the path it is released by:

* columns: numeric (continuous, with a ``step``, integer; uniform, an atom held by many records, a
  heavy tail beyond the upper bound, a constant, sometimes stated as one: ``lower = upper``), categorical (1 to 6 levels, rare and never-seen
  levels, missing values under a declared ``missing`` level, undeclared values under an ``other``
  level or, rarely, refused), datetime (ISO text at day, hour, minute or second steps), time of day
  (``H:MM``, ``HH:MM:SS`` at hour, minute or second steps), ``missing:
  allowed`` on numeric and datetime columns (none, some or all missing), a label with 1 to 5 levels or
  none, rarely a regression target;
* sizes: tiny tables (1 to 50 records), small ones, and some of a few thousand records (the default
  mechanism's pair stage runs on them);
* paths: the command line (``privrelease release ... --ledger``), the command line streaming the file in
  small chunks (``--chunk-rows``), and the Python API (:class:`privrelease.Synthesizer`).

Features of the generator that a known gap of the code would fail are switched off in :data:`GAPS`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from privrelease.mechanisms import list_mechanisms
from privrelease.schema import Schema
from privrelease.schema.dates import DatetimeColumn, TimeColumn
from privrelease.schema.precision import decimals

#: Generated features switched off while the code cannot release them yet (each name is one gap;
#: ``utc_offsets``: ISO date-times ending in ``Z`` or carrying a UTC offset; ``categorical_missing_allowed``:
#: ``missing: allowed`` on a categorical column). None today: both were closed (issue 35, items 4 and 10).
GAPS: set = set()

#: Mechanism parameters that keep a generated release cheap, or in the schema's columns.
PARAMS = {
    "pca-gauss": {"pca_source": "laplace"},  # the default (same-data) releases pc1..pcP, not the schema's columns
    "blr": {"n_candidates": 20, "candidate_size": 100, "n_queries": 50},
    "blocki-jl": {"n_projections": 200},
}

PATHS = ("cli", "stream", "api")
MAX_CHUNKS = 12  # a streamed release reads at most this many chunks (each costs milliseconds per pass)
EPSILONS = (0.3, 1.0, 4.0)
DT_FORMATS = {"day": "%Y-%m-%d", "hour": "%Y-%m-%dT%H:00", "minute": "%Y-%m-%dT%H:%M", "second": "%Y-%m-%dT%H:%M:%S"}
TIME_SHOWN = {"hour": r"\d\d:00", "minute": r"\d\d:\d\d", "second": r"\d\d:\d\d:\d\d"}
DT_SHOWN = {"day": r"\d{4}-\d\d-\d\d", "hour": r"\d{4}-\d\d-\d\dT\d\d:00", "minute": r"\d{4}-\d\d-\d\dT\d\d:\d\d",
            "second": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"}


def releasable_mechanisms() -> list:
    """The registered mechanisms whose release is a table in the schema's columns under an epsilon a ledger can
    charge (the distributional one releases encoded mixtures; an empirical one has no epsilon)."""
    return [m for m in list_mechanisms()
            if m.capabilities.output_space == "schema" and m.guarantee in ("epsilon-DP", "(epsilon,delta)-DP")]


def needs_met(cls, schema: Schema) -> bool:
    """Whether ``cls`` declares every capability the schema needs (from its declared capabilities only)."""
    caps = cls.capabilities
    if cls.supervised and schema.label is None:
        return False
    if caps.needs_target and schema.target is None:
        return False
    return caps.missing_numeric or not any(c.missing == "allowed" for c in schema.numeric)


@dataclass
class Case:
    table: pd.DataFrame  # the text of the CSV (None for a missing value)
    schema: dict
    mechanism: str
    path: str
    epsilon: float
    chunk_rows: int
    n_synthetic: int | None
    seed: int
    params: dict = field(default_factory=dict)

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        return (f"Case(mechanism={self.mechanism!r}, path={self.path!r}, epsilon={self.epsilon}, n={len(self.table)}, "
                f"chunk_rows={self.chunk_rows}, n_synthetic={self.n_synthetic}, seed={self.seed},\n"
                f"  schema={self.schema!r},\n  table head=\n{self.table.head(8).to_string()})")


# ---- columns --------------------------------------------------------------------------------------

def _fmt(v: float, places: int | None) -> str:
    return repr(float(v)) if places is None else f"{v:.{places}f}"


@st.composite
def numeric_columns(draw, name: str, n: int, rng: np.random.Generator):
    lower, upper = draw(st.sampled_from([(0.0, 1.0), (-50.0, 50.0), (17.0, 90.0), (0.0, 1e6), (1e-3, 2e-3)]))
    kind = draw(st.sampled_from(["continuous", "step", "integer"]))
    spec = {"type": "numeric", "lower": lower, "upper": upper}
    step = None
    if kind == "step":
        step = draw(st.sampled_from([0.1, 0.25, 5.0, 0.01]))
        spec["step"] = step
    elif kind == "integer":
        if upper - lower < 2:
            lower, upper = 0.0, 10.0
            spec.update(lower=lower, upper=upper)
        spec["integer"] = True
        step = 1.0
    if step is not None and math.floor(upper / step + 1e-9) < math.ceil(lower / step - 1e-9):
        spec.pop("step", None)  # no multiple of the step inside the bounds: a continuous column
        step = None
    shape = draw(st.sampled_from(["uniform", "atom", "heavy", "constant"]))
    width = upper - lower
    if shape == "uniform":
        v = rng.uniform(lower, upper, n)
    elif shape == "atom":  # one value held by many records, the rest spread
        atom = lower + width * draw(st.sampled_from([0.0, 0.5, 1.0]))
        v = np.where(rng.random(n) < draw(st.sampled_from([0.3, 0.6, 0.95])), atom, rng.uniform(lower, upper, n))
    elif shape == "heavy":  # a heavy right tail, some records beyond the upper bound (clipped)
        v = lower + width * 0.05 * rng.pareto(1.2, n)
    else:
        v = np.full(n, lower + width * draw(st.sampled_from([0.0, 0.37, 1.0])))
    places = None
    if step is not None:
        v = np.round(v / step) * step
        places = decimals(step)
    text = np.array([_fmt(x, places) for x in v], dtype=object)
    if draw(st.booleans()):
        spec["missing"] = "allowed"
        share = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
        text[rng.random(n) < share] = None
    elif shape == "constant" and draw(st.booleans()):  # the value stated as public: lower = upper
        spec.update(lower=float(v[0]), upper=float(v[0]))
    return spec, text


@st.composite
def categorical_columns(draw, name: str, n: int, rng: np.random.Generator, label: bool = False):
    k = draw(st.integers(1, 5)) if label else draw(st.integers(1, 6))
    style = draw(st.sampled_from(["words", "digits", "words", "digits", "like_missing"]))
    like_missing = ["NA", "None", "null", "NaN", "n/a", "N/A"]  # levels a CSV reader takes for missing by default
    levels = [f"{name}_{i}" if style == "words" else like_missing[i] if style == "like_missing" else str(10 * i + 1)
              for i in range(k)]
    spec = {"type": "categorical", "categories": list(levels)}
    weights = np.array([draw(st.sampled_from([0.0, 0.01, 1.0, 5.0])) for _ in levels])  # never-seen, rare, common
    if weights.sum() == 0:
        weights[0] = 1.0
    values = np.array(levels, dtype=object)[rng.choice(k, n, p=weights / weights.sum())]
    if label:
        spec["role"] = "label"
        return spec, values
    extra = draw(st.sampled_from(["none", "none", "missing_level", "other", "undeclared"]
                                 + (["missing_allowed"] if "categorical_missing_allowed" not in GAPS else [])))
    hit = rng.random(n) < draw(st.sampled_from([0.05, 0.5]))
    if extra == "missing_level":  # missing values under a declared level
        spec["missing"] = "Unknown"
        values[hit] = None
    elif extra == "missing_allowed":
        spec["missing"] = "allowed"
        values[hit] = None
    elif extra == "other":  # undeclared values under a declared 'other' level
        spec["categories"].append("(other)")
        spec["other"] = "(other)"
        values[hit] = "never-declared"
    elif extra == "undeclared":  # an undeclared value without 'other': refused
        values[rng.integers(n)] = "never-declared"
    return spec, values


@st.composite
def datetime_columns(draw, name: str, n: int, rng: np.random.Generator):
    unit = draw(st.sampled_from(["day", "hour", "minute", "second"]))
    start = pd.Timestamp(draw(st.sampled_from(["1969-12-25", "2000-02-28", "2020-01-01"])))
    span = pd.Timedelta(days=draw(st.sampled_from([1, 31, 3650])))
    spec = {"type": "datetime", "lower": start.strftime("%Y-%m-%d"), "upper": (start + span).strftime("%Y-%m-%d"),
            "step": unit}
    seconds = rng.uniform(0, span.total_seconds() * draw(st.sampled_from([1.0, 1.1])), n)
    times = start + pd.to_timedelta(np.floor(seconds), unit="s")
    fmt = draw(st.sampled_from(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", DT_FORMATS[unit]]))
    text = np.array([t.strftime(fmt) for t in times], dtype=object)
    if "utc_offsets" not in GAPS and draw(st.booleans()):
        zone = draw(st.sampled_from(["Z", "+05:00", "-03:30"]))
        text = np.array([t + zone if "T" in t else t for t in text], dtype=object)
    if draw(st.booleans()):
        spec["missing"] = "allowed"
        text[rng.random(n) < draw(st.sampled_from([0.0, 0.2, 1.0]))] = None
    return spec, text


@st.composite
def time_columns(draw, name: str, n: int, rng: np.random.Generator):
    """A time of day (``type: time``) at an hour, minute or second step, written ``H:MM``, ``HH:MM`` or
    ``HH:MM:SS`` whatever the step, sometimes missing."""
    unit = draw(st.sampled_from(["hour", "minute", "second"]))
    sec = rng.integers(0, 86_400, n)
    fmt = draw(st.sampled_from(["{h}:{m:02d}", "{h:02d}:{m:02d}", "{h:02d}:{m:02d}:{s:02d}"]))
    text = np.array([fmt.format(h=x // 3600, m=x // 60 % 60, s=x % 60) for x in sec.tolist()], dtype=object)
    spec = {"type": "time", "step": unit}
    if draw(st.booleans()):
        spec["missing"] = "allowed"
        text[rng.random(n) < draw(st.sampled_from([0.0, 0.2, 1.0]))] = None
    return spec, text


# ---- cases ----------------------------------------------------------------------------------------

#: Tiny tables (1 to 50 records) in three cases of five, small ones, and a few thousand records in one of five.
SIZES = st.one_of(st.integers(1, 50), st.integers(1, 50), st.integers(1, 50), st.integers(51, 400),
                  st.integers(2000, 3000))


@st.composite
def cases(draw) -> Case:
    """A table, its schema, a mechanism whose declared capabilities the schema needs, and a release path."""
    n = draw(SIZES)
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kinds = draw(st.lists(st.sampled_from(["numeric", "numeric", "categorical", "datetime", "time"]), min_size=1,
                          max_size=5))
    specs, data = {}, {}
    for i, kind in enumerate(kinds):
        name = f"{kind[:3]}{i}"
        strategy = {"numeric": numeric_columns, "categorical": categorical_columns,
                    "datetime": datetime_columns, "time": time_columns}[kind]
        specs[name], data[name] = draw(strategy(name, n, rng))
    if draw(st.integers(0, 3)) > 0:  # a label in three tables of four
        specs["label"], data["label"] = draw(categorical_columns("label", n, rng, label=True))
    plain = [k for k, s in specs.items() if s["type"] == "numeric" and "missing" not in s and s["lower"] != s["upper"]]
    if plain and draw(st.integers(0, 7)) == 0:  # rarely, a regression target
        specs[plain[0]]["role"] = "target"
    schema = {"columns": specs}
    table = pd.DataFrame(data)
    spelling = draw(st.integers(0, 5))
    if spelling == 0:  # in one table of six, missing values are written '?', a declared spelling
        schema = {"na_values": ["?"], **schema}
        table = table.where(table.notna(), "?")
    elif spelling == 1:  # in another, each column's in a code of its own, stated on the column
        for k, s in specs.items():
            if s.get("missing") is not None:
                s["na_values"] = [f"n/k-{k}"]
                table[k] = table[k].astype(object).where(table[k].notna(), f"n/k-{k}")
    parsed = Schema.from_dict(schema)
    able = [m for m in releasable_mechanisms() if needs_met(m, parsed)]
    cls = draw(st.sampled_from(able))
    path = draw(st.sampled_from(PATHS))
    synthetic = cls.output_kind != "row-aligned"
    return Case(
        table=table,
        schema=schema,
        mechanism=cls.name,
        path=path,
        epsilon=draw(st.sampled_from(EPSILONS)),
        chunk_rows=max(draw(st.sampled_from([1, 7, max(1, n // 3)])), -(-n // MAX_CHUNKS)) if path == "stream" else 200_000,
        n_synthetic=draw(st.sampled_from([None, None, 1, 23])) if synthetic else None,
        seed=seed,
        params=dict(PARAMS.get(cls.name, {})),
    )


# ---- checks ---------------------------------------------------------------------------------------

_INTERNAL = re.compile(r"^error: [A-Za-z_][\w.]*(Error|Exception|Warning|Interrupt|Exit)\b")


def refusal_line(code: int, err: str) -> str:
    """The one ``error:`` line of a refused command-line release (asserting it is one, in the CLI's words)."""
    assert code != 0, err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    assert not _INTERNAL.match(lines[0]) and "--debug for the traceback" not in lines[0], lines[0]
    return lines[0]


def expected_rows(case: Case) -> int:
    from privrelease.mechanisms import get_mechanism

    if get_mechanism(case.mechanism).output_kind == "row-aligned":
        return len(case.table)
    return case.n_synthetic if case.n_synthetic is not None else len(case.table)


def check_release(case: Case, out: pd.DataFrame) -> None:
    """A released table (every cell as text, ``""`` where missing) meets the case's schema: its rows,
    exactly its columns, values inside the bounds, at the step, among the levels, missing only where allowed."""
    schema = Schema.from_dict(case.schema)
    assert list(out.columns) == schema.names, (list(out.columns), schema.names)
    assert len(out) == expected_rows(case), (len(out), expected_rows(case))
    for c in schema.columns:
        text = out[c.name].astype(str)
        missing = (text == "").to_numpy()
        allowed = c.missing == "allowed" or getattr(c, "missing_as_na", False)
        assert allowed or not missing.any(), f"column {c.name!r} released missing values it does not allow"
        values = text[~missing]
        if c.kind == "categorical":  # the declared levels (a missing value is not the level 'allowed')
            spec = case.schema["columns"][c.name]
            levels = set(spec["categories"]) | ({spec["missing"]} - {"allowed"} if "missing" in spec else set())
            bad = sorted(set(values) - levels)
            assert not bad, f"column {c.name!r} released undeclared levels {bad[:5]}"
        elif isinstance(c, DatetimeColumn):
            shown = TIME_SHOWN if isinstance(c, TimeColumn) else DT_SHOWN
            bad = [v for v in values if not re.fullmatch(shown[c.unit], v)]
            assert not bad, f"column {c.name!r} released times not at its step {c.unit}: {bad[:5]}"
            units = c.to_units(pd.Series(list(values), dtype=object))
            assert ((units >= c.lower) & (units <= c.upper)).all(), f"column {c.name!r} released times out of bounds"
        else:
            v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
            assert not np.isnan(v).any(), f"column {c.name!r} released non-numbers {list(values[np.isnan(v)])[:5]}"
            tol = 1e-9 * max(1.0, abs(c.lower), abs(c.upper))
            stated = case.schema["columns"][c.name]
            if stated.get("lower") == stated.get("upper"):  # a stated constant: every row holds it
                assert np.allclose(v, stated["lower"], rtol=1e-12, atol=tol), f"column {c.name!r} is not its constant"
            assert ((v >= c.lower - tol) & (v <= c.upper + tol)).all(), \
                f"column {c.name!r} released values outside [{c.lower}, {c.upper}]: {v[(v < c.lower) | (v > c.upper)][:5]}"
            if c.resolution is not None:
                k = v / c.resolution
                assert np.allclose(k, np.rint(k), rtol=0, atol=1e-6), \
                    f"column {c.name!r} released values off its step {c.resolution}: {v[~np.isclose(k, np.rint(k))][:5]}"
                places = decimals(c.resolution)
                long = [s for s in values if "." in s and len(s.split(".")[1].rstrip("0")) > places]
                assert not long, f"column {c.name!r} released values written past its step: {long[:5]}"
