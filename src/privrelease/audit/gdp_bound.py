"""Empirical lower bound on the GDP parameter mu, and the audit of all of a mechanism's draws at once.

A mechanism is mu-GDP (Dong, Roth and Su 2022) when every test between two neighbours has
false-negative rate ``FNR >= Phi(Phi^{-1}(1 - FPR) - mu)``. Hence for any test

    mu >= Phi^{-1}(1 - FPR) - Phi^{-1}(FNR),

and with Clopper-Pearson upper bounds on both error rates (level ``1 - alpha/2`` each) the
right-hand side evaluated at the upper bounds is a lower bound on mu at level ``1 - alpha``
(it decreases in each rate). A Gaussian mechanism of sensitivity Delta and noise std sigma is
``Delta / sigma``-GDP, and ``rho``-zCDP Gaussian releases composed are ``sqrt(2 rho)``-GDP, so the
claim of a release calibrated to a total Gaussian ``rho`` is ``mu = sqrt(2 rho)``. Unlike an
epsilon bound at a small delta, which needs the tail of the privacy loss, the mu bound uses
the whole trade-off curve and is close to the truth with tens of thousands of trials.

:func:`audit_draws` audits the whole transcript of a mechanism (every Gaussian draw) on a
neighbouring pair: each draw's query is captured on both datasets given the same earlier
releases (a reference run on d0, as in :func:`~privrelease.audit.audit_draw`). The draws then
form a non-adaptive composition of Gaussian mechanisms of the mechanism's own sensitivities and
noise, so the claim must hold for them jointly; the most powerful statistic is the sum of
the per-draw log-likelihood ratios, ``sum_i <y_i - v0_i, v1_i - v0_i> / sigma_i^2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.special import ndtri

from ..errors import ParameterError
from .epsilon_bound import AuditResult, _collect_pair, audit_epsilon, clopper_pearson
from .noise_transcript import capture_draw, draw_index, record_transcript, redraw

__all__ = ["MuResult", "audit_mu", "mu_lower_bound", "DrawsAudit", "audit_draws", "capture_all"]

_CANDIDATES = 256


@dataclass
class MuResult:
    """Outcome of :func:`mu_lower_bound`: ``mu_lower`` holds with probability ``1 - alpha``."""

    mu_lower: float
    mu_empirical: float
    fpr_high: float
    fnr_high: float
    threshold: float
    side: str
    n0: int
    n1: int
    alpha: float
    claimed: float | None = None

    @property
    def caught(self) -> bool | None:
        return None if self.claimed is None else bool(self.mu_lower > self.claimed)

    def summary(self) -> str:
        s = (f"mu >= {self.mu_lower:.4f} (confidence {1 - self.alpha:.3g}; stat {self.side} {self.threshold:.6g}; "
             f"FPR <= {self.fpr_high:.4g}, FNR <= {self.fnr_high:.4g}; point {self.mu_empirical:.4f})")
        if self.claimed is not None:
            s += f"; claimed {self.claimed:.4g}: {'REFUTED' if self.caught else 'consistent'}"
        return s


def _mu_of(fpr, fnr):
    fpr, fnr = np.clip(fpr, 1e-300, 1.0), np.clip(fnr, 1e-300, 1.0)
    return np.maximum(ndtri(1.0 - fpr) - ndtri(fnr), 0.0)


def _errors(s0, s1, t, side):
    """(false positives on d0, false negatives on d1) of the test 'd1 when stat side t'."""
    if side == ">":
        return int(np.sum(s0 > t)), int(np.sum(s1 <= t))
    return int(np.sum(s0 <= t)), int(np.sum(s1 > t))


def mu_lower_bound(s0, s1, alpha: float = 0.05, selection_fraction: float = 0.5,
                   claimed: float | None = None) -> MuResult:
    """Lower confidence bound on mu from scalar statistics of runs on d0 (``s0``) and d1 (``s1``).

    The threshold and side of the test are chosen on the first ``selection_fraction`` of each
    sample (maximising the same bound there); the bound is computed on the rest, with one-sided
    Clopper-Pearson upper bounds at ``alpha / 2`` on the two error rates.
    """
    s0, s1 = np.asarray(s0, dtype=np.float64).ravel(), np.asarray(s1, dtype=np.float64).ravel()
    m0, m1 = int(len(s0) * selection_fraction), int(len(s1) * selection_fraction)
    if min(m0, m1, len(s0) - m0, len(s1) - m1) < 10:
        raise ParameterError("too few trials for the selection/estimation split (need >= 10 in each part)")
    a, b = s0[:m0], s1[:m1]
    cand = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0, 1, _CANDIDATES)))
    sa, sb = np.sort(a), np.sort(b)
    le0, le1 = np.searchsorted(sa, cand, side="right"), np.searchsorted(sb, cand, side="right")
    best = (-1.0, None, None)
    for side, fp, fn in ((">", m0 - le0, le1), ("<=", le0, m1 - le1)):
        score = _mu_of(clopper_pearson(fp, m0, alpha / 2, "upper"), clopper_pearson(fn, m1, alpha / 2, "upper"))
        i = int(np.argmax(score))
        if score[i] > best[0]:
            best = (float(score[i]), float(cand[i]), side)
    _, t, side = best
    e0, e1 = s0[m0:], s1[m1:]
    fp, fn = _errors(e0, e1, t, side)
    fpr_hi = float(clopper_pearson(fp, e0.size, alpha / 2, "upper"))
    fnr_hi = float(clopper_pearson(fn, e1.size, alpha / 2, "upper"))
    point = float(_mu_of(max(fp, 0.5) / e0.size, max(fn, 0.5) / e1.size))
    return MuResult(mu_lower=float(_mu_of(fpr_hi, fnr_hi)), mu_empirical=point, fpr_high=fpr_hi, fnr_high=fnr_hi,
                    threshold=t, side=side, n0=e0.size, n1=e1.size, alpha=float(alpha), claimed=claimed)


def audit_mu(batch: Callable[[Any, np.random.Generator, int], Any], d0, d1, trials: int, seed=0,
             alpha: float = 0.05, claimed: float | None = None, max_batch: int = 200_000) -> MuResult:
    """:func:`mu_lower_bound` on ``trials`` runs of ``batch(data, rng, k)`` (a scalar statistic) per dataset."""
    s0, s1 = _collect_pair(None, batch, d0, d1, seed, int(trials), int(max_batch))
    if s0.ndim != 1:
        raise ParameterError("audit_mu needs a scalar statistic per run")
    return mu_lower_bound(s0, s1, alpha=alpha, claimed=claimed)


def capture_all(fit: Callable[[Any, Any], Any], d0, d1, reference_rng=12345, only=None,
                edit_reference: Callable[[list, Any], None] | None = None) -> list:
    """Every additive draw's query on d0 and d1, the earlier releases replayed from one run on d0.

    Returns ``[(draw on d0, draw on d1), ...]`` in transcript order (Gumbel draws are skipped:
    they are selections, audited on their own). ``only``: the draws to capture, as indices or
    names of the fitted ``noise_scales_`` (:func:`draw_index`). ``edit_reference(draws, ref)`` may
    set the recorded outputs of earlier draws (the guarantee of each draw holds given *any*
    earlier releases, so an audit may put them where a worst-case pair needs them); ``ref`` is the
    reference run's fitted mechanism.
    """
    ref, draws = record_transcript(fit, d0, reference_rng)
    if edit_reference is not None:
        edit_reference(draws, ref)
    keep = None
    if only is not None:
        scales = getattr(ref, "noise_scales_", {})
        keep = {draw_index(draws, scales, w) if isinstance(w, str) else int(w) for w in only}
    out = []
    for i, d in enumerate(draws):
        if d.kind == "gumbel" or (keep is not None and i not in keep):
            continue
        c0 = capture_draw(fit, d0, i, draws, reference_rng)
        c1 = capture_draw(fit, d1, i, draws, reference_rng)
        if c0.kind != c1.kind or c0.value.shape != c1.value.shape:
            raise ParameterError(f"draw {i} differs in kind or shape between the two datasets")
        out.append((c0, c1))
    return out


@dataclass
class DrawsAudit:
    """Outcome of :func:`audit_draws`: the per-draw shifts in noise stds and the joint audits."""

    shifts: list  # per draw: ||v1 - v0|| / sigma (the draw's realised mu)
    sensitivity_ratios: list  # per draw: ||v1 - v0|| / its declared sensitivity (at most 1)
    mu_exact: float  # sqrt(sum shifts^2): the true mu of the captured composition
    mu: MuResult
    epsilon: AuditResult | None
    extra: dict = field(default_factory=dict)

    def summary(self) -> str:
        s = f"mu of the pair {self.mu_exact:.4f}; {self.mu.summary()}"
        return s if self.epsilon is None else s + f" | {self.epsilon.summary()}"


def audit_draws(fit: Callable[[Any, Any], Any], d0, d1, *, trials: int = 100_000, claimed_mu: float | None = None,
                claimed_epsilon: float | None = None, delta: float = 0.0, seed: int = 0, alpha: float = 0.05,
                reference_rng=12345, only=None, edit_reference=None) -> DrawsAudit:
    """Audit all Gaussian draws of a mechanism jointly (white box) on neighbours ``d0``, ``d1``.

    ``fit(data, source)`` fits the mechanism with ``rng=source``. Every draw's query is captured on
    both datasets (:func:`capture_all`) and its noise redrawn ``trials`` times with the draw's own
    calibration (sensitivity and noise multiplier as handed to the source, so a mutant that changes
    either is redrawn as the mutant draws). The statistic is the sum of the log-likelihood ratios,
    weighted with each draw's own std. Returns the GDP bound (:func:`mu_lower_bound`) and, when
    ``claimed_epsilon`` is given, the epsilon bound at ``delta`` (:func:`audit_epsilon`).
    ``only`` and ``edit_reference``: as for :func:`capture_all` (``only`` audits some draws jointly).
    """
    pairs = capture_all(fit, d0, d1, reference_rng, only, edit_reference)
    parts, shifts, ratios = [], [], []
    for c0, c1 in pairs:
        if c0.kind != "gaussian":
            raise ParameterError(f"audit_draws handles Gaussian draws; draw {c0.index} is {c0.kind}")
        diff = np.flatnonzero(np.abs(c1.value.ravel() - c0.value.ravel()) > 1e-12)
        shift = c1.value.ravel()[diff] - c0.value.ravel()[diff]
        sigma = _std_of(c0)
        norm = float(np.linalg.norm(shift))
        shifts.append(norm / sigma)
        ratios.append(norm / c0.sensitivity if c0.sensitivity else 0.0)
        if diff.size:
            parts.append((c0, c1, diff, shift / sigma**2))
    mu_exact = math.sqrt(sum(s * s for s in shifts))

    def batch(which, rng, k):
        total = np.zeros(k)
        for c0, c1, diff, w in parts:
            out = redraw(c0 if which == 0 else c1, rng, k, subset=diff)
            total += (out - c0.value.ravel()[diff]) @ w
        return total

    s0, s1 = _collect_pair(None, batch, 0, 1, seed, int(trials), 200_000)
    mu = mu_lower_bound(s0, s1, alpha=alpha, claimed=claimed_mu)
    eps = None
    if claimed_epsilon is not None:
        eps = audit_epsilon(batch=batch, d0=0, d1=1, trials=int(trials),
                            seed=seed + 1, alpha=alpha, delta=delta, claimed=claimed_epsilon, max_batch=200_000)
    return DrawsAudit(shifts=shifts, sensitivity_ratios=ratios, mu_exact=mu_exact, mu=mu, epsilon=eps)


def _std_of(draw) -> float:
    """The noise std a seeded source gives a captured Gaussian draw (its calibration)."""
    from ..noise import make_source

    return float(make_source(np.random.default_rng(0)).gaussian_noise_std(draw.sensitivity, draw.param, draw.coords))
