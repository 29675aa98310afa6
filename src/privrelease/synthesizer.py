"""A DataFrame API in the convention of SDV, SmartNoise and diffprivlib: ``fit`` then ``sample``.

>>> from privrelease import Synthesizer
>>> from privrelease.datasets import load_example
>>> df, schema = load_example("adult")
>>> syn = Synthesizer(schema, epsilon=1.0, rng=0).fit(df[schema.names].head(2000))   # the default, gauss-copula
>>> out = syn.sample(5)
>>> list(out.columns) == schema.names, len(out), syn.certificate_.epsilon
(True, 5, 1.0)
"""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Mapping

import pandas as pd

from .errors import BudgetWarning, ParameterError, SchemaError
from .schema import Schema

#: Fitted mechanism attributes that hold exact facts of the private input (they feed the private
#: diagnostics); a pickled Synthesizer leaves them out.
_PRIVATE_MECHANISM_ATTRIBUTES = ("n_clipped_", "last_info_")


def as_schema(schema) -> Schema:
    """A :class:`Schema` from a Schema, its dictionary form, or a YAML/JSON file path."""
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, Mapping):
        return Schema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return Schema.from_yaml(schema)
    raise SchemaError(f"schema must be a Schema, a dict or a YAML/JSON path, got {type(schema).__name__}")


class Synthesizer:
    """Fit a registered mechanism to a DataFrame once (spending the budget), then draw records.

    Parameters
    ----------
    schema : Schema, dict or path to a YAML/JSON schema (the public bounds and levels)
    mechanism : name from ``privrelease mechanisms`` (default: the release default)
    epsilon, delta : privacy parameters of the fit; epsilon is required (as ``--epsilon`` on the
        command line), except by distributional mechanisms; delta for (epsilon, delta)-DP mechanisms,
        default ``min(1e-5, 1/(10 n))``
    rng : None for real use (noise from OS entropy); an int seed or numpy Generator for
        reproducible experiments only
    ledger, dataset_id, budget : optional persistent budget accounting, as in :func:`privrelease.release`
    **params : mechanism parameters (e.g. ``n_components=5``)

    Attributes (after ``fit``)
    --------------------------
    certificate_ : the release certificate of the fit (publishable)
    private_diagnostics_ : exact facts of the input (never publish); kept out of pickles, so that a
        pickled model can be shared (after unpickling it is None)
    mechanism_ : the fitted mechanism (a pickle leaves out its exact private counts too)
    released_ : the table released by the fit itself (row-aligned mechanisms: one noisy row
        per input record, in input order; synthetic ones: n draws)

    Notes
    -----
    ``fit`` is one release (:func:`privrelease.release`) and spends ``epsilon`` (and delta)
    once; a second ``fit`` is a second release and spends again (a
    :class:`~privrelease.errors.BudgetWarning` says so when no ledger records it). For synthetic
    mechanisms, ``sample`` draws from the fitted private model: post-
    processing, no further budget. Row-aligned mechanisms (e.g. ``laplace``) release one row
    per record and have no model to sample from: ``transform`` returns the rows released by
    ``fit``, and ``sample`` is refused.
    """

    def __init__(self, schema, mechanism: str | None = None, epsilon: float | None = None, delta: float | None = None,
                 rng=None, ledger=None, dataset_id: str | None = None, budget=None, **params):
        self.schema = schema
        self.mechanism = mechanism
        self.epsilon = epsilon
        self.delta = delta
        self.rng = rng
        self.ledger = ledger
        self.dataset_id = dataset_id
        self.budget = budget
        self.params = params

    def get_params(self, deep: bool = True) -> dict:
        """The constructor parameters (scikit-learn convention), mechanism parameters included."""
        return {"schema": self.schema, "mechanism": self.mechanism, "epsilon": self.epsilon, "delta": self.delta,
                "rng": self.rng, "ledger": self.ledger, "dataset_id": self.dataset_id, "budget": self.budget,
                **self.params}

    def fit(self, df: pd.DataFrame, y=None) -> "Synthesizer":
        """Release ``df`` once under the schema (spends the budget); returns self."""
        from .release import DEFAULT_MECHANISM, release
        from .release.construct import release_encoders

        schema = as_schema(self.schema)
        if hasattr(self, "mechanism_") and self.ledger is None:
            warnings.warn(f"this Synthesizer was fitted before: fitting again is a new release that spends "
                          f"epsilon={self.epsilon} again, and no ledger records it (give ledger=... and "
                          f"dataset_id=... to account for every fit)", BudgetWarning, stacklevel=2)
        result = release(df, schema, self.mechanism or DEFAULT_MECHANISM, self.epsilon, delta=self.delta,
                         rng=self.rng, ledger=self.ledger, dataset_id=self.dataset_id, budget=self.budget,
                         **self.params)
        self.schema_ = schema
        self.mechanism_ = result.mechanism
        self.certificate_ = result.certificate
        self._private_diagnostics = result.private_diagnostics
        self.released_ = self._in_schema_order(result.data)
        self.encoders_ = release_encoders(schema, type(result.mechanism), self.params)
        return self

    def sample(self, n: int) -> pd.DataFrame:
        """``n`` records drawn from the fitted private model, in the schema's columns (no further budget)."""
        self._check_fitted()
        from .mechanisms import SyntheticMechanism
        from .engine import release_threads
        from .release.output import decode_output, n_draw

        mech = self.mechanism_
        if not isinstance(mech, SyntheticMechanism):
            raise ParameterError(f"mechanism '{mech.name}' releases one row per input record and has no model to "
                                 f"sample from: use transform() for the rows released by fit()")
        with release_threads():
            Xs, ys = mech.sample(n_draw(mech, n, n))
            return self._in_schema_order(decode_output(mech, Xs, ys, *self.encoders_))

    def transform(self, df: pd.DataFrame | None = None) -> pd.DataFrame:
        """The rows released by ``fit`` (row-aligned mechanisms); ``df``, if given, must be the fitted table.

        Releasing other records is a new release with its own budget: fit a new Synthesizer.
        """
        self._check_fitted()
        from .mechanisms import RowAlignedMechanism

        if not isinstance(self.mechanism_, RowAlignedMechanism):
            raise ParameterError(f"mechanism '{self.mechanism_.name}' is synthetic: use sample(n)")
        if df is not None and len(df) != len(self.released_):
            raise ParameterError("transform() returns the rows released by fit(); releasing other records spends "
                                 "budget again: fit a new Synthesizer on them")
        return self.released_

    def fit_transform(self, df: pd.DataFrame, y=None) -> pd.DataFrame:
        return self.fit(df).transform(df)

    @property
    def private_diagnostics_(self):
        """Exact facts of the fitted input (clip counts, its sha256): never publish; None in an unpickled copy."""
        self._check_fitted()
        return getattr(self, "_private_diagnostics", None)

    def __getstate__(self) -> dict:
        """What a pickle holds: everything but the private diagnostics and the mechanism's exact counts."""
        state = {k: v for k, v in self.__dict__.items() if k != "_private_diagnostics"}
        mech = state.get("mechanism_")
        if mech is not None and any(hasattr(mech, a) for a in _PRIVATE_MECHANISM_ATTRIBUTES):
            mech = state["mechanism_"] = copy.copy(mech)
            for a in _PRIVATE_MECHANISM_ATTRIBUTES:
                mech.__dict__.pop(a, None)
        return state

    def _check_fitted(self):
        from sklearn.exceptions import NotFittedError

        if not hasattr(self, "mechanism_"):
            raise NotFittedError("this Synthesizer is not fitted yet: call fit(df) first (it spends the budget)")

    def _in_schema_order(self, out: pd.DataFrame) -> pd.DataFrame:
        names = self.schema_.names
        return out[names] if set(out.columns) == set(names) else out

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if k != "schema")
        return f"Synthesizer({params})"
