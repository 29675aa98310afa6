"""Public constraints of a table: rules that hold in every row, stated in the schema.

A custodian states rules that every real row obeys and that are public knowledge (a sub-grade
determines its grade; a balance never exceeds the loan amount; a total is the sum of its parts; an
identifier never repeats). Each rule is honoured by a public *reparametrisation* of the records
before the mechanism sees them (a map applied to each record on its own, with public parameters
only, so it changes neither the neighbouring relation nor any sensitivity) and by post-processing of
the released records (docs/derivations.md, "public constraints").

- ``hierarchy``: ``parent = map[child]``. The mechanism releases the child; the parent is derived
  from it after the release. The parent inherits every relation the child keeps.
- ``combinations``: a public list of the allowed combinations of several categorical columns. The
  mechanism releases one categorical column whose levels are the allowed combinations; it is split
  back into its columns after the release.
- ``inequality``: ``low <= high`` (``low < high`` when strict; with a public ``gap``, ``low + gap <=
  high``). The mechanism releases both columns; a released row that breaks the rule has its two
  values swapped, and where that is not enough (a gap), ``high`` is raised to ``low + gap``. Chains
  (``a <= b <= c``) are enforced in order. (Releasing the gap ``high - low`` instead, a
  reparametrisation, was measured worse: docs/constraints.md.)
- ``formula``: a column computed from others by a public expression (sums, products, ratios, logs,
  differences of dates in their unit). It is left out of the release and recomputed from the
  released columns, so it holds exactly (rounded to the column's step when it declares one).
- ``unique``: an identifier, left out of the release and released as fresh distinct values
  ``<prefix><k>`` (``k`` = 1, 2, ...), never read from the data: the prefix is the public namespace
  that keeps them apart from the real identifiers (default ``syn-``).

An input row that breaks a rule is counted in the private diagnostics (``--on-out-of-bounds
clip``, the default) or refused in one line (``error``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..errors import InputDataError, SchemaError, shorten
from .calendar import CalendarParts
from .constraint_kinds import (_KEYS, KINDS, Combinations, Constraint, Formula, Hierarchy, Inequality, Unique, _err,
                               _name)

# ---- parsing --------------------------------------------------------------------------------

def parse_constraints(raw: Any) -> tuple:
    """The constraints of a schema's ``constraints:`` list (each checked for its keys here, against the
    columns by :func:`validate_constraints`)."""
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise SchemaError(f"'constraints' must be a list, got {type(raw).__name__}")
    return tuple(_parse_one(i, spec) for i, spec in enumerate(raw))


def _parse_one(i: int, spec) -> Constraint:
    if not isinstance(spec, Mapping):
        raise _err(i, spec, f"must be a mapping with a 'type', got {spec!r}")
    kind = spec.get("type")
    if kind not in KINDS:
        raise _err(i, spec, f"'type' must be one of {', '.join(KINDS)}, got {shorten(kind)}")
    needed, allowed = _KEYS[kind]
    if set(spec) - allowed:
        raise _err(i, spec, f"unknown keys {sorted(set(spec) - allowed)}; allowed: {sorted(allowed)}")
    if needed - set(spec):
        raise _err(i, spec, f"needs {', '.join(sorted(needed - set(spec)))}")
    try:
        if kind == "hierarchy":
            m = spec["map"]
            if not isinstance(m, Mapping) or not m:
                raise SchemaError("'map' must be a mapping of child level -> parent level")
            return Hierarchy(_name(spec["child"]), _name(spec["parent"]),
                             tuple((str(k), str(v)) for k, v in m.items()))
        if kind == "combinations":
            cols, allowed = spec["columns"], spec["allowed"]
            if not isinstance(cols, (list, tuple)) or not isinstance(allowed, (list, tuple)) or not allowed or \
                    not all(isinstance(a, (list, tuple)) for a in allowed):
                raise SchemaError("'columns' must be a list of columns and 'allowed' a list of lists of levels")
            return Combinations(tuple(map(_name, cols)), tuple(tuple(str(v) for v in a) for a in allowed))
        if kind == "inequality":
            strict = spec.get("strict", False)
            if not isinstance(strict, bool):
                raise SchemaError(f"'strict' must be true or false, got {strict!r}")
            return Inequality(_name(spec["low"]), _name(spec["high"]), strict, spec.get("gap", 0.0))
        if kind == "formula":
            if not isinstance(spec["expression"], str):
                raise SchemaError("'expression' must be text")
            return Formula(_name(spec["column"]), spec["expression"])
        return Unique(_name(spec["column"]), spec.get("prefix", "syn-"))
    except SchemaError as exc:
        raise _err(i, spec, str(exc)) from None


def validate_constraints(constraints: tuple, schema) -> None:
    """Check each constraint against the schema's columns, and that they compose: a column is derived
    by one constraint at most, a derived column is read by no other constraint but a formula (formulas
    are computed last, from the other constraints' final values), and inequalities form no cycle; in a
    chain ``a <= b <= c``, ``b``'s upper bound plus the gap is at most ``c``'s (so that enforcing the
    second never moves ``b``)."""
    for i, c in enumerate(constraints):
        try:
            c.validate(schema)
        except SchemaError as exc:
            raise _err(i, c.to_dict(), str(exc)) from None
    for i, c in enumerate(constraints):
        for j, d in enumerate(constraints):
            if i == j:
                continue
            clash = set(c.derived) & set(d.derived)
            read = set(c.derived) & (set(d.reads) - set(d.derived))
            if read and isinstance(d, Formula) and not isinstance(c, Formula):
                read = set()
            if clash or read:
                name = sorted(clash | read)[0]
                raise _err(j, d.to_dict(), f"column {name} is derived by constraint {i + 1}; a derived column "
                                           f"can be read by a formula only")
            if isinstance(c, Inequality) and isinstance(d, Inequality) and d.low == c.high:
                low, high = schema[d.low], schema[d.high]
                if low.upper + d.min_gap(low) > high.upper:
                    raise _err(j, d.to_dict(), f"in a chain of inequalities {d.low}'s upper bound plus the gap "
                                               f"must be at most {d.high}'s ({high.upper:g})")
    _chain_order(constraints)


def _chain_order(constraints: tuple) -> list:
    """The inequalities in an order where each ``low`` comes after the rules whose ``high`` it is (a
    cycle is refused in one line)."""
    todo = [c for c in constraints if isinstance(c, Inequality)]
    order = []
    while todo:
        ready = [c for c in todo if not any(d.high == c.low for d in todo if d is not c)]
        if not ready:
            raise SchemaError(f"the inequalities {', '.join(c.label for c in todo)} form a cycle")
        order += ready
        todo = [c for c in todo if c not in ready]
    return order


# ---- applying them --------------------------------------------------------------------------

@dataclass(frozen=True)
class ConstraintSet:
    """The schema's constraints as one reparametrisation (picklable: it runs on Dask workers).

    ``schema`` is the full schema (the table's columns); :meth:`mechanism_schema` is what the
    mechanism releases; :meth:`prepare` maps input records to it, :meth:`complete` maps released
    records back."""

    schema: Any
    constraints: tuple

    def __bool__(self) -> bool:
        return bool(self.constraints)

    @property
    def rules(self) -> tuple:
        """The stated rules (the constraints without the date columns' calendar parts)."""
        return tuple(c for c in self.constraints if not isinstance(c, CalendarParts))

    @property
    def calendar(self) -> tuple:
        """The date columns' calendar parts (:mod:`.calendar`)."""
        return tuple(c for c in self.constraints if isinstance(c, CalendarParts))

    @property
    def split_dates(self) -> tuple:
        """The date columns released as their calendar parts."""
        return tuple(c.column for c in self.calendar)

    @property
    def derived(self) -> set:
        return {n for c in self.constraints for n in c.derived}

    @property
    def inputs(self) -> set:
        """Columns of the input that a constraint reads or replaces (not left out with a warning)."""
        return {n for c in self.constraints for n in (*c.reads, *c.derived)}

    def mechanism_schema(self):
        """The schema of what the mechanism releases: derived columns out, joint and gap columns in."""
        cols = []
        for col in self.schema.columns:
            added = []
            for c in self.constraints:
                if isinstance(c, Combinations) and col.name == c.columns[0]:
                    added.append(c.joint_column(self.schema))
                if isinstance(c, CalendarParts) and col.name == c.column:
                    added += c.part_columns(self.schema)
            cols += added if added else ([] if col.name in self.derived else [col])
        return dataclasses.replace(self.schema, columns=tuple(cols), constraints=())

    def violations(self, df: pd.DataFrame) -> dict:
        """Rows of ``df`` that break each constraint (by its label), for the private diagnostics."""
        out = {}
        for c in self.rules:
            if isinstance(c, Unique) or not all(n in df.columns for n in c.reads):
                continue
            bad = int((~self._holds(c, df)).sum())
            if bad:
                out[f"constraint {c.label}"] = bad
        return out

    def _holds(self, c, df: pd.DataFrame) -> np.ndarray:
        if isinstance(c, (Inequality, Formula)):
            return c.holds(df, self.schema)
        return c.holds(df)

    def shares(self, df: pd.DataFrame) -> dict:
        """Share of the rows of ``df`` that hold each constraint (NaN when a column is absent)."""
        out = {}
        for c in self.rules:
            names = c.reads if not isinstance(c, Unique) else (c.column,)
            ok = all(n in df.columns for n in names) and len(df)
            out[c.label] = float(self._holds(c, df).mean()) if ok else float("nan")
        return out

    def prepare(self, df: pd.DataFrame, on_violation: str = "clip", row_offset: int = 0) -> tuple[pd.DataFrame, dict]:
        """Input records in the mechanism's columns, and the rows that broke each constraint
        (refused in one line with ``on_violation="error"``)."""
        counts = self.violations(df)
        if counts and on_violation == "error":
            what, k = next(iter(counts.items()))
            raise InputDataError(f"{k} row(s) break the declared {what} (the rule is public; the rows are not: "
                                 f"fix them, or release with --on-out-of-bounds clip to count them privately)")
        df = df.copy()
        for c in self.constraints:
            if isinstance(c, Combinations):
                c.prepare(df)
        for c in self.constraints:  # last: a rule's check reads the date itself
            if isinstance(c, CalendarParts):
                clipped = c.prepare(df, self.schema, on_violation, row_offset)
                if clipped:
                    counts[c.column] = clipped
        return df, counts

    def complete(self, out: pd.DataFrame, start: int = 0) -> pd.DataFrame:
        """Released records in the table's columns, every constraint holding; ``start`` is the index of
        the first row in the whole release (numbering fresh identifiers)."""
        out = out.copy()
        for c in self.constraints:  # first: the rules below read the dates
            if isinstance(c, CalendarParts):
                c.complete(out, self.schema)
        for c in self.constraints:
            if isinstance(c, (Combinations, Hierarchy, Unique)):
                c.complete(out, start)
        chain = _chain_order(self.constraints)
        for c in chain:  # a row the mechanism got the wrong way round: its two values swapped
            c.swap(out, self.schema)
        for c in chain:  # then (gaps, values outside the other's bounds) high raised to low + gap
            c.enforce(out, self.schema)
        for c in self.constraints:
            if isinstance(c, Formula):
                c.complete(out, start, self.schema)
        order = [n for n in self.schema.names if n in out.columns]
        extra = [n for n in out.columns if n not in order]
        ids = [c.column for c in self.constraints if isinstance(c, Unique) and c.column not in self.schema.names]
        return out[ids + order + [n for n in extra if n not in ids]]


