"""Empirical privacy audit: a statistically valid lower bound on a mechanism's epsilon.

A mechanism ``M`` is (epsilon, delta)-DP if for every pair of neighbouring datasets
``d0, d1`` and every event ``S``, ``P[M(d0) in S] <= exp(epsilon) P[M(d1) in S] + delta``
(and symmetrically). Running ``M`` many times on a fixed pair and counting how often
an event occurs gives Clopper-Pearson confidence intervals for ``P0 = P[M(d0) in S]``
and ``P1 = P[M(d1) in S]``; then, with probability at least ``1 - alpha``,

    epsilon >= ln((P0_low - delta) / P1_high)   and   epsilon >= ln((P1_low - delta) / P0_high).

:func:`audit_epsilon` returns the larger of the two (clamped at 0). A correct
mechanism gives a bound below its claimed epsilon with probability at least
``1 - alpha``; an under-noised mechanism is caught when the bound exceeds the claim.
The bound can only show that a claim is *false*; a bound below the claim does not
prove the claim (the neighbours, the statistic or the trial count may be weak).

Events
------
* ``event`` given: a fixed function of the per-run statistics. All trials estimate
  ``P0`` and ``P1``; both directions are reported with two-sided intervals at
  confidence ``1 - alpha/2`` each, so both bounds hold jointly with probability
  ``1 - alpha`` and reporting the larger is valid.
* ``event=None`` (scalar statistic): the trials are split in two. On the selection
  part the threshold ``t``, the side (``stat > t`` or ``stat <= t``) and the direction
  are chosen to maximise the Clopper-Pearson bound computed there; on the independent
  estimation part the bound for that single event and direction is computed with
  one-sided bounds at ``alpha/2`` each. Because the event is fixed before the
  estimation trials are looked at, the bound keeps its ``1 - alpha`` validity.

Example
-------
>>> import numpy as np
>>> def batch(data, rng, k):            # Laplace mechanism, sensitivity 1, epsilon 1
...     return data + rng.laplace(0.0, 1.0, k)
>>> res = audit_epsilon(batch=batch, d0=0.0, d1=1.0, trials=20000, seed=1)
>>> 0.6 < res.epsilon_lower <= 1.0
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.stats import beta as _beta

from ..errors import ParameterError

__all__ = ["AuditResult", "audit_epsilon", "clopper_pearson"]

_MAX_CANDIDATES = 256  # candidate thresholds tried on the selection half


@dataclass
class AuditResult:
    """Outcome of :func:`audit_epsilon`.

    Attributes
    ----------
    epsilon_lower : float
        Lower confidence bound (level ``1 - alpha``) on the mechanism's epsilon, >= 0.
    epsilon_empirical : float
        Point estimate ``ln((p_a - delta) / p_b)`` for the reported event and direction
        (may be ``inf`` when the denominator count is 0; not a confidence bound).
    direction : str
        ``"ln(P0/P1)"`` or ``"ln(P1/P0)"``, the direction that gave ``epsilon_lower``.
    p0, p1 : float
        Empirical event probabilities under ``d0`` and ``d1`` (estimation trials).
    p0_low, p0_high, p1_low, p1_high : float
        Clopper-Pearson bounds used (``nan`` for the unused ones when the event was selected).
    count0, count1 : int
        Event counts under ``d0`` and ``d1`` on the estimation trials.
    n0, n1 : int
        Estimation trials per dataset.
    trials : int
        Runs per dataset in total (selection + estimation).
    alpha, delta : float
        Confidence parameter and the delta subtracted from the numerator probability.
    threshold : float or None
        The selected threshold when the event was chosen automatically.
    side : str or None
        ``">"`` (event ``stat > threshold``) or ``"<="``; None for a user event.
    claimed : float or None
        The epsilon the mechanism claims (set by the caller; used by :attr:`caught`).
    """

    epsilon_lower: float
    epsilon_empirical: float
    direction: str
    p0: float
    p1: float
    p0_low: float
    p0_high: float
    p1_low: float
    p1_high: float
    count0: int
    count1: int
    n0: int
    n1: int
    trials: int
    alpha: float
    delta: float = 0.0
    threshold: float | None = None
    side: str | None = None
    claimed: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def caught(self) -> bool | None:
        """True when the bound exceeds the claimed epsilon (the claim is refuted at level alpha)."""
        if self.claimed is None:
            return None
        return bool(self.epsilon_lower > self.claimed)

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        ev = "user event" if self.side is None else f"stat {self.side} {self.threshold:.6g}"
        s = (f"epsilon >= {self.epsilon_lower:.4f} (confidence {1 - self.alpha:.3g}; {self.direction}; {ev}; "
             f"counts {self.count0}/{self.n0} vs {self.count1}/{self.n1}; delta {self.delta:g})")
        if self.claimed is not None:
            s += f"; claimed {self.claimed:g}: {'REFUTED' if self.caught else 'consistent'}"
        return s


def clopper_pearson(count, n, alpha: float, side: str = "two-sided"):
    """Clopper-Pearson bounds for a binomial proportion (vectorised over ``count``).

    ``side="lower"``/``"upper"``: one-sided bound at level ``1 - alpha``;
    ``"two-sided"``: ``(lower, upper)`` each at ``alpha / 2``.

    >>> lo, hi = clopper_pearson(50, 100, 0.05)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.3983, 0.6017)
    """
    count = np.asarray(count, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if side == "two-sided":
        return (clopper_pearson(count, n, alpha / 2, "lower"), clopper_pearson(count, n, alpha / 2, "upper"))
    if side == "lower":
        with np.errstate(invalid="ignore"):
            lo = _beta.ppf(alpha, count, n - count + 1)
        return np.where(count <= 0, 0.0, lo)
    if side == "upper":
        with np.errstate(invalid="ignore"):
            hi = _beta.ppf(1 - alpha, count + 1, n - count)
        return np.where(count >= n, 1.0, hi)
    raise ParameterError(f"side must be 'lower', 'upper' or 'two-sided', got {side!r}")


def _log_ratio(num_low, den_high, delta):
    """``ln((num_low - delta) / den_high)`` clamped at 0 (epsilon is never negative)."""
    num = np.asarray(num_low, dtype=np.float64) - delta
    den = np.asarray(den_high, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where((num > 0) & (den > 0), np.log(np.maximum(num, 1e-300) / np.maximum(den, 1e-300)), 0.0)
    return np.maximum(r, 0.0)


def _point(num, den, delta):
    num = num - delta
    if num <= 0:
        return 0.0
    if den <= 0:
        return math.inf
    return max(0.0, math.log(num / den))


def _collect(run, batch, data, rng, k, max_batch) -> np.ndarray:
    """``k`` statistics of runs on ``data`` as an array of shape (k,) or (k, d)."""
    if batch is not None:
        parts = []
        done = 0
        while done < k:
            m = min(max_batch, k - done)
            out = np.asarray(batch(data, rng, m), dtype=np.float64)
            if out.ndim == 0 or out.shape[0] != m:
                raise ParameterError(f"batch(data, rng, k) must return k = {m} statistics, got shape {out.shape}")
            parts.append(out)
            done += m
        stats = np.concatenate(parts, axis=0)
    else:
        first = [np.asarray(run(data, rng), dtype=np.float64) for _ in range(k)]
        shapes = {a.shape for a in first}
        if len(shapes) != 1 or len(next(iter(shapes))) > 1:
            raise ParameterError("run(data, rng) must return a scalar or a 1-d statistic of fixed length")
        stats = np.stack(first, axis=0)
    if stats.ndim > 2:
        raise ParameterError(f"statistics must be scalars or 1-d vectors per run, got shape {stats.shape[1:]}")
    if np.isnan(stats).any():
        raise ParameterError("the statistic returned NaN")
    return stats


def _apply_event(event, stats, name):
    hit = np.asarray(event(stats))
    if hit.shape != (stats.shape[0],):
        raise ParameterError(f"event(stats) must return one boolean per run ({stats.shape[0]}), got shape {hit.shape}")
    if hit.dtype != bool:
        if not np.isin(hit, (0, 1)).all():
            raise ParameterError(f"event(stats) must return booleans ({name})")
        hit = hit.astype(bool)
    return hit


def _select_event(s0: np.ndarray, s1: np.ndarray, alpha: float, delta: float):
    """Threshold, side and direction maximising the CP bound on the selection trials."""
    pooled = np.unique(np.concatenate([s0, s1]))
    if pooled.size > _MAX_CANDIDATES:
        qs = np.quantile(pooled, np.linspace(0, 1, _MAX_CANDIDATES))
        cand = np.unique(np.concatenate([qs, pooled[:8], pooled[-8:]]))
    else:
        cand = pooled
    a, b = np.sort(s0), np.sort(s1)
    n0, n1 = a.size, b.size
    le0 = np.searchsorted(a, cand, side="right")  # counts of stat <= t
    le1 = np.searchsorted(b, cand, side="right")
    best = (-1.0, None, None, None)
    for side, c0, c1 in (("<=", le0, le1), (">", n0 - le0, n1 - le1)):
        for direction, ca, na, cb, nb in (("ln(P0/P1)", c0, n0, c1, n1), ("ln(P1/P0)", c1, n1, c0, n0)):
            # Score with the same bound as the estimation step, plus a tiny point-estimate
            # tie-break so that an all-zero score still picks a sensible event.
            lo = clopper_pearson(ca, na, alpha / 2, "lower")
            hi = clopper_pearson(cb, nb, alpha / 2, "upper")
            score = _log_ratio(lo, hi, delta)
            score = score + 1e-9 * np.log1p(ca) - 1e-9 * np.log1p(cb)
            i = int(np.argmax(score))
            if score[i] > best[0]:
                best = (float(score[i]), float(cand[i]), side, direction)
    return best[1], best[2], best[3]


def audit_epsilon(
    run: Callable[[Any, np.random.Generator], Any] | None = None,
    d0: Any = None,
    d1: Any = None,
    event: Callable[[np.ndarray], np.ndarray] | None = None,
    trials: int = 2000,
    alpha: float = 0.05,
    seed: int | np.random.Generator | None = 0,
    *,
    batch: Callable[[Any, np.random.Generator, int], Any] | None = None,
    delta: float = 0.0,
    claimed: float | None = None,
    selection_fraction: float = 0.5,
    max_batch: int = 100_000,
) -> AuditResult:
    """Lower confidence bound on epsilon from repeated runs on two neighbouring datasets.

    Parameters
    ----------
    run : callable ``(data, rng) -> statistic``
        One mechanism run on ``data`` with a numpy Generator, reduced to a scalar or a
        1-d vector (any post-processing of the release is allowed). Ignored when
        ``batch`` is given.
    d0, d1 : neighbouring datasets (anything ``run``/``batch`` accept)
    event : callable ``stats -> bool array`` or None
        ``stats`` has shape (runs,) or (runs, d). None chooses a threshold event on a
        scalar statistic automatically (selection/estimation split; see module docs).
    trials : int >= 20
        Runs per dataset.
    alpha : float in (0, 1)
        The bound holds with probability at least ``1 - alpha``.
    seed : int, Generator or None
        Seeds the Generators handed to ``run``/``batch`` (one independent stream per dataset).
    batch : callable ``(data, rng, k) -> k statistics``, optional
        Vectorised alternative to ``run`` (called in blocks of at most ``max_batch``).
    delta : float in [0, 1)
        For (epsilon, delta)-DP claims: the bound is ``ln((P_low - delta) / P_high)``.
    claimed : float or None
        The mechanism's claimed epsilon, stored in the result (see ``AuditResult.caught``).
    selection_fraction : float in (0, 1)
        Share of trials used to choose the event when ``event`` is None.

    Returns
    -------
    AuditResult
    """
    _check_arguments(run, batch, event, trials, alpha, delta, selection_fraction, max_batch, claimed)
    trials = int(trials)

    s0, s1 = _collect_pair(run, batch, d0, d1, seed, trials, int(max_batch))
    common = dict(trials=trials, alpha=float(alpha), delta=float(delta), claimed=claimed)
    if event is not None:
        return _user_event_result(event, s0, s1, common)
    return _selected_event_result(s0, s1, selection_fraction, common)


def _collect_pair(run, batch, d0, d1, seed, trials, max_batch):
    """Statistics of ``trials`` runs on each dataset, from independent streams spawned from ``seed``."""
    root = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    g0, g1 = root.spawn(2)
    s0 = _collect(run, batch, d0, g0, trials, max_batch)
    s1 = _collect(run, batch, d1, g1, trials, max_batch)
    if s0.shape[1:] != s1.shape[1:]:
        raise ParameterError(f"statistics on d0 and d1 have different shapes: {s0.shape[1:]} vs {s1.shape[1:]}")
    return s0, s1


def _check_arguments(run, batch, event, trials, alpha, delta, selection_fraction, max_batch, claimed):
    """Raise ParameterError, naming the argument, for anything :func:`audit_epsilon` cannot use."""
    if run is None and batch is None:
        raise ParameterError("audit_epsilon needs run(data, rng) or batch(data, rng, k)")
    for f, nm in ((run, "run"), (batch, "batch"), (event, "event")):
        if f is not None and not callable(f):
            raise ParameterError(f"{nm} must be callable, got {type(f).__name__}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 20:
        raise ParameterError(f"trials must be an integer >= 20, got {trials!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (0 < alpha < 1):
        raise ParameterError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (0 <= delta < 1):
        raise ParameterError(f"delta must be in [0, 1), got {delta!r}")
    if not (0 < selection_fraction < 1):
        raise ParameterError(f"selection_fraction must be in (0, 1), got {selection_fraction!r}")
    if isinstance(max_batch, bool) or not isinstance(max_batch, (int, np.integer)) or max_batch < 1:
        raise ParameterError(f"max_batch must be a positive integer, got {max_batch!r}")
    if claimed is not None and not (isinstance(claimed, (int, float)) and claimed >= 0):
        raise ParameterError(f"claimed must be a number >= 0, got {claimed!r}")


def _user_event_result(event, s0, s1, common) -> AuditResult:
    """Both directions for a fixed event, from two-sided intervals at ``1 - alpha/2`` each."""
    alpha, delta = common["alpha"], common["delta"]
    h0 = _apply_event(event, s0, "d0")
    h1 = _apply_event(event, s1, "d1")
    c0, c1 = int(h0.sum()), int(h1.sum())
    n0, n1 = common["trials"], common["trials"]
    # two-sided intervals at 1 - alpha/2 each: all four bounds hold jointly w.p. >= 1 - alpha
    p0_lo, p0_hi = (float(v) for v in clopper_pearson(c0, n0, alpha / 2))
    p1_lo, p1_hi = (float(v) for v in clopper_pearson(c1, n1, alpha / 2))
    e01 = float(_log_ratio(p0_lo, p1_hi, delta))
    e10 = float(_log_ratio(p1_lo, p0_hi, delta))
    if e01 >= e10:
        direction, eps_lo, emp = "ln(P0/P1)", e01, _point(c0 / n0, c1 / n1, delta)
    else:
        direction, eps_lo, emp = "ln(P1/P0)", e10, _point(c1 / n1, c0 / n0, delta)
    return AuditResult(epsilon_lower=eps_lo, epsilon_empirical=emp, direction=direction, p0=c0 / n0,
                       p1=c1 / n1, p0_low=p0_lo, p0_high=p0_hi, p1_low=p1_lo, p1_high=p1_hi, count0=c0,
                       count1=c1, n0=n0, n1=n1, **common)


def _selected_event_result(s0, s1, selection_fraction, common) -> AuditResult:
    """The event chosen on the first trials, its one-direction bound on the independent rest."""
    trials, alpha, delta = common["trials"], common["alpha"], common["delta"]
    if s0.ndim != 1:
        raise ParameterError("an automatic threshold needs a scalar statistic; pass event=... for vector statistics")
    m = int(round(trials * selection_fraction))
    if m < 10 or trials - m < 10:
        raise ParameterError("too few trials for the selection/estimation split (need >= 10 in each part)")
    t, side, direction = _select_event(s0[:m], s1[:m], alpha, delta)
    e0, e1 = s0[m:], s1[m:]
    h0 = e0 <= t if side == "<=" else e0 > t
    h1 = e1 <= t if side == "<=" else e1 > t
    c0, c1 = int(h0.sum()), int(h1.sum())
    n0, n1 = e0.size, e1.size
    nan = float("nan")
    if direction == "ln(P0/P1)":
        p0_lo = float(clopper_pearson(c0, n0, alpha / 2, "lower"))
        p1_hi = float(clopper_pearson(c1, n1, alpha / 2, "upper"))
        p0_hi, p1_lo = nan, nan
        eps_lo, emp = float(_log_ratio(p0_lo, p1_hi, delta)), _point(c0 / n0, c1 / n1, delta)
    else:
        p1_lo = float(clopper_pearson(c1, n1, alpha / 2, "lower"))
        p0_hi = float(clopper_pearson(c0, n0, alpha / 2, "upper"))
        p0_lo, p1_hi = nan, nan
        eps_lo, emp = float(_log_ratio(p1_lo, p0_hi, delta)), _point(c1 / n1, c0 / n0, delta)
    return AuditResult(epsilon_lower=eps_lo, epsilon_empirical=emp, direction=direction, p0=c0 / n0, p1=c1 / n1,
                       p0_low=p0_lo, p0_high=p0_hi, p1_low=p1_lo, p1_high=p1_hi, count0=c0, count1=c1, n0=n0,
                       n1=n1, threshold=t, side=side, extra={"selection_trials": m}, **common)
