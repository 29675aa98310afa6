"""What one value of a table is, decided from that value alone: the per-record rules both schema drafts use.

A schema draft must not let one record change how the others are read. Every rule here
looks at a single value: its canonical text (so ``0`` and ``0.0`` in a numeric column
never depend on whether another record holds ``0.5``), whether it is a missing-value
spelling, a number (an integer or not), an ISO date, or other text. The drafts count these
classes per column (exactly in :func:`~privrelease.schema.schema.draft_schema`, with noise
in :func:`privrelease.dp.draft.dp_draft_schema`) and decide each column's kind from the
counts with the same rule, :func:`decide_kind`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import SchemaError, shorten_list


# Spellings of a missing value, fixed before any data are read (a public rule).
def spellings(value, what: str) -> tuple[str, ...]:
    """Spellings of a missing value as text, from a list of strings or numbers (or one of them; None: none).

    >>> spellings(["?", -999], "na_values"), spellings("NA", "na_values")
    (('?', '-999'), ('NA',))
    """
    if value is None:
        return ()
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or any(isinstance(v, (bool, dict, list, tuple)) for v in value):
        raise SchemaError(f"{what} must be a list of strings or numbers (the spellings of a missing value), got "
                          f"{value!r}")
    return tuple(str(v) for v in value)


NA_TOKENS = ("", "NA", "N/A", "n/a", "na", "NaN", "nan", "null", "NULL", "None", "?", "#N/A")
# The classes of a value, in the order of the count vector of :func:`value_classes`: a "utc date" is a
# date-time that states its UTC offset (2017-01-01T00:14:22Z, ...+05:00), a "date" one that does not.
CLASSES = ("missing", "integer", "fraction", "date", "text", "utc date")
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_DATE = r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?P<zone> ?(?:[zZ]|[+-]\d{2}(?::?\d{2})?))?)?"
_NUMBER_RE, _DATE_RE, _NA_SET = re.compile(_NUMBER), re.compile(_DATE), frozenset(NA_TOKENS)

# Shares of the rule that decides a column's kind from its class counts (exact or noisy).
NUMERIC_SHARE = 0.9  # numbers among the present values: numeric (or datetime for dates)
FRACTION_SHARE = 0.05  # at most this share of non-integers: an integer column
FEW_LEVELS_OUTSIDE_TOP = 0.05  # at most this share outside the 10 most frequent values: few levels
TOP_LEVELS = 10
REPEAT_SHARE = 0.02  # at most this share of values repeating another: identifier-like (whole numbers)
TEXT_DISTINCT_SHARE = 0.3  # text with at least this share of distinct values among its present ones: identifier-like
MAX_DECIMALS = 6  # fractions written with more decimals (or in exponent form) have no drafted step
EMPTY_SHARE = 0.01  # fewer present values than this share of n: an empty column
MIN_IDENTIFIER_N = 100  # below this many records, distinct values say little: never identifier-like


def is_na_spelling(s: pd.Series, na_values) -> pd.Series:
    """Where ``s`` holds one of the declared missing-value spellings: compared after stripping spaces
    and ignoring case, and, for a numeric spelling, by value (-999 matches -999.0 and " -999")."""
    words = {str(v).strip().casefold() for v in na_values}
    numbers = pd.to_numeric(pd.Series(sorted(words)), errors="coerce").dropna().to_numpy()
    if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):  # numbers: compared as numbers
        return s.isin(numbers)
    text = s.astype(str).str.strip().str.casefold()
    hit = text.isin(words)
    if len(numbers):
        hit |= pd.to_numeric(text, errors="coerce").isin(numbers)
    return hit & s.notna()


def is_empty_level(level) -> bool:
    """Whether a declared level is empty (None, '' or spaces): an empty cell is missing in every column."""
    return level is None or str(level).strip() == ""


def _named_level(missing):
    """The level a ``missing:`` entry names (where missing values are meant to go), None for ``allowed`` or none."""
    return None if missing in (None, "allowed") else missing


def spelled_levels(categories, missing, na_values) -> list[str]:
    """The declared levels (``categories`` but the level a ``missing:`` entry names, where missing values are meant
    to go) that one of the spellings ``na_values`` of a missing value matches, as a reader matches them."""
    named = _named_level(missing)
    levels = [str(c) for c in categories if named is None or c != named]
    if not na_values or not levels:
        return []
    return [lv for lv, h in zip(levels, is_na_spelling(pd.Series(levels, dtype=object), na_values)) if h]


def unreadable_levels(column, na_values) -> None:
    """Refuse a categorical column whose declared level is also one of its spellings of a missing value, or is
    empty (an empty cell is missing in every column): its cells would be read as missing, so the level could never
    be read nor released."""
    named = _named_level(column.missing)
    if any(is_empty_level(c) and (named is None or c != named) for c in column.categories):
        raise SchemaError(f"column '{column.name}': an empty level ('') cannot be told from a missing value (an empty "
                          f"cell): take it out of the categories (missing: allowed releases missing values as missing)")
    hit = spelled_levels(column.categories, column.missing, na_values)
    if hit:
        raise SchemaError(f"column '{column.name}': level(s) {shorten_list(hit)} are also spellings of a missing "
                          f"value (na_values), so their cells would be read as missing: take them out of the "
                          f"schema's na_values (a column's own na_values can name them where they do mean missing)")


def levels_apart_from_spellings(schema: dict) -> dict:
    """A drafted schema (its dict) in which no declared level is a spelling of a missing value: a schema-wide
    spelling that is a level of some categorical column (a league called "NA") leaves the schema-wide
    ``na_values`` and joins the own ``na_values`` of every column without that level, where it still means missing."""
    columns, na = schema.get("columns", {}), list(schema.get("na_values") or ())

    def is_level(spec: dict, token: str) -> bool:
        return spec.get("type") == "categorical" and bool(spelled_levels(spec["categories"], spec.get("missing"),
                                                                         [token]))

    clash = [t for t in na if any(is_level(spec, t) for spec in columns.values())]
    for spec in columns.values():
        own = [t for t in clash if not is_level(spec, t)]
        if own:
            spec["na_values"] = [*spec.get("na_values", []), *own]
    kept = [t for t in na if t not in clash]
    return {**schema, "na_values": kept} if kept else {k: v for k, v in schema.items() if k != "na_values"}


def canonical_text(s: pd.Series) -> pd.Series:
    """Each value as text, decided from that value alone: text stripped of spaces, an integral
    float without ``.0`` (``0.0`` -> ``'0'``), missing values (None, NaN) as ``""``.

    >>> canonical_text(pd.Series([0.0, 0.5, None, " a "], dtype=object)).tolist()
    ['0', '0.5', '', 'a']
    """
    def one(v) -> str:
        if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT:
            return ""
        if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v) == round(float(v)):
            return str(int(v))
        if isinstance(v, (pd.Timestamp, np.datetime64)):
            return pd.Timestamp(v).isoformat()
        return str(v).strip()

    if s.dtype == object or pd.api.types.is_string_dtype(s):
        return s.map(one, na_action=None).astype(object)
    return pd.Series([one(v) for v in s.tolist()], index=s.index, dtype=object)


def _unique(text: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The distinct texts and, for every value, the index of its text (each rule runs once per distinct text)."""
    uniq, inv = np.unique(np.asarray(text, dtype=object).astype(str), return_inverse=True)
    return uniq, inv.reshape(-1)


def _class_of(t: str) -> int:
    if t in _NA_SET:
        return 0
    if _NUMBER_RE.fullmatch(t):
        v = float(t)
        return 1 if math.isfinite(v) and v == round(v) else 2
    date = _DATE_RE.fullmatch(t)
    return 4 if date is None else 5 if date.group("zone") else 3


def value_classes(text: pd.Series) -> np.ndarray:
    """The class of every value (an index into :data:`CLASSES`), from its canonical text alone.

    >>> value_classes(pd.Series(["", "?", "40", "40.5", "1e3", "2020-01-31", "abc", "2020-01-31T10:00Z"])).tolist()
    [0, 0, 1, 2, 1, 3, 4, 5]
    """
    uniq, inv = _unique(text)
    return np.array([_class_of(t) for t in uniq], dtype=np.int64)[inv] if len(inv) else np.zeros(0, np.int64)


def decimal_places(text: pd.Series) -> np.ndarray:
    """For every fraction (class ``fraction`` of :data:`CLASSES`) the decimals its text is written with, trailing
    zeros dropped: 1 to :data:`MAX_DECIMALS`, or ``MAX_DECIMALS + 1`` for more or an exponent; 0 for every other
    value (from its text alone).

    >>> decimal_places(pd.Series(["4.5", "14.50", "0.125", "3", "", "1e-3", "0.1234567", "abc"])).tolist()
    [1, 1, 3, 0, 0, 7, 7, 0]
    """
    def one(t: str) -> int:
        if _class_of(t) != 2:
            return 0
        if "e" in t.lower() or "." not in t:
            return MAX_DECIMALS + 1
        return min(len(t.split(".", 1)[1].rstrip("0")), MAX_DECIMALS + 1)

    uniq, inv = _unique(text)
    return np.array([one(t) for t in uniq], dtype=np.int64)[inv] if len(inv) else np.zeros(0, np.int64)


def as_numbers(text: pd.Series) -> np.ndarray:
    """The numbers of the values (NaN for values that are not numbers)."""
    uniq, inv = _unique(text)
    v = [float(t) if t not in _NA_SET and _NUMBER_RE.fullmatch(t) else math.nan for t in uniq]
    return np.array(v, dtype=np.float64)[inv] if len(inv) else np.zeros(0)


def as_days(text: pd.Series) -> np.ndarray:
    """Days since 1970-01-01 (fractional for times of day) of the ISO dates, in UTC (NaN for other values)."""
    from .dates import parse_iso

    uniq, inv = _unique(text)
    ok = np.array([_class_of(t) in (3, 5) for t in uniq], dtype=bool)
    d = parse_iso(pd.Series(np.where(ok, uniq, None), dtype=object)).dt.tz_localize(None)
    ns = d.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(np.float64)
    days = np.where(d.isna().to_numpy(), np.nan, ns / 86_400e9)
    return days[inv] if len(inv) else np.zeros(0)


def iso_day(days: float) -> str:
    """The ISO date of a day number (days since 1970-01-01).

    >>> iso_day(0), iso_day(19723)
    ('1970-01-01', '2024-01-01')
    """
    return (pd.Timestamp("1970-01-01") + pd.Timedelta(days=int(np.floor(days)))).date().isoformat()


def identifier_name(name) -> bool:
    """Whether a column's (public) name says it is an identifier: ``id``, ``*_id``, ``patientId``, ``uuid``.

    >>> [identifier_name(n) for n in ("id", "patient_id", "PatientID", "recordId", "paid", "age", "valid")]
    [True, True, True, True, False, False, False]
    """
    text = str(name)
    return bool(re.fullmatch(r"(?i)(id|uuid|guid)", text) or re.search(r"(?i)[_\-\s.](id|uuid|guid)$", text)
                or re.search(r"[a-z0-9](Id|ID)$", text))


@dataclass(frozen=True)
class ColumnCounts:
    """What the kind rule reads of a column (exact counts, or noisy ones in the DP draft).

    ``classes``: counts per :data:`CLASSES`; ``outside_top``: values outside the
    :data:`TOP_LEVELS` most frequent ones; ``repeats``: present values minus distinct values;
    ``decimals``: the fractions by the decimals they are written with (1 to :data:`MAX_DECIMALS`, then
    more: :func:`decimal_places`), which sum to the fraction class (empty: not counted); ``zeros``: the whole
    numbers equal to zero, a part of the integer class (a column of amounts that are mostly zero is whole numbers
    by its zeros alone: whether its amounts are is read among the others).
    """

    classes: tuple
    outside_top: float
    repeats: float
    decimals: tuple = ()
    zeros: float = 0.0

    @classmethod
    def exact(cls, text: pd.Series) -> "ColumnCounts":
        """The exact counts of a column given as canonical text."""
        codes = value_classes(text)
        present = text[codes != 0]
        vc = present.value_counts()
        places = np.bincount(decimal_places(text), minlength=MAX_DECIMALS + 2)[1:].astype(float)
        zeros = float(np.sum(as_numbers(text[codes == 1]) == 0)) if (codes == 1).any() else 0.0
        return cls(classes=tuple(np.bincount(codes, minlength=len(CLASSES)).astype(float).tolist()),
                   outside_top=float(len(present) - vc.iloc[:TOP_LEVELS].sum()),
                   repeats=float(len(present) - len(vc)), decimals=tuple(places.tolist()), zeros=zeros)


def decide_kind(counts: ColumnCounts, n: int) -> str:
    """A column's kind from its counts: ``empty``, ``identifier``, ``numeric``, ``integer`` (a numeric
    column of whole numbers), ``datetime`` or ``categorical``; the same rule for both drafts.

    >>> decide_kind(ColumnCounts((0, 990, 10, 0, 0, 0), outside_top=700, repeats=900), 1000)
    'integer'
    >>> decide_kind(ColumnCounts((0, 1000, 0, 0, 0, 0), outside_top=0, repeats=998), 1000)
    'categorical'
    >>> decide_kind(ColumnCounts((0, 0, 0, 0, 1000, 0), outside_top=990, repeats=0), 1000)
    'identifier'
    >>> decide_kind(ColumnCounts((0, 0, 0, 0, 13000, 0), outside_top=12900, repeats=7300), 13000)  # 5,700 distinct
    'identifier'

    Whole numbers are identifier-like only when at most 2 % of them repeat (amounts in whole units
    have many distinct values too); text when at least 30 % of its values are distinct (an
    identifier held by a few records each: a household, a person with several visits; free
    text), which as a categorical would put nearly every record in ``(other)``.
    """
    c = np.maximum(np.asarray(counts.classes, dtype=np.float64), 0.0)
    present = c[1:].sum()
    if n - c[0] < max(EMPTY_SHARE * n, 1.0):  # one noisy count: the clipped noise of the others adds up
        return "empty"
    few_levels = max(counts.outside_top, 0.0) <= FEW_LEVELS_OUTSIDE_TOP * present
    distinct = n >= MIN_IDENTIFIER_N and max(counts.repeats, 0.0) <= REPEAT_SHARE * present
    if c[1] + c[2] >= NUMERIC_SHARE * present:
        if few_levels:
            return "categorical"
        integer = whole_numbers(counts)
        if integer and distinct:
            return "identifier"
        return "integer" if integer else "numeric"
    if c[3] + c[5] >= NUMERIC_SHARE * present:
        return "datetime"
    text_distinct = n >= MIN_IDENTIFIER_N and present - max(counts.repeats, 0.0) >= TEXT_DISTINCT_SHARE * present
    return "identifier" if distinct or (text_distinct and not few_levels) else "categorical"


def with_timezone(spec: dict, counts: ColumnCounts | None) -> dict:
    """A drafted column's spec, with ``timezone: UTC`` after its step when it is a datetime column whose
    counts say its values state their UTC offset (more of them than dates without); the same rule for both drafts.

    >>> with_timezone({"type": "datetime", "step": "day", "missing": "allowed"},
    ...               ColumnCounts((9, 0, 0, 10, 0, 990), outside_top=0, repeats=0))
    {'type': 'datetime', 'step': 'day', 'timezone': 'UTC', 'missing': 'allowed'}
    """
    if spec.get("type") != "datetime" or counts is None or not counts.classes[5] > max(counts.classes[3], 0.0):
        return spec
    items = list(spec.items())
    at = list(spec).index("step") + 1 if "step" in spec else len(items)
    return dict(items[:at] + [("timezone", "UTC")] + items[at:])


def whole_numbers(counts: ColumnCounts) -> bool:
    """Whether a numeric column's counts say integer: at most :data:`FRACTION_SHARE` of its values other than zero
    are fractions. Zeros say nothing of the other values' precision: rainfall in hundredths of an inch, zero on 94 %
    of the days, had been drafted integer, and its amounts rounded away.

    >>> whole_numbers(ColumnCounts((0, 970, 30, 0, 0, 0), 0, 0))
    True
    >>> whole_numbers(ColumnCounts((0, 940, 60, 0, 0, 0), 0, 0, zeros=930))
    False
    """
    c = np.maximum(np.asarray(counts.classes, dtype=np.float64), 0.0)
    return bool(c[2] <= _fraction_threshold(counts))


def _fraction_threshold(counts: ColumnCounts) -> float:
    """The most fractions an integer column holds (:func:`whole_numbers`): ``FRACTION_SHARE`` of its values other
    than zero."""
    c = np.maximum(np.asarray(counts.classes, dtype=np.float64), 0.0)
    return FRACTION_SHARE * max(float(c[1:].sum()) - max(float(counts.zeros), 0.0), 0.0)


def integer_unsure(counts: ColumnCounts, b: float) -> bool:
    """Whether a numeric column's integer flag (:func:`~privrelease.schema.values.whole_numbers`) was decided within
    the noise: its noisy count of fractions, a sum of ``MAX_DECIMALS + 1`` Laplace counts of scale ``b`` (std ``b
    sqrt(2 (MAX_DECIMALS + 1))``), within 2 of those stds of the rule's threshold. Post-processing.

    >>> integer_unsure(ColumnCounts((0, 300, 82, 0, 0, 0), 0, 0), 256.0)  # 382 records at 0.016 of epsilon
    True
    >>> integer_unsure(ColumnCounts((0, 30, 20000, 0, 0, 0), 0, 0), 40.0)
    False
    """
    std = b * np.sqrt(2.0 * (MAX_DECIMALS + 1))
    return bool(abs(float(counts.classes[2]) - _fraction_threshold(counts)) < 2.0 * std)


def integer_unsure_line(names: list, epsilon: float, n: int) -> str:
    """The DP draft's one warning naming the columns of :func:`integer_unsure`, with what it drafted and the fix."""
    return (f"{len(names)} column(s) were drafted integer or not on counts of whole numbers and fractions that the "
            f"noise decided (epsilon {epsilon:.3g} for them, n = {n:,}): an integer column's values are released "
            f"whole, a column of fractions at its drafted step; state the whole-number columns with --integer and "
            f"give the others their step in the schema: {shorten_list(names, 12)}")


def drafted_step(counts: ColumnCounts, floor: float = 0.0) -> float | None:
    """The step of a numeric column of fractions: ``10 ** -k`` for the most decimals ``k`` that more than
    :data:`FRACTION_SHARE` of its numbers other than zero are written with (and more than ``floor``: in the DP draft,
    a count that noise alone seldom reaches); values written finer are rounded to it, as an integer column's fractions
    are. None
    when no decimals count, or when those that do are more than :data:`MAX_DECIMALS` (a continuous column). Exact
    or noisy counts alike.

    >>> drafted_step(ColumnCounts((0, 30, 970, 0, 0, 0), 0, 0, decimals=(960, 10, 0, 0, 0, 0, 0)))
    0.1
    >>> drafted_step(ColumnCounts((0, 300, 700, 0, 0, 0), 0, 0, decimals=(300, 400, 0, 0, 0, 0, 0)))
    0.01
    >>> drafted_step(ColumnCounts((0, 30, 970, 0, 0, 0), 0, 0, decimals=(100, 0, 0, 0, 0, 0, 870))) is None
    True
    """
    if not counts.decimals:
        return None
    c = np.asarray(counts.decimals, dtype=np.float64)
    whole = max(float(counts.classes[1]), 0.0) - max(float(counts.zeros), 0.0)  # zeros apart, as in whole_numbers
    numbers = max(whole, 0.0) + float(np.maximum(c, 0.0).sum())
    held = np.flatnonzero(c > max(FRACTION_SHARE * numbers, floor))
    if held.size == 0 or held[-1] >= MAX_DECIMALS:
        return None
    return float(f"1e-{held[-1] + 1}")


def declared_levels_spec(levels, is_label: bool, missing: bool = True) -> dict:
    """A categorical column of declared (public) levels: exactly those levels, no ``(other)`` (a declared list is
    the column's whole domain: a release refuses a value outside it, in one line, before anything is charged, and
    an empty catch-all level would only gather the noise's share of a level no record holds, a class of its own
    in a label); missing values stay missing (``missing: allowed``) when ``missing``, never in a label (a release
    refuses them there).

    >>> declared_levels_spec(["a", "b", "a"], True)["categories"]
    ['a', 'b']
    """
    spec: dict = {"type": "categorical", "categories": [str(v) for v in dict.fromkeys(levels)]}
    if is_label:
        spec["role"] = "label"
    elif missing:
        spec["missing"] = "allowed"
    return spec


def fresh_identifiers_hint(name: str) -> str:
    """How a schema releases fresh identifiers in place of a column left out as an identifier."""
    return f"to release fresh identifiers in its place, add constraints: [{{type: unique, column: {name}}}] to the schema"


def label_missing_line(name: str, share: float | None) -> str:
    """The line that says a label has missing values (``share``: a DP estimate, or None)."""
    about = "" if share is None else (f" (about {share:.1%} of the records, a DP estimate)" if share >= 0.001 else
                                      " (a DP estimate of a few records at most: it may be the noise alone)")
    return (f"label column '{name}' has missing values{about}: a release refuses them; drop the records without "
            f"a label (publicly) first, or name a class for them with 'missing: LEVEL' in the schema")


def missing_tokens(text: pd.Series) -> list[str]:
    """The missing-value spellings that occur in a column (for the non-private draft's ``na_values``)."""
    present = set(text.astype(str).unique().tolist())
    return [t for t in NA_TOKENS if t in present]


@dataclass(frozen=True)
class StatedFacts:
    """The public facts a user states about a table's columns before a draft reads it.

    ``numeric``, ``categorical``, ``datetime``, ``integer``: column names of that kind
    (``integer`` implies numeric); ``levels``: ``{column: [level, ...]}`` declared levels
    (implies categorical); ``label``: the label column (categorical); ``complete``: columns
    declared to hold no missing values. A Parquet file's declared types and non-nullable fields
    give the same facts (:func:`declared_facts`).
    """

    label: str | None = None
    numeric: frozenset = frozenset()
    categorical: frozenset = frozenset()
    datetime: frozenset = frozenset()
    integer: frozenset = frozenset()
    levels: dict | None = None
    complete: frozenset = frozenset()
    steps: dict | None = None
    time: frozenset = frozenset()

    @classmethod
    def of(cls, label=None, numeric=(), categorical=(), datetime=(), integer=(), levels=None,
           complete=(), steps=None, time=()) -> "StatedFacts":
        steps = {str(k): str(v) for k, v in (steps or {}).items()}
        time = frozenset(map(str, time))
        return cls(label, frozenset(map(str, numeric)), frozenset(map(str, categorical)),
                   frozenset(map(str, datetime)) | (frozenset(steps) - time), frozenset(map(str, integer)),
                   {str(k): [str(v) for v in vs] for k, vs in (levels or {}).items()}, frozenset(map(str, complete)),
                   steps or None, time)

    def step(self, name) -> str | None:
        """The stated step (day, hour, minute or second) of a date column, or None."""
        return (self.steps or {}).get(str(name))

    def names(self) -> set:
        """Every column named by a fact."""
        return (set(self.numeric) | set(self.categorical) | set(self.datetime) | set(self.integer) | set(self.time)
                | set(self.levels or {}) | set(self.complete) | ({self.label} if self.label is not None else set()))

    def kind(self, name) -> str | None:
        """The stated kind of a column (``categorical``, ``integer``, ``numeric``, ``datetime``) or None."""
        name = str(name)
        if name == self.label or name in self.categorical or name in (self.levels or {}):
            return "categorical"
        if name in self.integer:
            return "integer"
        if name in self.numeric:
            return "numeric"
        if name in self.time:
            return "time"
        return "datetime" if name in self.datetime else None

    def conflicts(self) -> list[str]:
        """Columns stated with two kinds."""
        groups = [set(self.categorical) | set(self.levels or {}) | ({self.label} - {None}),
                  set(self.numeric) | set(self.integer), set(self.datetime), set(self.time)]
        return sorted({c for i, g in enumerate(groups) for h in groups[i + 1:] for c in g & h})

    def merged(self, other: "StatedFacts") -> "StatedFacts":
        """These facts, completed by ``other``'s for the columns these do not state (and its complete columns)."""
        mine = self.names() - set(self.complete)
        keep = lambda s: frozenset(c for c in s if c not in mine)  # noqa: E731
        return StatedFacts(self.label, self.numeric | keep(other.numeric), self.categorical | keep(other.categorical),
                           self.datetime | keep(other.datetime), self.integer | keep(other.integer), self.levels,
                           self.complete | other.complete, self.steps, self.time)


def declared_facts(arrow_schema) -> StatedFacts:
    """The kinds a typed file (Parquet) declares in its Arrow schema: integer, float, date/time and
    boolean columns (text columns declare no kind), and the fields declared non-nullable (no missing
    values). Read from the file's schema, never from loaded values: a pandas dtype depends on the
    values (an int64 column with one null loads as float64)."""
    import pyarrow.types as pat

    kinds: dict = {"numeric": [], "categorical": [], "datetime": [], "integer": [], "complete": []}
    for f in arrow_schema:
        t = f.type
        if not f.nullable:
            kinds["complete"].append(f.name)
        if pat.is_boolean(t):
            kinds["categorical"].append(f.name)
        elif pat.is_integer(t):
            kinds["integer"].append(f.name)
        elif pat.is_floating(t) or pat.is_decimal(t):
            kinds["numeric"].append(f.name)
        elif pat.is_timestamp(t) or pat.is_date(t):
            kinds["datetime"].append(f.name)
    return StatedFacts.of(**kinds)
