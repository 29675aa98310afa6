"""From a schema and a mechanism name to a configured mechanism: the one place where public
schema facts become mechanism parameters, and where the privacy parameters are checked.

Public facts passed to every mechanism whose constructor accepts them (explicit
parameters win): ``n_classes`` (the label's declared level count), ``row_norm_bound``
(the schema's), ``public_data`` given as a file or DataFrame (encoded with the release's
encoder), plus whatever the mechanism's :meth:`~privrelease.mechanisms.base.Mechanism.schema_params`
hook adds (e.g. taxonomy trees). Nothing here reads the private data.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine import RecordMap
from ..errors import InputDataError, ParameterError, SchemaError, WeakPrivacyWarning, option
from ..mechanisms import Mechanism, get_mechanism
from ..dp.costs import PrivacyCost, check_delta, check_epsilon
from ..schema import Encoder, Schema
from ..schema.calendar import calendar_parts
from ..schema.constraints import ConstraintSet
from .advice import warn_public

DEFAULT_MECHANISM = "gauss-copula"
MIN_RECORDS = 2
EPSILON_WARN_ABOVE = 10.0
DEFAULT_DELTA_CAP = 1e-5


def default_delta(n: int) -> float:
    """The delta of an (epsilon, delta)-DP release when none is given: ``min(1e-5, 1/(10 n))``.

    delta bounds the probability of a total failure of the guarantee; with n records it
    must be well below ``1/n`` (a mechanism publishing one random record is (0, 1/n)-DP),
    so the default is ten times smaller than ``1/n`` and never above 1e-5.
    """
    return min(DEFAULT_DELTA_CAP, 1.0 / (10.0 * max(int(n), 1)))


def default_total_delta(n: int) -> float:
    """The total delta a ledger budget gets when only a total epsilon is declared: room for ten
    releases at :func:`default_delta`, i.e. ``min(1e-4, 1/n)``."""
    return 10.0 * default_delta(n)


def epsilon_warning(epsilon) -> str | None:
    """The warning a large (finite) epsilon deserves, or None."""
    if isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and epsilon > EPSILON_WARN_ABOVE:
        return (f"epsilon = {epsilon:g} is above {EPSILON_WARN_ABOVE:g}: the guarantee is very weak (an output "
                f"may be up to e^{epsilon:g} times more likely on one of two neighbouring tables)")
    return None


def check_release_privacy(cls, epsilon, delta, n: int) -> tuple[float | None, float | None, str | None]:
    """Validate (epsilon, delta) of a release of ``n`` records; return them and how delta was chosen.

    Refuses a non-finite epsilon (a release without noise is not a private release), a
    delta >= 1/n, and warns (:class:`~privrelease.errors.WeakPrivacyWarning`) above epsilon 10.
    Mechanisms without epsilon (distributional ones) pass ``epsilon=None``.
    """
    if epsilon is None and cls.guarantee != "distributional":
        raise ParameterError(f"epsilon is required ({option('epsilon=...', '--epsilon')}, a finite number > 0): "
                             f"mechanism '{cls.name}' spends it")
    if epsilon is not None:
        if isinstance(epsilon, (int, float)) and epsilon == float("inf"):
            raise ParameterError("epsilon must be finite: epsilon = inf would release the data without noise")
        epsilon = check_epsilon(epsilon, allow_inf=False)
        msg = epsilon_warning(epsilon)
        if msg:
            warnings.warn(msg, WeakPrivacyWarning, stacklevel=3)
    source = None
    if delta is None and cls.uses_delta and "delta" in _accepted(cls):
        delta, source = default_delta(n), f"default min(1e-5, 1/(10 n)) with the public n = {n}"
    elif delta is not None:
        delta = check_delta(delta)
        source = "given"
    if delta is not None and delta > 0 and delta >= 1.0 / n:
        raise ParameterError(f"delta = {delta:g} is >= 1/n = {1.0 / n:.3g} for n = {n} records: such a release may "
                             f"publish a whole record; use delta well below 1/n (default min(1e-5, 1/(10 n)))")
    return epsilon, delta, source


def _accepted(cls) -> list[str]:
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def build_mechanism(name: str, epsilon, delta=None, rng=None, domain=None, **params) -> Mechanism:
    """Instantiate a registered mechanism, refusing unknown parameters with the valid list."""
    cls = get_mechanism(name)
    accepted = _accepted(cls)
    kwargs = dict(params)
    if "epsilon" in accepted:
        kwargs["epsilon"] = check_epsilon(epsilon)
    elif epsilon is not None:
        raise ParameterError(f"mechanism '{name}' takes no epsilon (its guarantee is {cls.guarantee})")
    if delta is not None:
        if "delta" not in accepted:
            raise ParameterError(f"mechanism '{name}' takes no delta (it is {cls.guarantee})")
        kwargs["delta"] = check_delta(delta)
    if "rng" in accepted:
        kwargs["rng"] = rng
    if "domain" in accepted:
        kwargs["domain"] = domain
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        user = [p for p in accepted if p not in ("rng", "domain", "epsilon", "delta")]
        raise ParameterError(f"mechanism '{name}' has no parameter(s) {unknown}; its parameters: {user}")
    return cls(**kwargs)


def encoders(schema: Schema, cls) -> tuple[Encoder, Encoder | None]:
    """Feature encoder and the label (or regression target) encoder the mechanism needs."""
    if not isinstance(schema, Schema):
        raise SchemaError(f"schema must be a privrelease.Schema, got {type(schema).__name__}")
    caps = cls.capabilities
    if caps.needs_target:
        column, what = schema.target, "a regression target: mark a numeric column with 'role: target'"
    elif cls.supervised or (caps.uses_label and schema.label is not None):
        column, what = schema.label, "a label column: mark one with 'role: label'"
    else:
        return Encoder(schema), None
    if column is None:
        raise SchemaError(f"mechanism '{cls.name}' needs {what}")
    check_label_levels(column)
    feats = [c.name for c in schema.columns if c.name != column.name]
    if not feats:
        raise SchemaError(f"the schema has no feature columns besides '{column.name}'")
    lab = Encoder(schema, [column.name])
    lab.position = schema.names.index(column.name)  # where decoded outputs put it: the schema's order
    return Encoder(schema, feats), lab


def release_encoders(schema: Schema, cls, params: dict) -> tuple[Encoder, Encoder | None]:
    """The encoders of what the mechanism releases: the schema's columns, or, when the schema states
    constraints, their reparametrised columns (the features' encoder carries the constraints, which
    map released records back to the table's columns)."""
    constraints = check_constraints(cls, schema, params)
    enc, lab = encoders(constraints.mechanism_schema() if constraints else schema, cls)
    enc.constraints = constraints
    return enc, lab


def check_label_levels(column) -> None:
    """Refuse a label whose declared levels, its ``other`` level aside, are fewer than two: every
    released label would be the same (e.g. a DP draft whose budget kept no level of the label)."""
    if column.kind != "categorical":
        return
    real = [c for c in column.categories if c != column.other]
    if len(real) < 2:
        raise SchemaError(f"label column '{column.name}' declares {len(real)} level(s) besides its 'other' level "
                          f"{[column.other] if column.other else []}: a release needs at least two classes; declare "
                          f"the label's levels in the schema (or draft it with more epsilon)")


def schema_facts(cls, schema: Schema, enc: Encoder, lab: Encoder | None, params: dict) -> dict:
    """Every parameter derived from public schema facts; explicit ``params`` win."""
    accepted = _accepted(cls)
    facts = {}
    if "n_classes" in accepted and lab is not None and lab.columns[0].kind == "categorical":
        facts["n_classes"] = len(lab.columns[0].categories)
    if "row_norm_bound" in accepted and schema.row_norm_bound is not None:
        facts["row_norm_bound"] = float(schema.row_norm_bound)
    facts.update(cls.schema_params(enc, lab))
    out = {**facts, **params}
    if out.get("public_data") is not None:
        out["public_data"] = _public_table(out["public_data"], enc, schema)
    return out


def _public_table(value, enc: Encoder, schema: Schema):
    """A public table (a CSV/Parquet path or a DataFrame in the schema's columns) encoded with the
    release's encoder, clipped to the declared bounds. Public input: no budget."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (str, Path)):
        from ..io import read_table

        path = Path(value)
        if not path.exists():
            raise InputDataError(f"public data file {path} does not exist")
        value = read_table(path, schema)
    if isinstance(value, pd.DataFrame):
        return enc.encode(value, on_out_of_bounds="clip").X
    return value


@dataclass
class Plan:
    """A configured release: the mechanism, its encoders and the per-record map every engine runs."""

    mechanism: Mechanism
    schema: Schema
    encoder: Encoder
    label_encoder: Encoder | None
    record_map: RecordMap
    n: int
    delta_source: str | None

    @property
    def declared_cost(self) -> PrivacyCost:
        """The cost the release will spend, known before it touches the data."""
        eps = getattr(self.mechanism, "epsilon", None)
        if eps is None:
            raise ParameterError("a ledger can only record finite-epsilon releases (this mechanism has no epsilon)")
        return PrivacyCost(float(eps), float(getattr(self.mechanism, "delta", 0.0) or 0.0))


def construct(schema: Schema, mechanism: str, epsilon, delta, rng, n: int, on_out_of_bounds: str = "clip",
              **params) -> Plan:
    """Map the schema's public facts and the privacy parameters to a configured mechanism.

    ``n`` is the public number of records (the mechanisms treat n as public).
    """
    cls = get_mechanism(mechanism)
    enc, lab = release_encoders(schema, cls, params)
    constraints = enc.constraints
    check_missing_numeric(cls, schema)
    if not schema.n_public:
        raise SchemaError("n_public: false is not supported: every mechanism divides by n and releases n-dependent "
                          "sizes, so n is treated as public (replace-one neighbours); remove 'n_public: false'")
    if on_out_of_bounds not in ("clip", "error"):
        raise ParameterError(f"{option('on_out_of_bounds', '--on-out-of-bounds')} must be 'clip' or 'error', got "
                             f"{on_out_of_bounds!r}")
    check_n(n, enc.width, cls)
    epsilon, delta, delta_source = check_release_privacy(cls, epsilon, delta, n)
    warn_public(schema, n, epsilon)  # a budget too small for n and the columns, too many label levels
    params = schema_facts(cls, schema, enc, lab, params)
    mech = build_mechanism(mechanism, epsilon, delta, rng, enc.domain, **params)
    n_classes = params.get("n_classes") if lab is not None and lab.columns[0].kind == "categorical" else None
    rmap = RecordMap(enc, lab, on_out_of_bounds, mech.record_preprocessing(), n_classes, constraints=constraints)
    return Plan(mech, schema, enc, lab, rmap, int(n), delta_source)


def check_constraints(cls, schema: Schema, params: dict) -> ConstraintSet:
    """The schema's constraints, refused for a mechanism whose output is not records in the schema's
    columns (they are honoured by mapping released records back to those columns)."""
    import inspect

    declared = inspect.signature(cls.__init__).parameters.get("output_space")  # the estimator's default
    space = params.get("output_space", "original" if declared is None else declared.default)
    records = cls.capabilities.output_space == "schema" and space == "original"
    if schema.constraints and not records:
        raise SchemaError(f"the schema states constraints, which mechanism '{cls.name}' cannot honour: its output "
                          f"is not records in the schema's columns; use a mechanism that releases records (the "
                          f"default), or remove 'constraints'")
    parts = calendar_parts(schema) if records and cls.capabilities.calendar_parts else ()  # day, time of day
    return ConstraintSet(schema, schema.constraints + parts)


def check_missing_numeric(cls, schema: Schema) -> None:
    """Refuse a numeric column with ``missing: allowed`` for a mechanism that does not declare
    ``capabilities.missing_numeric``, naming the mechanisms that can release it."""
    if cls.capabilities.missing_numeric:
        return
    cols = [c.name for c in schema.numeric if c.missing == "allowed"]
    if not cols:
        return
    from ..mechanisms import list_mechanisms

    able = [m.name for m in list_mechanisms() if m.capabilities.missing_numeric]
    fix = "remove 'missing: allowed' and drop or impute the missing values first"
    raise SchemaError(f"column '{cols[0]}' declares 'missing: allowed', which mechanism '{cls.name}' cannot "
                      f"release; " + (f"use one that can ({', '.join(able)}), or {fix}" if able else
                                      f"no mechanism here can yet: {fix}"))


def check_n(n: int, p: int, cls):
    """Refuse too few records (and n <= p for mechanisms that estimate a covariance)."""
    if n == 0:
        raise InputDataError("the input has no records")
    if n < MIN_RECORDS:
        raise InputDataError(f"the input has {n} record; a release needs at least {MIN_RECORDS}")
    if cls.capabilities.estimates_covariance and n <= p:
        raise InputDataError(f"the input has n = {n} records but the encoded table has p = {p} columns; "
                             f"mechanism '{cls.name}' estimates a p x p covariance and needs n > p")


def user_params(mech: Mechanism) -> dict:
    """The mechanism's parameters as a user set them (for the certificate and the ledger)."""
    return {k: v for k, v in mech.get_params(deep=False).items() if k not in ("rng", "domain")}


__all__ = ["DEFAULT_MECHANISM", "MIN_RECORDS", "Plan", "construct", "build_mechanism", "default_delta",
           "release_encoders",
           "default_total_delta", "epsilon_warning", "check_n", "user_params"]
