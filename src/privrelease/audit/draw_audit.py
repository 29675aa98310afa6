"""Per-draw privacy audit: one noised statistic of a mechanism, audited on its captured queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import ParameterError
from .epsilon_bound import AuditResult, audit_epsilon
from .noise_transcript import NoiseDraw, capture_draw, draw_index, record_transcript, redraw

__all__ = ["DrawAudit", "audit_draw"]


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
