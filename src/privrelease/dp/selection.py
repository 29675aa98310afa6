"""Selection by the exponential mechanism, sampled exactly (the one implementation every caller uses).

The exponential mechanism (McSherry and Talwar 2007) picks candidate ``k`` with
probability proportional to ``mu(k) exp(epsilon u_k / (2 Delta_u))`` where ``u`` is a
utility of L-infinity sensitivity ``Delta_u`` (one record changes every ``u_k`` by at
most ``Delta_u``) and ``mu`` a data-independent base measure (e.g. the length of an
interval of split points). It is ``epsilon``-DP, and ``epsilon``-bounded-range, hence
``epsilon^2 / 8``-zCDP (Cesar and Rogers 2021).

Sampling: the source's :meth:`~privrelease.noise.RandomSource.exponential_choice` draws the index
with probability exactly ``mu_k exp(r u_k) / sum_j mu_j exp(r u_j)`` for the floating-point
utilities ``u`` the mechanism computed, ``mu_k = exp(log_base_k - max log_base)`` (as computed:
data-independent, so whatever rounding it carries is part of the public base measure) and ``r``
the largest double not above ``epsilon / (2 Delta_u)`` (:func:`selection_rate`). Every candidate of
positive base measure keeps a positive probability, so the pure-DP ratio bound holds for every
output, exactly, whenever the computed utilities move by at most ``Delta_u`` between neighbours
(docs/derivations.md). Seeded sources draw the same bits reproducibly.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import ParameterError


def selection_rate(epsilon: float, sensitivity: float) -> float:
    """The largest double ``r <= epsilon / (2 Delta_u)`` (compared exactly): the mechanism's factor on utilities.

    >>> r = selection_rate(1.0, 3.0)
    >>> Fraction(r) <= Fraction(1, 6) < Fraction(math.nextafter(r, 1.0))
    True
    """
    if not (sensitivity > 0) or not math.isfinite(sensitivity):
        raise ParameterError(f"the utility sensitivity must be a finite number > 0, got {sensitivity}")
    if not (epsilon > 0) or not math.isfinite(epsilon):
        raise ParameterError(f"epsilon must be a finite number > 0, got {epsilon}")
    r = float(epsilon) / (2.0 * float(sensitivity))
    while 2 * Fraction(r) * Fraction(float(sensitivity)) > Fraction(float(epsilon)):
        r = math.nextafter(r, 0.0)
    return r


def exponential_mechanism(scores, epsilon: float, sensitivity: float, source, *, log_base=None,
                          axis: int = -1) -> np.ndarray | int:
    """Exponential mechanism on utilities ``scores`` (higher is better): epsilon-DP.

    Parameters
    ----------
    scores : array
        Utilities ``u_k``; with more than one dimension, one independent selection per
        slice along ``axis`` (each one epsilon-DP about the records its utilities read).
    epsilon : float in (0, inf]
        ``inf`` returns the limit of the mechanism as epsilon grows: the first argmax of
        ``scores`` among candidates of positive base measure, no randomness (a
        non-private limit for tests only; releases refuse non-finite epsilon).
    sensitivity : float > 0
        ``Delta_u``, the largest change of any ``u_k`` when one record is replaced.
    source : privrelease.noise.RandomSource
    log_base : array or None
        Log of a data-independent base measure ``mu(k)`` (e.g. interval lengths), broadcastable
        to ``scores``; ``-inf`` excludes a candidate.

    Notes
    -----
    Privacy (McSherry-Talwar): for neighbours, ``exp(r u_k)`` changes by a factor at most
    ``e^{r Delta_u} <= e^{eps / 2}`` and the normaliser by at most the same factor, so each
    probability changes by at most ``e^eps``. The sampler draws these probabilities exactly
    (:mod:`privrelease.noise.exact_choice`), so the bound holds for every output.

    >>> from privrelease.noise import make_source
    >>> exponential_mechanism([0.0, 100.0, 0.0], 1.0, 1.0, make_source(0))
    1
    """
    s = np.asarray(scores, dtype=np.float64)
    lb = None if log_base is None else np.broadcast_to(np.asarray(log_base, dtype=np.float64), s.shape)
    if math.isinf(float(epsilon)):
        if lb is not None:
            s = np.where(np.isfinite(lb), s, -np.inf)
        idx = np.argmax(s, axis=axis)
        return int(idx) if s.ndim == 1 else idx
    rate = selection_rate(epsilon, sensitivity)
    s = np.moveaxis(s, axis, -1)
    base = None
    if lb is not None:
        lb = np.moveaxis(lb, axis, -1)
        top = np.max(lb, axis=-1, keepdims=True)
        with np.errstate(invalid="ignore"):
            base = np.where(np.isfinite(lb), np.exp(lb - np.where(np.isfinite(top), top, 0.0)), 0.0)
        base = base.reshape(-1, s.shape[-1])
    idx = source.exponential_choice(s.reshape(-1, s.shape[-1]), rate, base).reshape(s.shape[:-1])
    return int(idx) if s.ndim == 1 else idx
