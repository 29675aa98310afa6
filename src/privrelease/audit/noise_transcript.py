"""Noise transcripts, replay and halved-noise mutants: the sources the privacy audits run mechanisms on.

Every DP mechanism draws its noise through a :class:`~privrelease.noise.RandomSource`
(``add_gaussian``, ``add_laplace``, ``exponential_choice``). The wrappers below sit between a mechanism
and its source, so an audit needs nothing from the mechanism beyond that public API:

* :class:`TranscriptSource` records every noise draw (the query value the mechanism hands
  to the source, its sensitivity and calibration, the noisy output). It can also *replay*
  the outputs of earlier draws and stop at draw ``k``: the mechanism then computes draw
  ``k``'s query on a dataset given fixed earlier releases. By adaptive composition each
  draw is private given any fixed earlier releases, so an audit of draw ``k`` alone, on
  the query values captured on two neighbours, is a valid audit of that statistic; and the
  noise can then be redrawn many times at once without rerunning the mechanism.
* :class:`HalvedNoiseSource` is the mutant: the selected draw (by index in the transcript)
  gets ``factor`` times its noise (the sensitivity handed to the source is scaled for
  additive noise; a selection is drawn with ``1 / factor`` times its rate, which is the
  exponential mechanism run at ``1 / factor`` times its epsilon).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import ParameterError

__all__ = ["NOISE_KINDS", "AsRealRelease", "HalvedNoiseSource", "NoiseDraw", "StopAtDraw", "TranscriptSource",
           "capture_draw", "draw_index", "exact_prefix", "record_transcript", "redraw"]

NOISE_KINDS = ("gaussian", "laplace", "selection")


@dataclass
class NoiseDraw:
    """One noise draw of a mechanism, as seen by its source.

    ``value`` is the noiseless query (for a selection: the utilities, ``-inf`` where the base measure
    is 0; one row per selection), ``sensitivity`` the one handed to the source (None for a
    selection), ``param`` the noise multiplier (Gaussian), epsilon (Laplace) or rate (selection:
    ``epsilon / (2 Delta_u)``), ``scale`` the noise std (Gaussian) or Laplace scale the source
    reports, ``output`` the noisy release (the chosen indices).
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
    from ..noise import make_source  # audit sits above the noise layer

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

    def words(self, n):
        return self.inner.words(n)

    def laplace_noise_scale(self, l1_sensitivity, epsilon, coords):
        return self.inner.laplace_noise_scale(l1_sensitivity, epsilon, coords)

    def gaussian_noise_std(self, l2_sensitivity, noise_multiplier, coords):
        return self.inner.gaussian_noise_std(l2_sensitivity, noise_multiplier, coords)

    def set_value_bound(self, bound):
        self.inner.set_value_bound(bound)

    def value_bound(self, bound):
        return self.inner.value_bound(bound)


class AsRealRelease(_WrappedSource):
    """Seeded noise that declares itself secure, so that a mechanism calibrates as for a real release.

    A real release (``rng=None``) draws discrete noise from OS entropy and cannot be repeated; a
    mechanism chooses its calibration from ``source.secure``. This wrapper forwards every draw to
    ``inner`` (for example a seeded :class:`TranscriptSource`) and reports ``secure = True``, so an
    audit measures the noise a real release is calibrated with, reproducibly (continuous Gaussian
    noise in place of the discrete one).
    """

    def __init__(self, inner=None):
        super().__init__(inner)
        self.secure = True
        self.description = "seeded, calibrated as a real release (audit only)"

    def add_gaussian(self, value, l2_sensitivity, noise_multiplier, coords):
        return self.inner.add_gaussian(value, l2_sensitivity, noise_multiplier, coords)

    def add_laplace(self, value, l1_sensitivity, epsilon, coords):
        return self.inner.add_laplace(value, l1_sensitivity, epsilon, coords)

    def gumbel(self, size):
        return self.inner.gumbel(size)

    def exponential_choice(self, scores, rate, base=None):
        return self.inner.exponential_choice(scores, rate, base)


def _register_source_api():
    """Make the wrappers RandomSource instances (so ``make_source`` hands them through unchanged)."""
    from ..noise import RandomSource

    for cls in (TranscriptSource, HalvedNoiseSource, AsRealRelease):
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

    def exponential_choice(self, scores, rate, base=None):
        scores = np.asarray(scores, dtype=np.float64)
        value = scores if base is None else np.where(np.asarray(base) > 0, scores, -np.inf)
        d = self._next("selection", value, None, rate, None, scores.shape[:-1])
        return self._replayed(d, self.inner.exponential_choice(scores, rate, base), None)[0]


class HalvedNoiseSource(_WrappedSource):
    """Mutant noise: the selected noise draw gets ``factor`` times its noise (default one half).

    ``draw``: the index of the draw in the mechanism's transcript (counting ``add_gaussian``,
    ``add_laplace`` and ``exponential_choice`` calls in order), a callable ``NoiseDraw -> bool``, or
    None for every draw. Additive draws are calibrated with ``factor`` times the sensitivity (the
    noise std or Laplace scale is multiplied by ``factor``); a selection is drawn at ``rate / factor``
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

    def exponential_choice(self, scores, rate, base=None):
        scores = np.asarray(scores, dtype=np.float64)
        f = self.factor if self._selected("selection", scores, None, rate, None, scores.shape[:-1]) else 1.0
        return self.inner.exponential_choice(scores, rate / f, base)


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

    Built draw by draw (each query captured with the exact earlier releases replayed); a
    selection takes the first candidate of largest score. The guarantee of a later statistic
    holds given *any* earlier releases, so an audit may fix them at these values, for example
    to put the clipping centre or the basis exactly where a worst-case pair needs them.
    """
    draws: list[NoiseDraw] = []
    for i in range(int(upto)):
        d = capture_draw(fit, data, i, draws, rng)
        d.output = np.argmax(d.value, axis=-1) if d.kind == "selection" else d.value.copy()
        d.scale = d.scale if d.kind == "selection" else 0.0
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
