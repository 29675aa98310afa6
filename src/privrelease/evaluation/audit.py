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
    if run is None and batch is None:
        raise ParameterError("audit_epsilon needs run(data, rng) or batch(data, rng, k)")
    for f, nm in ((run, "run"), (batch, "batch"), (event, "event")):
        if f is not None and not callable(f):
            raise ParameterError(f"{nm} must be callable, got {type(f).__name__}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 20:
        raise ParameterError(f"trials must be an integer >= 20, got {trials!r}")
    trials = int(trials)
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

    root = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    g0, g1 = root.spawn(2)
    s0 = _collect(run, batch, d0, g0, trials, int(max_batch))
    s1 = _collect(run, batch, d1, g1, trials, int(max_batch))
    if s0.shape[1:] != s1.shape[1:]:
        raise ParameterError(f"statistics on d0 and d1 have different shapes: {s0.shape[1:]} vs {s1.shape[1:]}")

    common = dict(trials=trials, alpha=float(alpha), delta=float(delta), claimed=claimed)
    if event is not None:
        h0 = _apply_event(event, s0, "d0")
        h1 = _apply_event(event, s1, "d1")
        c0, c1 = int(h0.sum()), int(h1.sum())
        n0, n1 = trials, trials
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


# ---- noise transcripts, replay and halved-noise mutants ---------------------------------
#
# Every DP mechanism draws its noise through a :class:`~privrelease.noise.RandomSource`
# (``add_gaussian``, ``add_laplace``, ``gumbel``). The wrappers below sit between a mechanism
# and its source, so an audit needs nothing from the mechanism beyond that public API:
#
# * :class:`TranscriptSource` records every noise draw (the query value the mechanism hands
#   to the source, its sensitivity and calibration, the noisy output). It can also *replay*
#   the outputs of earlier draws and stop at draw ``k``: the mechanism then computes draw
#   ``k``'s query on a dataset given fixed earlier releases. By adaptive composition each
#   draw is private given any fixed earlier releases, so an audit of draw ``k`` alone, on
#   the query values captured on two neighbours, is a valid audit of that statistic; and the
#   noise can then be redrawn many times at once without rerunning the mechanism.
# * :class:`HalvedNoiseSource` is the mutant: the selected draw (by index in the transcript)
#   gets ``factor`` times its noise (the sensitivity handed to the source is scaled for
#   additive noise; Gumbel draws are scaled, which is the exponential mechanism run at
#   ``1 / factor`` times its epsilon since ``argmax(a + G / 2) = argmax(2 a + G)``).

NOISE_KINDS = ("gaussian", "laplace", "gumbel")


@dataclass
class NoiseDraw:
    """One noise draw of a mechanism, as seen by its source.

    ``value`` is the noiseless query (None for Gumbel draws), ``sensitivity`` the one handed to
    the source, ``param`` the noise multiplier (Gaussian) or epsilon (Laplace), ``scale`` the
    noise std (Gaussian) or Laplace scale the source reports, ``output`` the noisy release.
    """

    index: int
    kind: str
    value: np.ndarray | None
    sensitivity: float | None
    param: float | None
    coords: int | None
    shape: tuple
    scale: float | None = None
    output: np.ndarray | None = None


class StopAtDraw(Exception):
    """Raised by a :class:`TranscriptSource` at its ``stop_at`` draw (the draw's query is in ``.draw``)."""

    def __init__(self, draw: NoiseDraw):
        super().__init__(f"stopped at noise draw {draw.index} ({draw.kind})")
        self.draw = draw


def _as_source(rng):
    from ..noise import make_source  # evaluation sits above the noise layer

    return make_source(rng)


class _WrappedSource:
    """Forwards the source API (and ``secure``/``description``) to an inner source."""

    def __init__(self, inner):
        self.inner = inner if isinstance(inner, _WrappedSource) else _as_source(inner)
        self.secure = self.inner.secure
        self.description = self.inner.description

    @property
    def generator(self):
        return self.inner.generator

    def laplace(self, scale, size):
        return self.inner.laplace(scale, size)

    def uniform(self, size):
        return self.inner.uniform(size)


def _register_source_api():
    """Make the wrappers RandomSource instances (so ``make_source`` hands them through unchanged)."""
    from ..noise import RandomSource

    for cls in (TranscriptSource, HalvedNoiseSource):
        RandomSource.register(cls)


class TranscriptSource(_WrappedSource):
    """Records every noise draw; optionally replays earlier outputs and stops at one draw.

    Parameters
    ----------
    inner : RandomSource, Generator, int or None
        Where fresh noise comes from.
    replay : list of NoiseDraw, optional
        Outputs returned, in order, for the first ``len(replay)`` draws instead of fresh noise
        (the draw kinds and shapes must match, else ParameterError: the mechanism took another path).
    stop_at : int or None
        Raise an internal stop signal at this draw, after recording its query; :func:`capture_draw`
        catches it.
    """

    def __init__(self, inner=None, replay=None, stop_at: int | None = None):
        super().__init__(inner)
        self.draws: list[NoiseDraw] = []
        self.replay = list(replay or [])
        self.stop_at = stop_at

    def _next(self, kind, value, sensitivity, param, coords, shape):
        d = NoiseDraw(index=len(self.draws), kind=kind,
                      value=None if value is None else np.array(value, dtype=np.float64, copy=True),
                      sensitivity=None if sensitivity is None else float(sensitivity),
                      param=None if param is None else float(param), coords=coords, shape=tuple(shape))
        self.draws.append(d)
        if self.stop_at is not None and d.index == self.stop_at:
            raise StopAtDraw(d)
        return d

    def _replayed(self, d: NoiseDraw, output, scale):
        """Fresh output (``scale``) recorded on ``d``, or the recorded one for a replayed draw.

        The inner source is called in both cases, so a seeded generator shared with
        post-processing advances exactly as in the recorded run.
        """
        if d.index < len(self.replay):
            old = self.replay[d.index]
            if old.kind != d.kind or tuple(old.shape) != d.shape:
                raise ParameterError(f"replay diverged at noise draw {d.index}: recorded {old.kind}{old.shape}, "
                                     f"got {d.kind}{d.shape}")
            output, scale = old.output, old.scale
        d.output, d.scale = np.array(output, copy=True), scale
        return np.array(output, copy=True), scale

    def add_gaussian(self, value, l2_sensitivity, noise_multiplier, coords):
        value = np.asarray(value, dtype=np.float64)
        d = self._next("gaussian", value, l2_sensitivity, noise_multiplier, coords, value.shape)
        return self._replayed(d, *self.inner.add_gaussian(value, l2_sensitivity, noise_multiplier, coords))

    def add_laplace(self, value, l1_sensitivity, epsilon, coords):
        value = np.asarray(value, dtype=np.float64)
        d = self._next("laplace", value, l1_sensitivity, epsilon, coords, value.shape)
        return self._replayed(d, *self.inner.add_laplace(value, l1_sensitivity, epsilon, coords))

    def gumbel(self, size):
        g = self.inner.gumbel(size)
        d = self._next("gumbel", None, None, None, None, np.shape(g))
        return self._replayed(d, g, None)[0]


class HalvedNoiseSource(_WrappedSource):
    """Mutant noise: the selected noise draw gets ``factor`` times its noise (default one half).

    ``draw``: the index of the draw in the mechanism's transcript (counting ``add_gaussian``,
    ``add_laplace`` and ``gumbel`` calls in order), a callable ``NoiseDraw -> bool``, or None for
    every draw. Additive draws are calibrated with ``factor`` times the sensitivity (the noise
    std or Laplace scale is multiplied by ``factor``); Gumbel draws are multiplied by ``factor``
    (the exponential mechanism at ``epsilon / factor``). ``hits`` counts the draws changed.
    """

    def __init__(self, inner=None, draw: int | Callable[[NoiseDraw], bool] | None = None, factor: float = 0.5):
        super().__init__(inner)
        if not (isinstance(factor, (int, float)) and 0 < factor):
            raise ParameterError(f"factor must be a number > 0, got {factor!r}")
        self.draw, self.factor, self.count, self.hits = draw, float(factor), 0, 0

    def _selected(self, kind, value, sensitivity, param, coords, shape) -> bool:
        d = NoiseDraw(index=self.count, kind=kind, value=value, sensitivity=sensitivity, param=param,
                      coords=coords, shape=tuple(shape))
        self.count += 1
        hit = self.draw is None or (self.draw(d) if callable(self.draw) else d.index == int(self.draw))
        self.hits += int(bool(hit))
        return bool(hit)

    def add_gaussian(self, value, l2_sensitivity, noise_multiplier, coords):
        value = np.asarray(value, dtype=np.float64)
        f = self.factor if self._selected("gaussian", value, l2_sensitivity, noise_multiplier, coords,
                                          value.shape) else 1.0
        return self.inner.add_gaussian(value, l2_sensitivity * f, noise_multiplier, coords)

    def add_laplace(self, value, l1_sensitivity, epsilon, coords):
        value = np.asarray(value, dtype=np.float64)
        f = self.factor if self._selected("laplace", value, l1_sensitivity, epsilon, coords, value.shape) else 1.0
        return self.inner.add_laplace(value, l1_sensitivity * f, epsilon, coords)

    def gumbel(self, size):
        g = self.inner.gumbel(size)
        return g * self.factor if self._selected("gumbel", None, None, None, None, np.shape(g)) else g


_register_source_api()


def record_transcript(fit: Callable[[Any, Any], Any], data, rng=0):
    """Run ``fit(data, source)`` once with a recording source; returns ``(result, draws)``."""
    src = TranscriptSource(rng)
    out = fit(data, src)
    return out, src.draws


def draw_index(draws: list, noise_scales: dict, name: str, rtol: float = 1e-12) -> int:
    """Index of the draw that produced the statistic ``name`` of a mechanism's ``noise_scales_``.

    Matches the noise scale the source reported for each draw with the mechanism's record of
    it, so audits name statistics ("moments_std", "sums") instead of depending on the order in
    which a mechanism draws its noise. Raises ParameterError unless exactly one draw matches.
    """
    if name not in noise_scales:
        raise ParameterError(f"no noise scale named {name!r}; the mechanism recorded {sorted(noise_scales)}")
    target = float(noise_scales[name])
    hits = [d.index for d in draws if d.scale is not None and math.isclose(d.scale, target, rel_tol=rtol)]
    if len(hits) != 1:
        raise ParameterError(f"{len(hits)} noise draws have the scale of {name!r} ({target:g}); cannot tell which")
    return hits[0]


def capture_draw(fit: Callable[[Any, Any], Any], data, index: int, reference: list, rng=12345) -> NoiseDraw:
    """Query of draw ``index`` on ``data``, the earlier draws replayed from ``reference``.

    ``rng`` must be the seed of the reference run, so that any post-processing randomness the
    mechanism takes from its source's generator before that draw is the same as in the reference.
    """
    src = TranscriptSource(rng, replay=reference[:index], stop_at=index)
    try:
        fit(data, src)
    except StopAtDraw as stop:
        return stop.draw
    raise ParameterError(f"the mechanism made only {len(src.draws)} noise draws; draw {index} was never reached")


def exact_prefix(fit: Callable[[Any, Any], Any], data, upto: int, rng=12345) -> list:
    """A transcript of the first ``upto`` draws in which every release is its exact query on ``data``.

    Built draw by draw (each query captured with the exact earlier releases replayed); Gumbel
    draws are zero (the selection of the largest score). The guarantee of a later statistic
    holds given *any* earlier releases, so an audit may fix them at these values, for example
    to put the clipping centre or the basis exactly where a worst-case pair needs them.
    """
    draws: list[NoiseDraw] = []
    for i in range(int(upto)):
        d = capture_draw(fit, data, i, draws, rng)
        d.output = np.zeros(d.shape) if d.kind == "gumbel" else d.value.copy()
        d.scale = d.scale if d.kind == "gumbel" else 0.0
        draws.append(d)
    return draws


def redraw(draw: NoiseDraw, rng, k: int, factor: float = 1.0, subset=None) -> np.ndarray:
    """``k`` fresh noisy releases of a captured additive draw, shape (k, size), in one source call.

    The draw's own calibration (sensitivity, noise multiplier or epsilon, coords) is passed to
    a seeded source; ``factor != 1`` goes through :class:`HalvedNoiseSource` (the mutant).
    ``subset`` (flat indices) redraws only those coordinates: both sources add independent,
    identically distributed noise to every coordinate of a draw, so the others carry no
    information about which dataset was used and can be left out.
    """
    if draw.kind not in ("gaussian", "laplace"):
        raise ParameterError(f"only additive draws can be redrawn, not {draw.kind!r}")
    src = _as_source(rng)
    if factor != 1.0:
        src = HalvedNoiseSource(src, draw=None, factor=factor)
    v = draw.value.ravel() if subset is None else draw.value.ravel()[subset]
    tiled = np.broadcast_to(v, (int(k), v.size)).copy()
    add = src.add_gaussian if draw.kind == "gaussian" else src.add_laplace
    out, _ = add(tiled, draw.sensitivity, draw.param, draw.coords)
    return np.asarray(out, dtype=np.float64).reshape(int(k), -1)


@dataclass
class DrawAudit:
    """Outcome of :func:`audit_draw`: the captured queries and the audits of the real and mutant noise."""

    index: int
    kind: str
    shift: np.ndarray  # query change on the coordinates that differ
    draw0: NoiseDraw
    draw1: NoiseDraw
    real: AuditResult
    mutant: AuditResult | None

    def summary(self) -> str:
        s = f"draw {self.index} ({self.kind}): real {self.real.summary()}"
        if self.mutant is not None:
            s += f" | mutant {self.mutant.summary()}"
        return s


def audit_draw(fit: Callable[[Any, Any], Any], d0, d1, draw: int | str, *, trials: int = 200_000,
               claimed: float | None = None, delta: float = 0.0, seed: int = 0, mutant_factor: float | None = 0.5,
               alpha: float = 0.05, real_alpha: float | None = None, reference_rng=12345,
               edit_reference: Callable[[list], None] | None = None) -> DrawAudit:
    """Audit one noised statistic of a mechanism on neighbours ``d0``, ``d1`` (and its mutant).

    ``fit(data, source)`` fits the mechanism on ``data`` with ``rng=source`` and returns it.
    ``draw`` is an index into the noise transcript or a name in the fitted ``noise_scales_``.
    A reference run on ``d0`` fixes every earlier release; the draw's query is captured on both
    datasets given those releases; then ``trials`` fresh releases per dataset are drawn in one
    vectorised source call. Each release is reduced to its log-likelihood ratio between the two
    queries (Gaussian: the projection on the shift; Laplace: ``sum_j |y_j - v0_j| - |y_j - v1_j|``),
    the most powerful statistic (Neyman-Pearson); the threshold event is chosen on half the
    trials and the bound computed on the other half (:func:`audit_epsilon`). The mutant is the same
    draw with ``mutant_factor`` times the noise (:class:`HalvedNoiseSource`); None skips it.
    ``real_alpha`` (default ``alpha``) is the confidence parameter of the real mechanism's audit: a
    smaller one makes a false refutation of a correct mechanism rarer where the pair realises
    the full claim. ``edit_reference(draws)`` may change the recorded outputs of earlier draws in place before
    they are replayed (the guarantee holds given *any* earlier releases, so an audit may pick them).
    """
    ref, draws = record_transcript(fit, d0, reference_rng)
    if edit_reference is not None:
        edit_reference(draws)
    if isinstance(draw, str):
        idx = draw_index(draws, getattr(ref, "noise_scales_", {}), draw)
    else:
        idx = int(draw)
    c0 = capture_draw(fit, d0, idx, draws, reference_rng)
    c1 = capture_draw(fit, d1, idx, draws, reference_rng)
    if c0.kind not in ("gaussian", "laplace") or c1.kind != c0.kind or c0.value.shape != c1.value.shape:
        raise ParameterError(f"draw {idx} is {c0.kind}/{c1.kind}: audit_draw needs the same additive draw on both")
    diff = np.flatnonzero(np.abs(c1.value.ravel() - c0.value.ravel()) > 1e-12)
    if not diff.size:
        raise ParameterError(f"draw {idx}: the two datasets give the same query; not a useful pair")
    v0, v1 = c0.value.ravel()[diff], c1.value.ravel()[diff]
    shift = v1 - v0

    if c0.kind == "gaussian":
        u = shift / np.linalg.norm(shift)

        def stat_of(out):  # the Gaussian log-likelihood ratio, up to an affine map
            return (out - v0) @ u
    else:
        def stat_of(out):  # the Laplace log-likelihood ratio times the scale (same scale for every coordinate)
            return np.round(np.sum(np.abs(out - v0) - np.abs(out - v1), axis=1), 9)

    def runner(factor):
        def batch(which, rng, k):
            return stat_of(redraw(c0 if which == 0 else c1, rng, k, factor, subset=diff))
        return batch

    kw = dict(d0=0, d1=1, trials=int(trials), alpha=alpha, delta=delta, claimed=claimed,
              max_batch=200_000)
    real = audit_epsilon(batch=runner(1.0), seed=seed, **dict(kw, alpha=alpha if real_alpha is None else real_alpha))
    mut = None if mutant_factor is None else audit_epsilon(batch=runner(float(mutant_factor)), seed=seed + 1, **kw)
    return DrawAudit(index=idx, kind=c0.kind, shift=shift, draw0=c0, draw1=c1, real=real, mutant=mut)
