"""Selection by the exponential mechanism, sampled with the Gumbel-max trick (the one implementation).

The exponential mechanism (McSherry and Talwar 2007) picks candidate ``k`` with
probability proportional to ``mu(k) exp(epsilon u_k / (2 Delta_u))`` where ``u`` is a
utility of L-infinity sensitivity ``Delta_u`` (one record changes every ``u_k`` by at
most ``Delta_u``) and ``mu`` a data-independent base measure (e.g. the length of an
interval of split points). It is ``epsilon``-DP, and ``epsilon``-bounded-range, hence
``epsilon^2 / 8``-zCDP (Cesar and Rogers 2021).

Gumbel-max: ``argmax_k (l_k + G_k)`` with i.i.d. standard Gumbel ``G_k`` is distributed
as ``softmax(l)``, so with ``l_k = epsilon u_k / (2 Delta_u) + log mu(k)`` one argmax
samples the mechanism exactly (up to the floating-point resolution of the Gumbel
draws, which come from the noise source's uniforms).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError


def gumbel_max(logits, source, axis: int = -1) -> np.ndarray | int:
    """Index of ``argmax(logits + G)`` along ``axis`` with Gumbel noise from ``source.gumbel``.

    Samples from ``softmax(logits)`` along ``axis``; ``-inf`` logits are never chosen.
    Returns an int for a 1-d input, an integer array otherwise.
    """
    logits = np.asarray(logits, dtype=np.float64)
    idx = np.argmax(logits + source.gumbel(logits.shape), axis=axis)
    return int(idx) if logits.ndim == 1 else idx


def exponential_logits(scores, epsilon: float, sensitivity: float, log_base=None) -> np.ndarray:
    """``epsilon u / (2 Delta_u) (+ log mu)``: the log-probabilities (up to a constant) of the mechanism."""
    if not (sensitivity > 0) or not math.isfinite(sensitivity):
        raise ParameterError(f"the utility sensitivity must be a finite number > 0, got {sensitivity}")
    if not (epsilon > 0):
        raise ParameterError(f"epsilon must be > 0, got {epsilon}")
    logits = float(epsilon) * np.asarray(scores, dtype=np.float64) / (2.0 * float(sensitivity))
    if log_base is not None:
        logits = logits + np.asarray(log_base, dtype=np.float64)
    return logits


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
        Log of a data-independent base measure ``mu(k)`` (e.g. interval lengths).

    Notes
    -----
    Privacy (McSherry-Talwar): for neighbours, ``exp(eps u_k / (2 Delta))`` changes by a
    factor at most ``e^{eps / 2}`` and the normaliser by at most the same factor, so each
    probability changes by at most ``e^eps``.

    >>> from privrelease.noise import make_source
    >>> exponential_mechanism([0.0, 100.0, 0.0], 1.0, 1.0, make_source(0))
    1
    """
    if math.isinf(float(epsilon)):
        s = np.asarray(scores, dtype=np.float64)
        if log_base is not None:
            s = np.where(np.isfinite(np.asarray(log_base, dtype=np.float64)), s, -np.inf)
        idx = np.argmax(s, axis=axis)
        return int(idx) if s.ndim == 1 else idx
    return gumbel_max(exponential_logits(scores, epsilon, sensitivity, log_base), source, axis=axis)
