"""Base classes of release mechanisms (the registry is :mod:`privrelease.mechanisms.registry`).

Every mechanism is a scikit-learn style estimator: ``__init__`` only stores its
keyword parameters, ``fit(X, y=None)`` validates them, spends the budget and sets
fitted attributes ending in ``_`` (``privacy_cost_``, ``sensitivities_``,
``noise_scales_``, ``budget_split_``), and returns ``self``. ``X`` is an encoded
matrix (numeric columns in [0, 1], one-hot categorical blocks) whose public
structure is the ``domain`` parameter (:class:`~privrelease.schema.EncodedDomain`);
``domain=None`` means every column is numeric in [0, 1].

Two output kinds exist:

* ``row-aligned`` mechanisms (:class:`RowAlignedMechanism`) release one output row
  per input row, in input order, via ``transform(X)``; they can stream: ``fit`` may
  be replaced by ``fit_stats`` on merged sufficient statistics, then ``transform``
  runs chunk by chunk.
* ``synthetic`` mechanisms (:class:`SyntheticMechanism`) release a model's samples
  via ``sample(n)``, returning ``(X_syn, y_syn)``.

Class attributes describe the privacy claim that ``privrelease mechanisms`` lists:
``guarantee`` is one of :data:`GUARANTEES`, ``relation`` the neighbouring relation.
What the release pipeline may do with a mechanism (how it reads the data, how it
draws and names the output) is declared in one attribute, ``capabilities``
(:class:`Capabilities`); nothing else is probed.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import InputDataError, ParameterError
from ..noise import make_source
from ..schema.encoding import EncodedDomain
from ..dp.costs import PrivacyCost, check_epsilon
from .constraints import validate_parameters

GUARANTEES = ("epsilon-DP", "(epsilon,delta)-DP", "distributional", "none (empirical)")

R1 = "bounded (R1): datasets of the same public size n differing in one record, replaced"
R1_LABEL = "bounded (R1): one record replaced, its label included (it may change class); n public"
AR = "unbounded (AR): one record added or removed; n private"


PASSES = ("memory", "statistics", "multi-pass", "stream")
OUTPUT_SPACES = ("schema", "encoded", "own")


@dataclass(frozen=True)
class Capabilities:
    """What the release pipeline may do with a mechanism (declared once per class).

    Attributes
    ----------
    passes : how a file release fits it
        ``"memory"``: ``fit(X, y)`` on the whole encoded table;
        ``"statistics"``: ``fit_stats(stats)`` on one pass of mergeable statistics (row-aligned
        mechanisms then ``transform`` chunk by chunk in a second pass);
        ``"multi-pass"``: ``fit_executor(passes)``, which runs as many passes as it needs on a
        :mod:`privrelease.engine.passes` executor (streamed chunks or Dask partitions; memory
        flat in n), each a per-chunk map to mergeable sums and a noisy step on their total;
        ``"stream"``: ``fit_stream(make_chunks)`` on encoded feature chunks (no labels).
    samples_in_chunks : ``sample(k)`` called repeatedly draws from the same fitted model, so a
        large synthetic output is drawn and written chunk by chunk.
    fixed_output_rows : the number of output rows is one of the mechanism's parameters
        (``n_synthetic`` does not apply).
    output_space : ``"schema"`` (decoded into the schema's columns, or into the mechanism's
        own ``output_columns_`` when it sets them), ``"encoded"`` (the encoded columns, not
        decodable), ``"own"`` (always the mechanism's ``output_columns_``).
    uses_label : fits a per-class model when the schema has a label (optional).
    needs_target : needs a numeric ``role: target`` column.
    estimates_covariance : estimates a p x p covariance, so a release needs n > p.
    missing_numeric : releases numeric columns that declare ``missing: allowed`` (their encoded
        coordinate is NaN where a value is missing); the release refuses such a column for a
        mechanism without it.
    calendar_parts : a date column is released as its week, weekday and time of day, each a column of
        its own (:mod:`privrelease.schema.calendar`), for a model that keeps their cycles.
    """

    passes: str = "memory"
    samples_in_chunks: bool = False
    fixed_output_rows: bool = False
    output_space: str = "schema"
    uses_label: bool = False
    needs_target: bool = False
    estimates_covariance: bool = False
    missing_numeric: bool = False
    calendar_parts: bool = False

    def __post_init__(self):
        if self.passes not in PASSES:
            raise ValueError(f"passes must be one of {PASSES}, got {self.passes!r}")
        if self.output_space not in OUTPUT_SPACES:
            raise ValueError(f"output_space must be one of {OUTPUT_SPACES}, got {self.output_space!r}")


def check_one_hot(X: np.ndarray, blocks) -> None:
    """Refuse a row whose entries in a declared categorical block do not sum to 1.

    Every sensitivity derived for encoded rows (e.g. ``||x - x'||_2 <= sqrt(p1 + 2 p2)``) assumes
    that each block holds one categorical value: entries in [0, 1] (checked with the range) that
    sum to 1, so that a replaced record moves a block by at most ``sqrt(2)`` in L2 and 2 in L1. A
    multi-hot row (two ones in a block) would move it further than the noise was calibrated for.
    Shared by every mechanism (through ``_check_common``) and by the per-chunk maps of the
    multi-pass mechanisms.
    """
    if not blocks or X.shape[0] == 0:
        return
    # one reduceat over X itself (no copy of the block columns): segments start at every block's
    # start and end; the sums of the segments that are blocks are kept
    cuts = sorted({c for a, e in blocks for c in (a, e) if c < X.shape[1]})
    sums = np.add.reduceat(X, cuts, axis=1)[:, [cuts.index(a) for a, _ in blocks]]
    bad = np.abs(sums - 1.0) > 1e-9
    if bad.any():
        i, b = np.argwhere(bad)[0]
        a, e = blocks[b]
        raise InputDataError(f"row {i} is not one-hot in the categorical block of columns {a}..{e - 1} (its entries "
                             f"sum to {sums[i, b]:.6g}, not 1): encode categorical columns with privrelease.schema.Encoder")


#: The methods that fit a mechanism; each checks the declared parameter constraints first.
#: Every public entry point that fits (or starts fitting): declared parameters are checked first.
FIT_METHODS = ("fit", "fit_stats", "fit_passes", "fit_stream", "fit_executor", "fit_centre", "fit_marginals")


def _checking_parameters(fit):
    @functools.wraps(fit)
    def checked(self, *args, **kwargs):
        validate_parameters(self)
        return fit(self, *args, **kwargs)

    checked.checks_parameters = True
    return checked


class Mechanism(BaseEstimator):
    """Common machinery: parameter checks, randomness, fitted privacy metadata."""

    name: ClassVar[str] = ""
    guarantee: ClassVar[str] = "epsilon-DP"
    relation: ClassVar[str] = R1
    output_kind: ClassVar[str] = "row-aligned"
    summary: ClassVar[str] = ""
    supervised: ClassVar[bool] = False  # needs a label column
    columns: ClassVar[str] = "the schema's columns"  # what the released table's columns are
    uses_delta: ClassVar[bool] = False
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: Every constructor parameter with the values it accepts (see :mod:`.constraints`); checked
    #: before any of the ``fit`` methods runs.
    _parameter_constraints: ClassVar[dict] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for method in FIT_METHODS:
            fit = getattr(cls, method, None)  # also a mixin's (DataIndependentFit.fit)
            if fit is not None and not getattr(fit, "checks_parameters", False):
                setattr(cls, method, _checking_parameters(fit))

    def release_passes(self) -> str:
        """How a file release fits this instance: the declared ``capabilities.passes``, unless
        its parameters rule one-pass statistics out (then ``"memory"``)."""
        return self.capabilities.passes

    @classmethod
    def schema_params(cls, encoder, label_encoder) -> dict:
        """Parameters this mechanism derives from public schema facts beyond those every mechanism
        gets (``n_classes``, ``row_norm_bound``; see :func:`privrelease.release.construct`), e.g.
        taxonomy trees. Override to add; never read the data here."""
        return {}

    def record_preprocessing(self) -> tuple:
        """Per-record steps the statistics this mechanism fits on must have been computed with,
        as ``(name, value)`` pairs (e.g. ``(("row_norm_bound", 0.1),)``). Every engine applies
        them in its per-chunk map (:func:`privrelease.engine.chunk_stats`)."""
        return ()

    # -- helpers for subclasses --------------------------------------------
    def _check_common(self, X, y=None, p=None):
        eps = check_epsilon(self.epsilon)
        X = np.asarray(X, dtype=np.float64) if X is not None else None
        if X is not None:
            if X.ndim != 2:
                raise InputDataError(f"X must be a 2-d encoded matrix, got shape {X.shape}")
            if X.shape[0] == 0:
                raise InputDataError("X has no records")
            finite = np.isfinite(X)
            if not finite.all():  # NaN marks a missing numeric value for a mechanism that releases them
                if not np.all(finite | np.isnan(X)) or not self.capabilities.missing_numeric:
                    raise InputDataError("X contains NaN or infinite values")
            values = X if finite.all() else X[finite]
            if values.size and (values.min() < -1e-12 or values.max() > 1 + 1e-12):
                raise InputDataError("X must be encoded into [0, 1] (use privrelease.schema.Encoder)")
        dom = self._domain(X.shape[1] if X is not None else p)
        if X is not None and X.shape[1] != dom.p:
            raise InputDataError(f"X has {X.shape[1]} columns but the domain declares {dom.p}")
        if X is not None:
            check_one_hot(X, dom.blocks)
        if self.supervised:
            if y is None:
                raise InputDataError(f"mechanism '{self.name}' needs labels y (a label column in the schema)")
            y = np.asarray(y)
            if X is not None and y.shape[0] != X.shape[0]:
                raise InputDataError("X and y have different numbers of records")
        self.source_ = make_source(getattr(self, "rng", None))
        return eps, X, y, dom

    def _domain(self, p: int | None) -> EncodedDomain:
        dom = getattr(self, "domain", None)
        if dom is None:
            if p is None:
                raise ParameterError("a domain (or data) is needed to know the dimension")
            return EncodedDomain.numeric_box(p)
        if not isinstance(dom, EncodedDomain):
            raise ParameterError(f"domain must be an EncodedDomain, got {type(dom).__name__}")
        return dom

    @staticmethod
    def _check_int(value, name, low=1, high=None):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ParameterError(f"{name} must be an integer, got {value!r}")
        if value < low or (high is not None and value > high):
            rng = f"[{low}, {high}]" if high is not None else f">= {low}"
            raise ParameterError(f"{name} must be in {rng}, got {value}")
        return int(value)

    def _declared_classes(self) -> int:
        """The declared ``n_classes`` for labelled data; refused when absent (never read from the labels:
        the highest label code is a private fact that one relabelled record changes)."""
        if getattr(self, "n_classes", None) is None:
            raise ParameterError(f"{self.name} needs n_classes (the number of label levels, a public fact of the "
                                 f"schema) to fit labelled data; it does not read it from the private labels")
        return self._check_int(self.n_classes, "n_classes", 1)

    @staticmethod
    def _check_fraction(value, name):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value < 1):
            raise ParameterError(f"{name} must be a number in (0, 1), got {value!r}")
        return float(value)

    @property
    def is_private(self) -> bool:
        return math.isfinite(float(getattr(self, "epsilon", math.inf)))

    def with_source(self, source):
        """A shallow copy of the fitted mechanism drawing from ``source`` (one output part's own noise
        source); a mechanism holding fitted sub-mechanisms re-sources them too (override)."""
        m = copy.copy(self)
        m.source_ = source
        return m

    def certificate_extra(self) -> dict:
        """Mechanism-specific facts for the publishable certificate (override to add): public facts
        and DP-protected values only."""
        return {}

    def private_diagnostics(self) -> dict:
        """Exact facts of the private data worth keeping (e.g. how many records were clipped): they
        go into the release's private diagnostics, never into the certificate (override to add)."""
        return {}

    @classmethod
    def parameter_docs(cls) -> dict[str, str]:
        """Every constructor parameter with its meaning, in signature order.

        Taken from the class docstring's numpydoc "Parameters" section (``name : type`` then
        indented prose), so that the listing cannot drift from the documentation; a class
        attribute ``PARAMETERS`` (name -> text) replaces entries, and the parameters every
        mechanism shares (epsilon, delta, rng, domain) fall back to a common text when the
        docstring gives only their type.
        """
        documented = _numpydoc_parameters(inspect.getdoc(cls) or "")
        documented.update({name: ("", text) for name, text in (getattr(cls, "PARAMETERS", None) or {}).items()})
        out = {}
        for name in inspect.signature(cls.__init__).parameters:
            if name == "self":
                continue
            typ, prose = documented.get(name, ("", ""))
            if not prose and name in COMMON_PARAMETERS:
                prose = COMMON_PARAMETERS[name]
            out[name] = f"{typ}: {prose}" if typ and prose else (prose or typ)
        return out

    @classmethod
    def info(cls) -> dict:
        return {
            "name": cls.name,
            "guarantee": cls.guarantee,
            "neighbouring_relation": cls.relation,
            "output": cls.output_kind,
            "supervised": cls.supervised,
            "summary": cls.summary,
            "columns": cls.columns,
            "missing_numeric": cls.capabilities.missing_numeric,
            "calendar_parts": cls.capabilities.calendar_parts,
            "parameters": cls.parameter_docs(),
        }

    def _set_cost(self, epsilon: float, delta: float = 0.0, rho: float | None = None):
        self.privacy_cost_ = PrivacyCost(epsilon, delta, rho)

    # -- noisy releases: calibrate, record the scale, then draw -----------------
    def _laplace(self, key: str, value, l1_sensitivity: float, epsilon: float, coords: int) -> np.ndarray:
        """Laplace release whose scale is stored in ``noise_scales_[key]`` before the draw."""
        self.noise_scales_[key] = self.source_.laplace_noise_scale(l1_sensitivity, epsilon, coords)
        noisy, _ = self.source_.add_laplace(value, l1_sensitivity, epsilon, coords)
        return noisy

    def _gaussian(self, key: str, value, l2_sensitivity: float, noise_multiplier: float, coords: int) -> np.ndarray:
        """Gaussian release whose standard deviation is stored in ``noise_scales_[key]`` before the draw."""
        self.noise_scales_[key] = self.source_.gaussian_noise_std(l2_sensitivity, noise_multiplier, coords)
        noisy, _ = self.source_.add_gaussian(value, l2_sensitivity, noise_multiplier, coords)
        return noisy


# What the parameters every mechanism shares mean (the command line sets them with --epsilon,
# --delta and --seed; the release derives the domain from the schema).
COMMON_PARAMETERS = {
    "epsilon": "the privacy budget epsilon",
    "delta": "the delta of (epsilon, delta)-DP",
    "rng": "None for a real release (noise from OS entropy); an int seed or numpy Generator for "
           "reproducible experiments only",
    "domain": "the public structure of the encoded table; the release derives it from the schema",
}


def _numpydoc_parameters(doc: str) -> dict[str, tuple[str, str]]:
    """``name -> (type, prose)`` from the "Parameters" section of a numpydoc docstring.

    >>> doc = "X.\\n\\nParameters\\n----------\\na, b : int\\n    Two counts\\n    of things.\\nc : float\\n\\nNotes\\n-----\\n"
    >>> _numpydoc_parameters(doc)
    {'a': ('int', 'Two counts of things.'), 'b': ('int', 'Two counts of things.'), 'c': ('float', '')}
    """
    lines = doc.splitlines()

    def header(k):
        return (k + 1 < len(lines) and lines[k].strip() and not lines[k].startswith(" ")
                and set(lines[k + 1].strip()) == {"-"})

    starts = [k for k in range(len(lines)) if header(k) and lines[k].strip() == "Parameters"]
    out: dict[str, tuple[str, str]] = {}
    if not starts:
        return out
    names: list[str] = []
    typ, prose = "", []

    def flush():
        for n in names:
            out[n] = (typ, " ".join(" ".join(prose).split()))

    for k in range(starts[0] + 2, len(lines)):
        line = lines[k]
        if header(k):
            break
        if line.strip() and not line.startswith(" "):
            flush()
            head, _, typ = line.partition(" : ")
            names, typ, prose = [n.strip().lstrip("*") for n in head.split(",")], typ.strip(), []
        elif line.strip():
            prose.append(line.strip())
    flush()
    return out


class RowAlignedMechanism(Mechanism):
    """One released row per input row, in input order."""

    output_kind: ClassVar[str] = "row-aligned"

    def fit_stats(self, stats, p: int | None = None):
        """Fit from :class:`~privrelease.engine.SufficientStats` (streaming path)."""
        raise NotImplementedError

    def transform(self, X):
        raise NotImplementedError

    def fit_transform(self, X, y=None):
        return self.fit(X, y).transform(X)


class DataIndependentFit:
    """``fit`` and ``fit_stats`` for mechanisms whose calibration needs only epsilon and the public
    domain (the data enter only in ``transform``): both validate, then call ``self._fit_domain(eps,
    domain)``, which sets the fitted attributes and returns ``self``."""

    capabilities: ClassVar[Capabilities] = Capabilities(passes="statistics")

    def fit(self, X=None, y=None):
        eps, X, _, dom = self._check_common(X)
        return self._fit_domain(eps, dom)

    def fit_stats(self, stats, p=None):
        eps, _, _, dom = self._check_common(None, p=stats.p)
        return self._fit_domain(eps, dom)


class SyntheticMechanism(Mechanism):
    """Releases samples of a fitted model (``sample(n)`` returns ``(X, y)``)."""

    output_kind: ClassVar[str] = "synthetic"
    capabilities: ClassVar[Capabilities] = Capabilities(estimates_covariance=True)

    def sample(self, n: int):
        raise NotImplementedError
