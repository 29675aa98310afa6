"""The kinds of public constraint (:mod:`privrelease.schema.constraints` states what each means and
how it is honoured): each knows its columns, checks itself against a schema, says which rows of a
table hold it, and maps released records back to the table's columns."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ..errors import SchemaError, shorten, shorten_list

KINDS = ("hierarchy", "combinations", "inequality", "formula", "unique")
_KEYS = {
    "hierarchy": ({"type", "child", "parent", "map"}, {"type", "child", "parent", "map"}),
    "combinations": ({"type", "columns", "allowed"}, {"type", "columns", "allowed"}),
    "inequality": ({"type", "low", "high"}, {"type", "low", "high", "strict", "gap"}),
    "formula": ({"type", "column", "expression"}, {"type", "column", "expression"}),
    "unique": ({"type", "column"}, {"type", "column", "prefix"}),
}
_SEP = "\x1f"  # joins the levels of an allowed combination into one level (a control character)
_FUNCTIONS = {"log": np.log, "log1p": np.log1p, "log10": np.log10, "log2": np.log2, "exp": np.exp,
              "expm1": np.expm1, "sqrt": np.sqrt, "abs": np.abs}
_OPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power}


def _err(i: int, spec, text: str) -> SchemaError:
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    return SchemaError(f"constraint {i + 1} ({kind or 'no type'}): {text}")


# ---- the kinds ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hierarchy:
    """``parent = map[child]`` in every row (a coarser categorical column determined by a finer one)."""

    child: str
    parent: str
    map: tuple  # ((child level, parent level), ...)
    type: str = "hierarchy"

    @property
    def label(self) -> str:
        return f"hierarchy {self.child} -> {self.parent}"

    @property
    def reads(self) -> tuple:
        return (self.child, self.parent)

    @property
    def derived(self) -> tuple:
        return (self.parent,)

    def to_dict(self) -> dict:
        return {"type": self.type, "child": self.child, "parent": self.parent, "map": dict(self.map)}

    def validate(self, schema) -> None:
        child, parent = _categorical(schema, self.child, "child"), _categorical(schema, self.parent, "parent")
        mapping = dict(self.map)
        unmapped = [c for c in child.categories if c not in mapping]
        if unmapped:
            raise SchemaError(f"maps no parent for the {self.child} level(s) {shorten_list(unmapped)}")
        strays = sorted({p for p in mapping.values() if p not in parent.categories})
        if strays:
            raise SchemaError(f"maps to level(s) {shorten_list(strays)} that {self.parent} does not declare")
        if parent.role == "label":
            raise SchemaError(f"the parent {self.parent} is the label: make the child the label, or state no "
                              f"hierarchy")

    def holds(self, df: pd.DataFrame) -> np.ndarray:
        want = df[self.child].astype("string").map(dict(self.map))
        return (want == df[self.parent].astype("string")).fillna(False).to_numpy(dtype=bool)

    def complete(self, out: pd.DataFrame, start: int) -> None:
        out[self.parent] = out[self.child].astype(object).map(dict(self.map))


@dataclass(frozen=True)
class Combinations:
    """Only the listed combinations of several categorical columns occur."""

    columns: tuple
    allowed: tuple  # tuples of levels, one per column
    type: str = "combinations"

    @property
    def label(self) -> str:
        return f"combinations of {', '.join(self.columns)}"

    @property
    def joint(self) -> str:
        return "+".join(self.columns)

    @property
    def reads(self) -> tuple:
        return self.columns

    @property
    def derived(self) -> tuple:
        return self.columns

    def to_dict(self) -> dict:
        return {"type": self.type, "columns": list(self.columns), "allowed": [list(a) for a in self.allowed]}

    def validate(self, schema) -> None:
        cols = [_categorical(schema, c, "column") for c in self.columns]
        if len(self.columns) < 2 or len(set(self.columns)) != len(self.columns):
            raise SchemaError("'columns' must name two or more different categorical columns")
        if any(c.role == "label" for c in cols):
            raise SchemaError("a label cannot be part of a combination; state the others' combinations only")
        if self.joint in schema.names:
            raise SchemaError(f"the joint column's name {self.joint} is already a column")
        for combo in self.allowed:
            if len(combo) != len(cols):
                raise SchemaError(f"the combination {list(combo)} has {len(combo)} levels for {len(cols)} columns")
            for level, col in zip(combo, cols):
                if level not in col.categories:
                    raise SchemaError(f"level {shorten(level)} of {list(combo)} is not declared by {col.name}")
        if len(set(self.allowed)) != len(self.allowed):
            raise SchemaError("a combination is listed twice")

    def joint_column(self, schema):
        from .schema import CategoricalColumn

        return CategoricalColumn(self.joint, tuple(_SEP.join(a) for a in self.allowed))

    def holds(self, df: pd.DataFrame) -> np.ndarray:
        return self._joined(df).isin({_SEP.join(a) for a in self.allowed}).to_numpy(dtype=bool)

    def _joined(self, df: pd.DataFrame) -> pd.Series:
        parts = [df[c].astype("string").fillna("") for c in self.columns]
        out = parts[0]
        for p in parts[1:]:
            out = out + _SEP + p
        return out

    def prepare(self, df: pd.DataFrame) -> None:
        """The joint column of the input; a combination not allowed goes to the allowed one that agrees
        with it on the most columns (the first listed on a tie); the caller has counted it."""
        joined = self._joined(df)
        ok = joined.isin({_SEP.join(a) for a in self.allowed}).to_numpy(dtype=bool)
        if not ok.all():
            rows = np.column_stack([df[c].astype("string").fillna("").to_numpy(dtype=object) for c in self.columns])
            allowed = np.array(self.allowed, dtype=object)
            fixed = joined.to_numpy(dtype=object).copy()
            for i in np.flatnonzero(~ok):
                best = int(np.argmax((allowed == rows[i]).sum(axis=1)))
                fixed[i] = _SEP.join(self.allowed[best])
            joined = pd.Series(fixed, index=df.index)
        df[self.joint] = joined.astype(object)

    def complete(self, out: pd.DataFrame, start: int) -> None:
        split = out.pop(self.joint).astype(str).str.split(_SEP, expand=True, regex=False)
        for j, c in enumerate(self.columns):
            out[c] = split[j].to_numpy(dtype=object)


@dataclass(frozen=True)
class Inequality:
    """``low + gap <= high`` (``<`` when strict) in every row, numbers or dates of the same unit.

    The mechanism releases both columns as they are; after the release, a row that breaks the rule
    has its two values swapped (each kept within its own column's bounds), and a row that still
    breaks it (a gap, or values that do not fit the other column's bounds) gets ``high = low + gap``
    on ``high``'s grid (measured against reparametrising ``high`` as the gap: docs/constraints.md)."""

    low: str
    high: str
    strict: bool = False
    gap: float = 0.0
    type: str = "inequality"

    @property
    def label(self) -> str:
        g = f" + {self.gap:g}" if self.gap else ""
        return f"{self.low}{g} {'<' if self.strict else '<='} {self.high}"

    @property
    def reads(self) -> tuple:
        return (self.low, self.high)

    @property
    def derived(self) -> tuple:
        return ()

    def to_dict(self) -> dict:
        d = {"type": self.type, "low": self.low, "high": self.high}
        if self.strict:
            d["strict"] = True
        if self.gap:
            d["gap"] = self.gap
        return d

    def validate(self, schema) -> None:
        from .dates import DatetimeColumn

        low, high = _numeric(schema, self.low, "low"), _numeric(schema, self.high, "high")
        if isinstance(low, DatetimeColumn) != isinstance(high, DatetimeColumn) or (
                isinstance(low, DatetimeColumn) and low.unit != high.unit):
            raise SchemaError(f"{self.low} and {self.high} must both be numbers, or dates of the same step")
        if not (isinstance(self.gap, (int, float)) and not isinstance(self.gap, bool) and math.isfinite(self.gap)
                and self.gap >= 0):
            raise SchemaError(f"'gap' must be a number >= 0, got {self.gap!r}")
        if not low.lower + self.min_gap(low) <= high.upper:
            raise SchemaError(f"no row can hold it within the bounds: {self.low} >= {low.lower:g} and {self.high} "
                              f"<= {high.upper:g}")

    def min_gap(self, low) -> float:
        unit = low.resolution or 0.0
        return float(self.gap) + (unit if self.strict and unit else 0.0)

    def holds(self, df: pd.DataFrame, schema) -> np.ndarray:
        low, high = _values(schema, self.low, df), _values(schema, self.high, df)
        both = ~(np.isnan(low) | np.isnan(high))
        ok = np.ones(len(df), dtype=bool)
        d = high[both] - low[both] - self.gap
        ok[both] = d > 0 if self.strict else d >= -1e-9 * np.maximum(1.0, np.abs(high[both]))
        return ok

    def swap(self, out: pd.DataFrame, schema) -> None:
        """Swap the two values of each row that breaks the rule (each clipped to its own column's bounds)."""
        low_c, high_c = schema[self.low], schema[self.high]
        low, high = _values(schema, self.low, out), _values(schema, self.high, out)
        bad = low + self.min_gap(low_c) > high + 1e-9 * np.maximum(1.0, np.abs(high))
        if bad.any():
            low[bad], high[bad] = np.clip(high[bad], low_c.lower, low_c.upper), np.clip(low[bad], high_c.lower,
                                                                                       high_c.upper)
            _write(out, low_c, low)
            _write(out, high_c, high)

    def enforce(self, out: pd.DataFrame, schema) -> None:
        """``high = max(high, low + gap)`` on high's grid, at most high's upper bound; where low is so
        near that bound that no ``high`` fits, low moves down to ``high.upper - gap`` on its grid."""
        low_c, high_c = schema[self.low], schema[self.high]
        need = self.min_gap(low_c)
        low, high = _values(schema, self.low, out), _values(schema, self.high, out)
        top = _grid_down(high_c, high_c.upper)
        short = low + need > top + 1e-9 * max(1.0, abs(top))
        if short.any():
            low[short] = _grid_down(low_c, top - need)
            _write(out, low_c, low)
        up = low + need > high + 1e-9 * np.maximum(1.0, np.abs(high))
        if up.any():
            high[up] = np.minimum(_grid_up(high_c, low[up] + need), top)
            _write(out, high_c, high)


@dataclass(frozen=True)
class Formula:
    """``column = expression`` in every row (a public expression of other numeric or date columns)."""

    column: str
    expression: str
    type: str = "formula"

    @property
    def label(self) -> str:
        return f"{self.column} = {self.expression}"

    @property
    def names(self) -> tuple:
        return tuple(sorted({n.id for n in ast.walk(ast.parse(self.expression, mode="eval"))
                             if isinstance(n, ast.Name) and n.id not in _FUNCTIONS}))

    @property
    def reads(self) -> tuple:
        return (self.column, *self.names)

    @property
    def derived(self) -> tuple:
        return (self.column,)

    def to_dict(self) -> dict:
        return {"type": self.type, "column": self.column, "expression": self.expression}

    def validate(self, schema) -> None:
        try:
            tree = ast.parse(self.expression, mode="eval")
        except SyntaxError:
            raise SchemaError(f"cannot read the expression {shorten(self.expression)}") from None
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
                    raise SchemaError(f"{shorten(ast.unparse(node))} is not one of the functions "
                                      f"{', '.join(_FUNCTIONS)}")
            elif not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Load,
                                       ast.USub, ast.UAdd, *_OPS)):
                raise SchemaError(f"the expression may use columns, numbers, + - * / ** and "
                                  f"{', '.join(_FUNCTIONS)}; {shorten(ast.unparse(node))} is none of them")
            if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
                raise SchemaError(f"{node.value!r} in the expression is not a number")
        col = _numeric(schema, self.column, "column")
        if _is_date(col):
            raise SchemaError(f"{self.column} is a date; a formula computes a number (a difference of dates is "
                              f"a number of their steps)")
        if col.role not in (None, "feature"):
            raise SchemaError(f"{self.column} is the target; a formula column is computed, not released")
        for n in self.names:
            if n == self.column:
                raise SchemaError(f"{self.column} appears in its own expression")
            _numeric(schema, n, "a column of the expression")

    def evaluate(self, df: pd.DataFrame, schema) -> np.ndarray:
        tree = ast.parse(self.expression, mode="eval").body

        def ev(node):
            if isinstance(node, ast.BinOp):
                return _OPS[type(node.op)](ev(node.left), ev(node.right))
            if isinstance(node, ast.UnaryOp):
                return -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
            if isinstance(node, ast.Call):
                return _FUNCTIONS[node.func.id](ev(node.args[0]))
            if isinstance(node, ast.Name):
                return _values(schema, node.id, df)
            return float(node.value)

        with np.errstate(all="ignore"):
            v = np.asarray(ev(tree), dtype=np.float64) * np.ones(len(df))
        v[~np.isfinite(v)] = np.nan
        return v

    def holds(self, df: pd.DataFrame, schema) -> np.ndarray:
        want, have = self.evaluate(df, schema), _values(schema, self.column, df)
        step = schema[self.column].resolution or 0.0
        tol = np.maximum(step / 2 + 1e-9, 1e-9 * np.abs(want))
        return ((np.abs(have - want) <= tol) | (np.isnan(want) & np.isnan(have))).astype(bool)

    def complete(self, out: pd.DataFrame, start: int, schema) -> None:
        """The column from the released columns, at its step when it declares one (never clipped to
        its bounds: the rule wins over the bounds)."""
        from .precision import decimals

        c = schema[self.column]
        v = self.evaluate(out, schema)
        if c.resolution is not None:
            ok = np.isfinite(v)
            v[ok] = np.round(np.round(v[ok] / c.resolution) * c.resolution, decimals(c.resolution))
        if c.resolution is not None and float(c.resolution).is_integer():
            arr = pd.array(np.where(np.isnan(v), 0, v).astype(np.int64), dtype="Int64")
            arr[np.isnan(v)] = pd.NA
            out[self.column] = arr
        else:
            out[self.column] = v


@dataclass(frozen=True)
class Unique:
    """An identifier: released as fresh distinct values ``<prefix><k>`` that are never read from the data."""

    column: str
    prefix: str = "syn-"
    type: str = "unique"

    @property
    def label(self) -> str:
        return f"unique {self.column}"

    @property
    def reads(self) -> tuple:
        return ()

    @property
    def derived(self) -> tuple:
        return (self.column,)

    def to_dict(self) -> dict:
        d = {"type": self.type, "column": self.column}
        if self.prefix != "syn-":
            d["prefix"] = self.prefix
        return d

    def validate(self, schema) -> None:
        if not isinstance(self.prefix, str):
            raise SchemaError(f"'prefix' must be text, got {self.prefix!r}")
        if self.column in schema.names and schema[self.column].role not in (None, "feature"):
            raise SchemaError(f"{self.column} is the label or target; an identifier cannot be")

    def holds(self, df: pd.DataFrame) -> np.ndarray:
        s = df[self.column]
        return (~s.duplicated(keep=False) & s.notna()).to_numpy(dtype=bool)

    def complete(self, out: pd.DataFrame, start: int) -> None:
        out[self.column] = [f"{self.prefix}{start + i + 1}" for i in range(len(out))]


Constraint = Hierarchy | Combinations | Inequality | Formula | Unique


# ---- helpers ---------------------------------------------------------------------------------

def _name(v) -> str:
    if not isinstance(v, str) or not v:
        raise SchemaError(f"a column name must be non-empty text, got {v!r}")
    return v


def _column(schema, name: str, what: str, kind: str):
    """Column ``name`` of the schema, which must be of ``kind`` (``numeric`` covers dates)."""
    if name not in schema.names:
        raise SchemaError(f"{what} {name} is not a column of the schema")
    col = schema[name]
    if col.kind != kind:
        raise SchemaError(f"{what} {name} must be a " + ("categorical column" if kind == "categorical" else
                                                         "numeric or datetime column"))
    return col


def _categorical(schema, name: str, what: str):
    return _column(schema, name, what, "categorical")


def _numeric(schema, name: str, what: str):
    return _column(schema, name, what, "numeric")


def _is_date(c) -> bool:
    from .dates import DatetimeColumn

    return isinstance(c, DatetimeColumn)


def _values(schema, name: str, df: pd.DataFrame) -> np.ndarray:
    """A numeric or date column of ``df`` as floats in the units of its bounds (NaN where missing)."""
    from .encoding import numeric_values

    c = schema[name]
    s = df[name]
    if _is_date(c) and pd.api.types.is_numeric_dtype(s):  # already in units (as the evaluation reads dates)
        return s.to_numpy(dtype=np.float64, na_value=np.nan)
    from .encoding import read_missing

    return np.asarray(numeric_values(c, read_missing(s, schema, c)), dtype=np.float64)


def _grid_down(c, v):
    """``v`` rounded down to ``c``'s grid (unchanged without a step)."""
    r = c.resolution
    return v if r is None else np.floor(np.asarray(v, dtype=np.float64) / r + 1e-9) * r


def _grid_up(c, v):
    """``v`` rounded up to ``c``'s grid (unchanged without a step)."""
    r = c.resolution
    return v if r is None else np.ceil(np.asarray(v, dtype=np.float64) / r - 1e-9) * r


def _write(out: pd.DataFrame, c, v: np.ndarray) -> None:
    """Column ``c`` of ``out`` from values in the units of its bounds, written as the decoder writes it."""
    from .encoding import decode_numeric

    out[c.name] = decode_numeric(c, _unit_scale(c, v))


def _unit_scale(c, v: np.ndarray) -> np.ndarray:
    """Values in the units of ``c``'s bounds as the encoded coordinate :func:`decode_numeric` reads."""
    return (np.asarray(v, dtype=np.float64) - c.lower) / (c.upper - c.lower)
