"""A schema drafted under differential privacy: every decision either stated or charged.

:func:`dp_draft` proposes a schema from the private table itself, spending a declared
(epsilon, delta). What it decides, and from what:

* **Public facts** (no charge): the column names, the number of records n (replace-one
  relation, as in every release), and what the user states (:class:`StatedFacts`: the
  ``numeric``, ``categorical``, ``datetime``, ``integer`` lists, declared ``levels``, the
  label, or a Parquet file's declared types), and the names that say a column is an
  identifier (``id``, ``*_id``, ``patientId``), which are left out.
* **A noisy profile** of every column whose kind, (stated numeric) integer flag or (stated date)
  timezone is not stated: Laplace counts of its missing values, integers, other numbers, ISO
  dates, ISO date-times with a UTC offset and other text, the other numbers split by the decimals
  they are written with, of its values outside the 10 most frequent and of its repeated values. The kind
  (numeric, integer, datetime, categorical, identifier, empty) follows from these counts by the
  rule both drafts use (:func:`~privrelease.schema.values.decide_kind`), and a date column's
  ``timezone: UTC`` from the noisy counts of dates with and without an offset (a stated date
  column gets a profile for that alone). A numeric column of fractions gets ``step: 10^-k`` for the most
  decimals k that more than 5 % of its numbers are written with, by a noisy count noise alone seldom reaches
  (:func:`~privrelease.schema.values.drafted_step`: the release then keeps its values at that precision), none
  beyond six decimals.
* **Bounds and missing values** of numeric and datetime columns: a DP magnitude histogram with
  a bin of the missing values (the scale, :func:`~privrelease.dp.quantiles.approx_range`), then
  two DP quantiles over readable candidates inside it; with a public ``--range``, the bounds as
  stated. ``missing: allowed`` when the missing bin's noisy count clears a public threshold
  (:data:`MISSING_FLAG_RATE`); never for a Parquet field declared non-nullable.
* **Levels** of categorical columns: stable partition selection (:mod:`.partition`) of the
  canonical text of the values (each value's text alone, so ``0`` and ``0.0`` never depend on
  other records), plus an ``(other)`` level for the levels not kept; the missing values are one
  more, public, key of the selection: ``missing: allowed`` (released as missing) when its noisy
  count clears the public threshold. A label never gets it: the draft says in one line that
  the label has missing values (a release refuses them).

Every spending column gets the same share of the budget (sequential composition over
columns, adaptive within a column); see docs/derivations.md. Where the budget cannot
support a column, a :class:`~privrelease.errors.DataWarning` names the column and the fix.
"""

from __future__ import annotations

import datetime as _dt
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import yaml

from ..errors import DataWarning, ParameterError, SchemaError, shorten_list
from ..noise import make_source
from ..schema import Schema
from ..schema.values import (MAX_DECIMALS, NA_TOKENS, ColumnCounts, StatedFacts, as_days, as_numbers,
                             canonical_text, decide_kind, declared_levels_spec, drafted_step, fresh_identifiers_hint,
                             identifier_name, integer_unsure, iso_day, label_missing_line,
                             levels_apart_from_spellings, value_classes, whole_numbers, with_timezone)
from .costs import PrivacyCost, check_delta, check_epsilon
from .draft_lines import say_missing, say_other_share, say_summaries
from .partition import partition_parameters, select_levels
from .quantiles import SCALE_MARGIN, Scale, dp_scaled_bounds, laplace_threshold, noisy_magnitudes, range_grid

OTHER = "(other)"
DEFAULT_QUANTILES = (0.01, 0.99)
PROFILE_SHARE = 0.25  # of a column's epsilon, for its noisy profile (when it has one)
#: A column whose kind is not stated is drafted only when its profile's Laplace scale is at most this
#: share of n (so that the kind rules, 90 % and 5 % of the present values, are decided by the data
#: rather than by the noise); otherwise every such column is left out, from public facts alone.
KIND_NOISE_SHARE = 0.02
SCALE_SHARE = 0.4  # of what remains for a numeric column's bounds, for its scale (without a public range)
PROFILE_SENSITIVITY = 4.0  # L1: the class histogram (2), values outside the top levels (1), repeats (1)
MISSING_FLAG_RATE = 0.05  # the chance that a column without missing values is drafted 'missing: allowed'


@dataclass
class ColumnPlan:
    """What the draft does with one column, fixed from public facts before any value is read."""

    name: str
    stated: str | None  # the stated kind, or None
    profile: bool  # whether the column gets a noisy profile
    spends: bool  # whether the column spends budget at all
    may_be_categorical: bool  # whether it may select levels (and spend delta)


@dataclass
class Draft:
    """A drafted schema as its YAML mapping, the cost, and one line per column the budget could not support."""

    schema: dict
    cost: PrivacyCost
    warnings: list = field(default_factory=list)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.schema, sort_keys=False, default_flow_style=None, width=100, allow_unicode=True)


def plan_columns(columns, facts: StatedFacts, n: int | None = None, epsilon: float | None = None) -> list[ColumnPlan]:
    """The public plan of a draft: per column, its stated kind and which DP steps it takes. With the
    public ``n`` and ``epsilon``: when the budget, split over every column that spends, cannot tell an
    unstated column's kind (:data:`KIND_NOISE_SHARE`), every unstated column is planned ``unreadable``
    (left out, spending nothing) and the budget goes to the stated ones."""
    plans = _plan_columns(columns, facts)
    if n is None or epsilon is None:
        return plans
    k = sum(p.spends for p in plans)
    unstated = [p for p in plans if p.stated is None and p.spends]
    if unstated and 4.0 / (PROFILE_SHARE * epsilon / k) > KIND_NOISE_SHARE * n:
        gone = {p.name for p in unstated}
        plans = [ColumnPlan(p.name, "unreadable", False, False, False) if p.name in gone else p for p in plans]
    return plans


def _plan_columns(columns, facts: StatedFacts) -> list[ColumnPlan]:
    plans = []
    for name in map(str, columns):
        stated = facts.kind(name)
        if stated is None and identifier_name(name):
            plans.append(ColumnPlan(name, "identifier", False, False, False))
            continue
        declared_levels = name in (facts.levels or {})
        profile = stated in (None, "numeric", "datetime")  # the kind, the integer flag or the timezone from it
        plans.append(ColumnPlan(name, stated, profile, not declared_levels,
                                stated is None or (stated == "categorical" and not declared_levels)))
    return plans


def draft_cost(columns, epsilon: float, delta: float | None, facts: StatedFacts | None = None,
               n: int | None = None) -> PrivacyCost:
    """What :func:`dp_draft` will spend on a table with these columns and ``n`` records (known before any
    value is read: delta only when some column may select levels)."""
    facts = facts or StatedFacts()
    _check_draft_args(columns, facts, DEFAULT_QUANTILES)
    plans = plan_columns(columns, facts, n, check_epsilon(epsilon, allow_inf=False))
    k_cat = sum(p.may_be_categorical for p in plans)
    return PrivacyCost(check_epsilon(epsilon, allow_inf=False), _categorical_delta(delta, k_cat))


def dp_draft_schema(df: pd.DataFrame, epsilon: float, delta: float | None = None, *, rng=None,
                    label: str | None = None, ranges: dict | None = None, categorical=(), numeric=(),
                    datetime=(), integer=(), levels: dict | None = None, steps: dict | None = None,
                    complete=(), quantiles=DEFAULT_QUANTILES) -> tuple[Schema, PrivacyCost]:
    """Draft a :class:`~privrelease.schema.Schema` under (epsilon, delta)-DP (see :func:`dp_draft`); ``complete``:
    columns stated to hold no missing values (the CLI's ``--complete``).

    A drafted datetime column needs the schema's ``datetime`` type; :func:`dp_draft` returns
    the YAML mapping, which holds it in any case.
    """
    d = dp_draft(df, epsilon, delta, rng=rng, ranges=ranges, quantiles=quantiles,
                 facts=StatedFacts.of(label, numeric, categorical, datetime, integer, levels, complete, steps=steps))
    for line in d.warnings:
        warnings.warn(line, DataWarning, stacklevel=2)
    return Schema.from_dict(d.schema), d.cost


def dp_draft(df: pd.DataFrame, epsilon: float, delta: float | None = None, *, rng=None,
             facts: StatedFacts | None = None, ranges: dict | None = None,
             quantiles=DEFAULT_QUANTILES) -> Draft:
    """Draft a schema from ``df`` under (epsilon, delta)-DP (replace-one relation, n public).

    Parameters
    ----------
    df : the private table (values are read one by one as their canonical text)
    epsilon : total epsilon, the same share for every column that spends
    delta : total delta, split evenly over the columns that may select levels (only they spend it)
    rng : None (OS entropy, real use) or a seed/Generator (experiments)
    facts : the public facts stated about the columns (:class:`StatedFacts`)
    ranges : ``{column: (lo, hi)}`` public ranges of the candidate bounds (``"*"`` for all)
    quantiles : the quantiles that become the lower and upper bounds

    Returns
    -------
    Draft: the schema mapping (with ``provenance``), its cost, and the warnings.

    Notes
    -----
    With ``k`` columns that spend, each gets ``epsilon_c = epsilon / k``: its profile (if any)
    ``PROFILE_SHARE epsilon_c``, and the rest goes to its bounds (scale and two quantiles) or
    to its level selection (with ``delta / k_cat``). A column's steps run one after the other
    and the later ones depend on the earlier outputs only (adaptive composition), so each
    column costs at most ``(epsilon_c, delta_c)`` and the draft ``(epsilon, delta)``. Excluded
    columns (stated identifiers' names, empty or identifier-like profiles) leave part of their
    share unspent. See docs/derivations.md.
    """
    eps = check_epsilon(epsilon, allow_inf=False)
    facts = facts or StatedFacts()
    _check_draft_args(df.columns, facts, quantiles)
    ranges = _checked_ranges(ranges, df.columns)
    plans = plan_columns(df.columns, facts, len(df), eps)
    k = sum(p.spends for p in plans)
    k_cat = sum(p.may_be_categorical for p in plans)
    total_delta = _categorical_delta(delta, k_cat)
    eps_c = eps / k if k else 0.0
    delta_c = total_delta / k_cat if k_cat else 0.0
    source = make_source(rng)
    ctx = _Context(len(df), eps_c, delta_c, ranges, tuple(quantiles), source, facts, [])
    columns = {}
    unreadable = [p.name for p in plans if p.stated == "unreadable"]
    if unreadable:
        ctx.warnings.append(
            f"{len(unreadable)} column(s) whose kind you did not state left out: at epsilon {eps:g} over "
            f"{len(unreadable) + k} columns (n = {len(df):,}) the budget cannot tell their kind; state their kind "
            f"(--numeric, --integer, --categorical, --datetime), draft fewer columns (--columns), or more "
            f"epsilon: {shorten_list(unreadable, 12)}")
    for plan in (p for p in plans if p.stated != "unreadable"):  # in the table's order: noise column by column
        spec = _draft_column(df[plan.name], plan, ctx)
        if spec is not None:
            columns[plan.name] = spec
    if not columns:
        raise SchemaError("the draft kept no column (every column was empty or identifier-like)")
    say_summaries(ctx, PROFILE_SHARE * ctx.eps_c)
    schema = levels_apart_from_spellings({"na_values": [t for t in NA_TOKENS if t],
                                          "provenance": _provenance(eps, total_delta, ctx, plans), "columns": columns})
    return Draft(schema, PrivacyCost(eps, total_delta), ctx.warnings)


@dataclass
class _Context:
    n: int
    eps_c: float
    delta_c: float
    ranges: dict
    quantiles: tuple
    source: object
    facts: StatedFacts
    warnings: list
    magnitudes: list = field(default_factory=list)  # columns whose drafted bounds are magnitudes, not quantiles
    unread: list = field(default_factory=list)  # declared-level columns drafted 'missing: allowed' unread
    unsure: list = field(default_factory=list)  # stated numeric columns whose integer flag the noise decided
    undecided: dict = field(default_factory=dict)  # "levels"/"bounds": [(name, figure, its line)], said together


def _draft_column(s: pd.Series, plan: ColumnPlan, ctx: _Context) -> dict | None:
    """One column's spec (None: left out, with a warning), spending at most its share."""
    name = plan.name
    if plan.stated == "identifier":
        ctx.warnings.append(f"column '{name}' left out: its name says it is an identifier (state its kind, "
                            f"e.g. --categorical {name}, to keep it); " + fresh_identifiers_hint(name))
        return None
    if name in (ctx.facts.levels or {}):  # nothing read: missing values, if any, stay missing (not in a label)
        spec = declared_levels_spec(ctx.facts.levels[name], name == ctx.facts.label,
                                    missing=name not in ctx.facts.complete)
        if "missing" in spec:
            ctx.unread.append(name)
        return spec
    text = canonical_text(s)
    eps = ctx.eps_c
    kind, counts, b = plan.stated, None, 0.0
    if plan.profile:
        counts, b = noisy_profile(text, PROFILE_SHARE * eps, ctx.source)
        eps -= PROFILE_SHARE * eps
        if kind is None:
            kind = decide_kind(counts, ctx.n)
        elif kind == "numeric":  # the integer flag, when not stated, is a charged decision
            kind = "integer" if whole_numbers(counts) else "numeric"
            if integer_unsure(counts, b):
                ctx.unsure.append(f"{name} ({'integer' if kind == 'integer' else 'not integer'})")
    if kind in ("empty", "identifier"):
        what = ("holds (almost) no values" if kind == "empty" else
                "looks like an identifier (many distinct values)")
        ctx.warnings.append(f"column '{name}' left out: under DP it {what}; state its kind (--numeric, "
                            f"--categorical, --datetime) to keep it"
                            + ("; " + fresh_identifiers_hint(name) if kind == "identifier" else ""))
        return None
    if kind == "categorical":
        return _categorical_column(text, name, eps, ctx)
    if kind == "time":
        return _time_column(text, name, eps, ctx)
    spec = _bounded_column(text, name, kind, eps, ctx)
    step = (drafted_step(counts, laplace_threshold(b, MISSING_FLAG_RATE, MAX_DECIMALS + 1))
            if kind == "numeric" and counts is not None else None)
    return with_timezone(spec if step is None else {**spec, "step": step}, counts)


def _time_column(text: pd.Series, name: str, eps: float, ctx: _Context) -> dict:
    """A stated time-of-day column: its bounds are a day's (public), its step as stated (else a minute); its
    histogram of magnitudes, spending ``eps``, is read for the missing bin alone (as with a public range)."""
    spec: dict = {"type": "time", "step": ctx.facts.step(name) or "minute"}
    v = np.where(value_classes(text) == 0, np.nan, 0.0)
    noisy, b = noisy_magnitudes(v, eps, ctx.source)
    if name not in ctx.facts.complete and float(noisy[-1]) > laplace_threshold(b, MISSING_FLAG_RATE):
        spec["missing"] = "allowed"
        say_missing(name, float(noisy[-1]), b, ctx)
    return spec


def noisy_profile(text: pd.Series, epsilon: float, source) -> tuple[ColumnCounts, float]:
    """The epsilon-DP profile of a column and its Laplace scale ``b``.

    Notes
    -----
    The released vector: the counts of the value classes (missing, whole numbers other than zero, zero, ISO date,
    other text, ISO date-time with its UTC offset, and the fractions split by the decimals they are written with, 1 to
    ``MAX_DECIMALS`` and more, :func:`~privrelease.schema.values.decimal_places`; one class per record, so
    replacing a record moves two counts by 1: L1 sensitivity 2), the number of present values outside the 10
    most frequent ones (sensitivity 1: the top-10 total is a maximum over sets of levels of sums of counts,
    each moved by at most 1) and the number of repeated values, present values minus distinct ones
    (sensitivity 1: removing a record lowers it by 0 or 1, adding one raises it by 0 or 1). Total L1
    sensitivity 4: Laplace noise of scale ``4 / epsilon`` on every coordinate is epsilon-DP. The integer class is
    counted in two parts, zeros and other whole numbers (one class per record still), and the fraction class by
    its decimals; each class's count is the sum of its noisy parts (post-processing).
    """
    e = ColumnCounts.exact(text)
    classes = np.asarray(e.classes, dtype=np.float64)
    rest = np.r_[classes[0], classes[1] - e.zeros, classes[3:]]  # missing, whole numbers but zeros, dates, text...
    exact = np.r_[rest, e.zeros, e.decimals, e.outside_top, e.repeats]
    noisy, b = source.add_laplace(exact, PROFILE_SENSITIVITY, float(epsilon), exact.size)
    noisy = np.asarray(noisy, dtype=np.float64)
    k, p = rest.size, len(e.decimals)
    zeros, decimals = float(noisy[k]), noisy[k + 1:k + 1 + p]
    out = np.r_[noisy[0], noisy[1] + zeros, decimals.sum(), noisy[2:k]]
    return ColumnCounts(tuple(out.tolist()), float(noisy[k + 1 + p]), float(noisy[k + 2 + p]),
                        tuple(decimals.tolist()), zeros), float(b)


def _bounded_column(text: pd.Series, name: str, kind: str, eps: float, ctx: _Context) -> dict:
    """A numeric (integer) or datetime column with DP bounds and missing-value flag spending ``eps``."""
    dates = kind == "datetime"
    v = as_days(text) if dates else as_numbers(text)
    v = v[np.isfinite(v) | (value_classes(text) == 0)]  # numbers, and NaN for the missing values
    r = ctx.ranges.get(name, ctx.ranges.get("*"))
    spec: dict = {"type": "datetime" if dates else "numeric"}
    if r is not None:  # a public range: the bounds as stated; the histogram only for the missing values
        noisy, b = noisy_magnitudes(v, eps, ctx.source)
        scale = Scale(r[0], r[1], True, float(noisy[-1]), b)
        spec.update(lower=r[0], upper=r[1])
    else:
        scale = dp_scaled_bounds(v, eps, ctx.source, ctx.quantiles, SCALE_SHARE, ctx.n,
                                 candidates=range_grid if dates else None,
                                 margin=SCALE_MARGIN, dates=dates,  # dates: years, then days
                                 integer=kind == "integer")
        if not scale.supported:
            line = (f"column '{name}': the budget ({eps:.3g} for its bounds, n = {ctx.n:,}) cannot tell where its values "
                    f"are; no bounds drafted: state them in the schema (public), or give --range {name}=lo,hi, or more "
                    f"epsilon")
            ctx.undecided.setdefault("bounds", []).append((name, eps, line))
            spec.update(lower=None, upper=None)
        elif dates:
            lo, hi = scale.lo, scale.hi
            spec.update(lower=iso_day(lo), upper=iso_day(math.ceil(hi)))
            if spec["upper"] <= spec["lower"]:
                spec["upper"] = iso_day(math.floor(lo) + 1)
        else:
            lo, hi = scale.lo, scale.hi
            if not scale.quantiles:
                ctx.magnitudes.append(name)
            if kind == "integer":
                lo, hi = float(math.floor(lo)), float(math.ceil(hi))
                hi = hi if hi > lo else lo + 1.0
            spec.update(lower=lo, upper=hi)
    if dates:
        spec["step"] = ctx.facts.step(name) or "day"
        if ctx.facts.step(name) is None:  # a public line: it reads no value
            ctx.warnings.append(f"column '{name}': drafted at the day, so a time of day in its values is dropped; if "
                                f"it holds date-times, state their step: --datetime {name}=hour (or minute, second)")
    elif kind == "integer":
        spec["integer"] = True
    if name not in ctx.facts.complete and scale.missing > laplace_threshold(scale.b, MISSING_FLAG_RATE):
        spec["missing"] = "allowed"
        say_missing(name, scale.missing, scale.b, ctx)
        if spec.get("lower") is not None and spec["lower"] == spec["upper"]:  # one value or missing: not a constant
            spec["upper"] = spec["lower"] + 1
    return spec


def _categorical_column(text: pd.Series, name: str, eps: float, ctx: _Context) -> dict:
    """A categorical column of the levels kept by stable partition selection, plus ``(other)``; its missing
    values kept missing (``missing: allowed``) when their noisy count clears the public threshold."""
    classes = value_classes(text)
    sel = select_levels(text.where(classes != 0, None).to_numpy(dtype=object), eps, ctx.delta_c, ctx.source)
    levels = sel.levels
    is_label = name == ctx.facts.label
    if len(levels) <= (1 if is_label else 0):
        _, tau = partition_parameters(eps, ctx.delta_c)
        line = (f"column '{name}': {'only one level' if levels else 'no level'} cleared the DP threshold (a level "
                f"needs about {tau:,.0f} records at this budget, n = {ctx.n:,})"
                + ("; a release refuses a label with one level" if is_label else "")
                + ": declare its levels (--levels FILE), or more epsilon")
        if is_label:
            ctx.warnings.append(line)
        else:
            ctx.undecided.setdefault("levels", []).append((name, tau, line))
    other = OTHER if OTHER not in levels else OTHER + " "
    spec = {"type": "categorical", "categories": list(levels) + [other]}
    if is_label:
        spec["role"] = "label"
    if name not in ctx.facts.complete and sel.missing > laplace_threshold(sel.b, MISSING_FLAG_RATE):
        if is_label:
            ctx.warnings.append(label_missing_line(name, sel.missing / ctx.n))
        else:
            spec["missing"] = "allowed"
            say_missing(name, sel.missing, sel.b, ctx)
    spec["other"] = other
    if levels:
        say_other_share(name, other, sel, ctx)
    return spec


def _provenance(eps: float, total_delta: float, ctx: _Context, plans) -> dict:
    """What the drafted schema says of its making (every release certificate using it repeats it)."""
    stated = {p.name: p.stated for p in plans if p.stated is not None}
    return {
        "method": "dp-draft",
        "guarantee": "(epsilon,delta)-DP" if total_delta else "epsilon-DP",
        "neighbouring_relation": "bounded (R1): one record replaced, n public",
        "epsilon": eps,
        "delta": total_delta,
        "per_column": {"epsilon": ctx.eps_c, "delta": ctx.delta_c, "profile_share": PROFILE_SHARE,
                       "scale_share": SCALE_SHARE, "quantiles": list(ctx.quantiles)},
        "ranges": {k: list(v) for k, v in ctx.ranges.items()},
        "public_facts": "column names, n, the stated kinds below, identifier names, the missing-value spellings",
        "stated": stated,
        **({"no_missing": sorted(ctx.facts.complete)} if ctx.facts.complete else {}),
        "randomness": ctx.source.description,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _check_draft_args(columns, facts: StatedFacts, quantiles) -> None:
    """The stated columns are columns of the table, none stated twice; the quantiles are ordered in [0, 1]."""
    columns = list(map(str, columns))
    if facts.label is not None and facts.label not in columns:
        raise SchemaError(f"label column '{facts.label}' is not in the table; its columns: {shorten_list(columns)}")
    unknown = sorted(facts.names() - set(columns))
    if unknown:
        raise SchemaError(f"the stated column kinds name column(s) not in the table: {shorten_list(unknown)}")
    twice = facts.conflicts()
    if twice:
        raise SchemaError(f"column(s) stated with two kinds: {shorten_list(twice)}")
    lo_q, hi_q = quantiles
    if not (0 <= lo_q < hi_q <= 1):
        raise ParameterError(f"quantiles must satisfy 0 <= lower < upper <= 1, got {quantiles}")


def _checked_ranges(ranges, columns) -> dict:
    """The public ranges ``{column or "*": (lo, hi)}``: two finite numbers with lo <= hi (lo = hi: a column that
    holds one public value, drafted as a constant), or two ISO dates with lo < hi."""
    out = {}
    for name, (lo, hi) in (ranges or {}).items():
        if name != "*" and name not in set(map(str, columns)):
            raise ParameterError(f"--range names column '{name}', which is not in the table")
        if isinstance(lo, str) or isinstance(hi, str):
            days = as_days(pd.Series([str(lo), str(hi)], dtype=object))
            if not np.all(np.isfinite(days)):
                raise ParameterError(f"--range {name}: expects two numbers or two ISO dates, got {lo},{hi}")
            ok, lo, hi = days[0] < days[1], str(lo), str(hi)
        else:
            lo, hi = float(lo), float(hi)
            ok = math.isfinite(lo) and math.isfinite(hi) and lo <= hi
        if not ok:
            raise ParameterError(f"--range {name}: needs lo < hi (lo = hi for a column of one value), got {lo},{hi}")
        out[str(name)] = (lo, hi)
    return out


def _categorical_delta(delta, k_cat: int) -> float:
    """The draft's total delta: checked and > 0 when some column may select levels (only they spend it), else 0."""
    if k_cat and delta is None:
        raise ParameterError("discovering categorical levels privately needs a delta (--delta, e.g. 1e-6)")
    total_delta = check_delta(delta) if k_cat else 0.0
    if k_cat and not total_delta > 0:
        raise ParameterError("discovering categorical levels privately needs a delta > 0")
    return total_delta
