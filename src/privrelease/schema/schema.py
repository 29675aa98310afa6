"""Declared public schema: column types, bounds, category levels and roles.

The schema is the one place where public knowledge enters a release. Nothing in
:mod:`privrelease` reads bounds or levels from the private data during a release;
:func:`draft_schema` does read the data, and says so, so that a user can review
and edit a proposal before any release.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from ..errors import SchemaError, option, shorten, shorten_list
from .constraints import parse_constraints
from .precision import grid_range
from .values import spellings, unreadable_levels

ROLES = (None, "feature", "label", "target")
MISSING_LEVEL = "(missing)"  # the internal level of a categorical column declared 'missing: allowed'



@dataclass(frozen=True)
class NumericColumn:
    """A numeric column with public bounds ``lower <= value <= upper``.

    ``integer=True`` rounds decoded values to whole numbers (the same as ``step=1``).
    ``step`` is the public precision at which the column is recorded (``0.1`` for values
    written to one decimal): released values are multiples of it. ``missing="allowed"``
    lets the column hold missing values; mechanisms that can release them treat the
    missing share as one more released statistic, the others refuse the column.
    ``role="target"`` marks a regression target (kept as its own column by
    supervised mechanisms). ``na_values``: the column's own spellings of a missing value (a survey's 99).
    """

    name: str
    lower: float
    upper: float
    integer: bool = False
    role: str | None = None
    step: float | None = None
    missing: str | None = None
    na_values: tuple[str, ...] = ()
    kind: str = field(default="numeric", init=False)

    def __post_init__(self):
        _check_name(self.name)
        object.__setattr__(self, "na_values", spellings(self.na_values, f"column '{self.name}': 'na_values'"))
        for bound in ("lower", "upper"):
            v = getattr(self, bound)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise SchemaError(f"column '{self.name}': '{bound}' must be a finite number, got {v!r}")
        if self.lower == self.upper:
            raise SchemaError(f"column '{self.name}': lower and upper are both {self.lower:g}: a column of one value is "
                              f"stated so only without missing values and not as the target (it is then released as "
                              f"that value); give it a range")
        if not self.lower < self.upper:
            raise SchemaError(
                f"column '{self.name}': lower ({self.lower}) must be smaller than upper ({self.upper})"
            )
        if self.role not in ROLES or self.role == "label":
            raise SchemaError(
                f"column '{self.name}': role of a numeric column must be 'feature' or 'target', got {self.role!r}"
            )
        if self.step is not None:
            st = self.step
            if isinstance(st, bool) or not isinstance(st, (int, float)) or not math.isfinite(st) or st <= 0:
                raise SchemaError(f"column '{self.name}': 'step' must be a number > 0, got {st!r}")
            if self.integer and float(st) != round(st):
                raise SchemaError(f"column '{self.name}': an integer column's 'step' must be a whole number, got {st!r}")
        if self.resolution is not None:
            kmin, kmax = grid_range(self.lower, self.upper, self.resolution)
            if kmin > kmax:
                raise SchemaError(f"column '{self.name}': no multiple of its step {self.resolution:g} lies within "
                                  f"[{self.lower:g}, {self.upper:g}]; widen the bounds or declare a finer step")
        if self.missing not in (None, "allowed"):
            raise SchemaError(
                f"column '{self.name}': 'missing' of a numeric column must be 'allowed' (or absent), got {self.missing!r}"
            )

    @property
    def width(self) -> int:
        return 1

    @property
    def resolution(self) -> float | None:
        """The public precision of the column's values: ``step``, else 1 for an integer column, else None."""
        if self.step is not None:
            return float(self.step)
        return 1.0 if self.integer else None

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"type": "numeric", "lower": self.lower, "upper": self.upper}
        if self.integer:
            d["integer"] = True
        if self.step is not None:
            d["step"] = self.step
        if self.missing is not None:
            d["missing"] = self.missing
        if self.na_values:
            d["na_values"] = list(self.na_values)
        if self.role not in (None, "feature"):
            d["role"] = self.role
        return d


@dataclass(frozen=True)
class CategoricalColumn:
    """A categorical column with its public list of levels.

    ``missing`` names the level that stands for a missing value (added to ``categories``
    when they do not list it), released as that level; ``missing="allowed"`` (when no category
    is named ``allowed``) releases missing values as missing: they are encoded as one more,
    internal level (:data:`MISSING_LEVEL`, in ``categories``, with ``missing_as_na`` set) that
    every mechanism treats as an ordinary level, and decoded back to a missing value. Not for
    a label (a label's classes are what is learned). Without ``missing``, a missing value is
    refused. ``other`` names the level
    that every value not among ``categories`` is mapped to (e.g. the rare levels a DP
    draft did not select); without it, such a value is refused. ``taxonomy`` is an
    optional public generalisation tree (nested mappings ending in lists of
    levels), used by generalisation mechanisms such as DiffGen. ``na_values``: this column's
    own spellings of a missing value, as for a numeric column.
    """

    name: str
    categories: tuple[str, ...]
    role: str | None = None
    missing: str | None = None
    taxonomy: Any = None
    other: str | None = None
    missing_as_na: bool = False
    na_values: tuple[str, ...] = ()
    kind: str = field(default="categorical", init=False)

    def __post_init__(self):
        _check_name(self.name)
        object.__setattr__(self, "na_values", spellings(self.na_values, f"column '{self.name}': 'na_values'"))
        cats = tuple(str(c) for c in self.categories)
        if self.missing == "allowed" and "allowed" not in cats and not self.missing_as_na:
            level = MISSING_LEVEL  # released as missing: one more level, internal, decoded to a missing value
            while level in cats:
                level += " "
            object.__setattr__(self, "missing", level)
            object.__setattr__(self, "missing_as_na", True)
        if self.missing is not None and str(self.missing) not in cats:  # 'missing: Unknown' declares the level
            cats += (str(self.missing),)
        object.__setattr__(self, "categories", cats)
        if len(cats) < 1:
            raise SchemaError(f"column '{self.name}': a categorical column needs at least one category")
        dup = sorted({c for c in cats if cats.count(c) > 1})
        if dup:
            raise SchemaError(f"column '{self.name}': duplicated categories {dup}")
        if self.other is not None and str(self.other) not in cats:
            raise SchemaError(f"column '{self.name}': other level {shorten(self.other)} is not one of its categories")
        if self.role not in ROLES or self.role == "target":
            raise SchemaError(
                f"column '{self.name}': role of a categorical column must be 'feature' or 'label', got {self.role!r}"
            )
        if self.missing_as_na and self.role == "label":
            raise SchemaError(f"label column '{self.name}': 'missing: allowed' would make missing a class of the "
                              f"label; drop the records without a label (publicly) first, or name a class for them "
                              f"with 'missing: LEVEL'")

    @property
    def width(self) -> int:
        return len(self.categories)

    @property
    def levels(self) -> tuple[str, ...]:
        """The declared categories: ``categories`` without the internal missing level."""
        return self.categories[:-1] if self.missing_as_na else self.categories

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"type": "categorical", "categories": list(self.levels)}
        if self.role not in (None, "feature"):
            d["role"] = self.role
        if self.missing is not None:
            d["missing"] = "allowed" if self.missing_as_na else self.missing
        if self.other is not None:
            d["other"] = self.other
        if self.na_values:
            d["na_values"] = list(self.na_values)
        if self.taxonomy is not None:
            d["taxonomy"] = self.taxonomy
        return d


Column = NumericColumn | CategoricalColumn

_COLUMN_KEYS = {
    "numeric": {"type", "lower", "upper", "integer", "role", "step", "missing", "na_values"},
    "categorical": {"type", "categories", "role", "missing", "taxonomy", "other", "na_values"},
    "datetime": {"type", "lower", "upper", "step", "timezone", "role", "missing", "na_values"},
    "time": {"type", "step", "role", "missing", "na_values"},
}
_TOP_KEYS = {"columns", "name", "na_values", "n_public", "row_norm_bound", "description", "provenance",
             "constraints"}


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise SchemaError(f"column names must be non-empty strings, got {name!r}")


@dataclass(frozen=True)
class Schema:
    """An ordered set of columns plus release-wide public facts.

    Parameters
    ----------
    columns : sequence of NumericColumn / CategoricalColumn
    na_values : strings that mean "missing" in input files (e.g. ``"?"``), matched after
        stripping spaces and ignoring case; a number also matches its other spellings (-999, -999.0)
    n_public : whether the number of records is public (bounded / replace-one
        neighbouring relation, the default of every mechanism here)
    row_norm_bound : optional public bound on the L2 norm of an encoded row
    provenance : optional record of how the schema was made, e.g. a DP draft and its privacy
        cost (:func:`privrelease.dp.draft.dp_draft_schema`); every release certificate using
        the schema repeats it
    constraints : public rules that hold in every row (:mod:`privrelease.schema.constraints`):
        hierarchies, allowed combinations, inequalities, formulas and unique identifiers
    """

    columns: tuple[Column, ...]
    name: str | None = None
    na_values: tuple[str, ...] = ()
    n_public: bool = True
    row_norm_bound: float | None = None
    description: str | None = None
    provenance: dict | None = field(default=None, compare=False, hash=False)
    constraints: tuple = ()

    def __post_init__(self):
        cols = tuple(self.columns)
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "na_values", spellings(self.na_values, "'na_values'"))
        if not cols:
            raise SchemaError("the schema declares no columns")
        names = [c.name for c in cols]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SchemaError(f"duplicated column names {dup}")
        labels = [c.name for c in cols if c.role == "label"]
        if len(labels) > 1:
            raise SchemaError(f"at most one label column is allowed, got {labels}")
        if self.row_norm_bound is not None and not (self.row_norm_bound > 0):
            raise SchemaError("row_norm_bound must be positive")
        for c in self.categorical:
            unreadable_levels(c, self.missing_spellings(c))
        from .constraints import validate_constraints

        object.__setattr__(self, "constraints", tuple(self.constraints))
        validate_constraints(self.constraints, self)

    # ---- construction -------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping) -> "Schema":
        """Build a schema from its dictionary (YAML/JSON) form.

        >>> s = Schema.from_dict({"columns": {"age": {"type": "numeric", "lower": 17, "upper": 90},
        ...                                   "sex": {"type": "categorical", "categories": ["F", "M"]}}})
        >>> [c.name for c in s.columns], s.encoded_width
        (['age', 'sex'], 3)
        """
        if not isinstance(d, Mapping):
            raise SchemaError(f"a schema must be a mapping with a 'columns' key, got {type(d).__name__}")
        unknown = set(d) - _TOP_KEYS
        if unknown:
            raise SchemaError(f"unknown schema keys {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
        raw = d.get("columns")
        if isinstance(raw, list):  # list form: [{name: ..., type: ...}, ...]
            items = []
            for entry in raw:
                if not isinstance(entry, Mapping) or "name" not in entry:
                    raise SchemaError("each column in list form needs a 'name'")
                e = dict(entry)
                items.append((e.pop("name"), e))
        elif isinstance(raw, Mapping):
            items = list(raw.items())
        else:
            raise SchemaError("the schema needs a 'columns' mapping of column name -> spec")
        unbounded = [str(n) for n, spec in items if isinstance(spec, Mapping) and spec.get("type") in
                     ("numeric", "datetime") and (spec.get("lower") is None or spec.get("upper") is None)]
        if unbounded:
            raise SchemaError(f"column(s) {shorten_list(unbounded, len(unbounded))} have no bounds: state 'lower' and 'upper' for "
                              f"each (public knowledge; a DP draft leaves them empty where its budget could not "
                              f"tell where the values are)")
        items, constants = _constant_columns(items)
        cols = [_column_from_dict(str(n), spec) for n, spec in items]
        return cls(
            columns=tuple(cols),
            name=d.get("name"),
            na_values=d.get("na_values") or (),
            n_public=bool(d.get("n_public", True)),
            row_norm_bound=d.get("row_norm_bound"),
            description=d.get("description"),
            provenance=_provenance(d.get("provenance")),
            constraints=parse_constraints(d.get("constraints")) + parse_constraints(constants or None),
        )

    @classmethod
    def from_yaml(cls, path: str | Path) -> "Schema":
        path = Path(path)
        if _looks_like_table(path) and path.is_file():
            raise SchemaError(f"schema file {path} looks like a data table: {_not_a_schema(path)}")
        try:
            text = path.read_text()
        except OSError as exc:
            raise SchemaError(f"cannot read schema file {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise SchemaError(f"schema file {path} is not text: {_not_a_schema(path)}") from None
        try:
            d = yaml.safe_load(text) if path.suffix.lower() != ".json" else json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"schema file {path} is not valid JSON: {exc.msg} at line {exc.lineno}, column "
                              f"{exc.colno}") from None
        except yaml.YAMLError as exc:
            raise SchemaError(f"schema file {path} is not valid YAML: {_yaml_problem(exc)}") from None
        if d is None:
            raise SchemaError(f"schema file {path} is empty: it needs a 'columns' mapping of column name -> spec")
        if not isinstance(d, Mapping):
            raise SchemaError(f"schema file {path} holds no 'columns' mapping: {_not_a_schema(path)}")
        return cls.from_dict(d)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {}
        if self.name:
            d["name"] = self.name
        if self.description:
            d["description"] = self.description
        if self.na_values:
            d["na_values"] = list(self.na_values)
        if not self.n_public:
            d["n_public"] = False
        if self.row_norm_bound is not None:
            d["row_norm_bound"] = self.row_norm_bound
        if self.provenance is not None:
            d["provenance"] = dict(self.provenance)
        d["columns"] = {c.name: c.to_dict() for c in self.columns}
        if self.constraints:
            d["constraints"] = [c.to_dict() for c in self.constraints]
        return d

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None, width=100, allow_unicode=True)

    # ---- views --------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def missing_spellings(self, column: Column) -> tuple[str, ...]:
        """The spellings of a missing value in ``column``: the schema's ``na_values`` and the column's own."""
        return self.na_values + tuple(v for v in column.na_values if v not in self.na_values)

    def __getitem__(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise SchemaError(f"the schema has no column '{name}'")

    @property
    def label(self) -> CategoricalColumn | None:
        for c in self.columns:
            if c.role == "label":
                return c
        return None

    @property
    def target(self) -> NumericColumn | None:
        targets = [c for c in self.columns if c.role == "target"]
        return targets[0] if targets else None

    @property
    def numeric(self) -> list[NumericColumn]:
        return [c for c in self.columns if c.kind == "numeric"]

    @property
    def categorical(self) -> list[CategoricalColumn]:
        return [c for c in self.columns if c.kind == "categorical"]

    @property
    def encoded_width(self) -> int:
        return sum(c.width for c in self.columns)

    def select(self, names: Iterable[str]) -> "Schema":
        """The sub-schema of the named columns, in schema order."""
        names = set(names)
        missing = names - set(self.names)
        if missing:
            raise SchemaError(f"the schema has no columns {sorted(missing)}")
        return Schema(
            columns=tuple(c for c in self.columns if c.name in names),
            name=self.name,
            na_values=self.na_values,
            n_public=self.n_public,
            row_norm_bound=self.row_norm_bound,
            provenance=self.provenance,
        )

    def without(self, names: Iterable[str]) -> "Schema":
        names = set(names)
        return self.select([c.name for c in self.columns if c.name not in names])

    def with_role(self, name: str, role: str | None) -> "Schema":
        """A copy in which column ``name`` has the given role (others keep theirs, a previous label loses it)."""
        import dataclasses

        cols = []
        for c in self.columns:
            if c.name == name:
                cols.append(dataclasses.replace(c, role=role))
            elif role == "label" and c.role == "label":
                cols.append(dataclasses.replace(c, role=None))
            else:
                cols.append(c)
        if name not in self.names:
            raise SchemaError(f"the schema has no column '{name}'")
        return dataclasses.replace(self, columns=tuple(cols))


def _provenance(value) -> dict | None:
    if value is not None and not isinstance(value, Mapping):
        raise SchemaError(f"'provenance' must be a mapping (how the schema was made), got {type(value).__name__}")
    return None if value is None else dict(value)


def _constant_columns(items: list) -> tuple[list, list]:
    """A numeric column whose bounds are one number (``lower == upper``, no missing values) holds that public value
    in every row: it becomes a ``formula`` constraint ``column = value``, so the mechanism never reads it and every
    released row gets the value (an input row holding another value breaks the rule, like any rule). Its bounds
    are widened by one step (or 1) so that the column itself is well formed. Returns the items and the
    constraints to add."""
    out, rules = [], []
    for name, spec in items:
        if (isinstance(spec, Mapping) and spec.get("type") == "numeric" and spec.get("missing") is None
                and spec.get("role") in (None, "feature")
                and _finite_number(spec.get("lower")) and spec.get("lower") == spec.get("upper")):
            value = spec["lower"]
            step = spec.get("step") if _finite_number(spec.get("step")) and spec.get("step") > 0 else 1
            spec = {**spec, "upper": value + step}
            text = str(int(value)) if float(value).is_integer() else repr(float(value))
            rules.append({"type": "formula", "column": str(name), "expression": text})
        out.append((name, spec))
    return out, rules


def _finite_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _column_from_dict(name: str, spec: Any) -> Column:
    if not isinstance(spec, Mapping):
        raise SchemaError(f"column '{name}': spec must be a mapping with a 'type', got {spec!r}")
    ctype = spec.get("type")
    if ctype not in _COLUMN_KEYS:
        raise SchemaError(f"column '{name}': type must be 'numeric', 'categorical', 'datetime' or 'time', got {ctype!r}")
    unknown = set(spec) - _COLUMN_KEYS[ctype]
    if unknown:
        raise SchemaError(f"column '{name}': unknown keys {sorted(unknown)} for a {ctype} column; "
                          f"allowed: {sorted(_COLUMN_KEYS[ctype])}")
    role = spec.get("role")
    if ctype == "datetime":
        from .dates import datetime_from_dict

        return datetime_from_dict(name, spec)
    if ctype == "time":
        from .dates import time_from_dict

        return time_from_dict(name, spec)
    if ctype == "numeric":
        for k in ("lower", "upper"):
            if k not in spec:
                raise SchemaError(f"column '{name}': a numeric column needs '{k}' (a public bound)")
        return NumericColumn(
            name=name,
            lower=spec["lower"],
            upper=spec["upper"],
            integer=bool(spec.get("integer", False)),
            role=role,
            step=spec.get("step"),
            missing=spec.get("missing"),
            na_values=spec.get("na_values", ()),
        )
    cats = spec.get("categories")
    if not isinstance(cats, (list, tuple)):
        raise SchemaError(f"column '{name}': a categorical column needs a 'categories' list")
    return CategoricalColumn(
        name=name,
        categories=tuple(cats),
        role=role,
        missing=spec.get("missing"),
        taxonomy=spec.get("taxonomy"),
        other=spec.get("other"),
        na_values=spec.get("na_values", ()),
    )


def _yaml_problem(exc) -> str:
    """A YAML error as ``what at line L, column C`` (1-based, where the parser stopped)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return what + (f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "")


def _looks_like_table(path: Path) -> bool:
    return path.name.lower().endswith((".csv", ".gz", ".parquet", ".pq", ".tsv"))


def _not_a_schema(path: Path) -> str:
    """Why a file is not a schema; a table given in its place (INPUT and the schema swapped) is named as such."""
    if _looks_like_table(path):
        return f"give the table as INPUT and the schema (YAML/JSON) with {option('schema=...', '--schema')}"
    return "a schema is a YAML/JSON mapping with a 'columns' key"
