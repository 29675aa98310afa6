"""Noise calibration, apart from sampling: from a privacy target to a noise multiplier.

Two calibrations of Gaussian noise exist and are kept apart by name:

* :func:`analytic_gaussian_multiplier` ``(epsilon, delta) -> sigma / Delta`` for ONE
  Gaussian mechanism that must be ``(epsilon, delta)``-DP on its own (Balle and Wang 2018);
* :func:`zcdp_noise_multiplier` ``rho -> sigma / Delta`` for one Gaussian mechanism
  that spends a share ``rho`` of a zCDP budget found by :func:`calibrate_rho`.

Neither draws anything: a mechanism knows its noise scales before the first draw.
The rest of this module documents the zCDP route.

Calibration of Gaussian-mechanism releases: zero-concentrated DP and its (epsilon, delta) conversion.

A release made of Gaussian mechanisms is described by its total zCDP parameter
``rho``: a Gaussian mechanism with L2 sensitivity ``Delta`` and noise standard
deviation ``sigma`` is ``Delta^2 / (2 sigma^2)``-zCDP (Bun and Steinke, TCC 2016,
Prop. 1.6) and zCDP parameters add under composition. A mechanism is given a
target ``(epsilon, delta)`` and a split of ``rho`` into named shares; this module
finds the largest total ``rho`` whose composed mechanism is ``(epsilon, delta)``-DP
according to Google's maintained ``dp_accounting`` library.

This is a DP primitive below both the mechanisms (which need it at fit time to choose
their noise) and :mod:`privrelease.accounting.zcdp` (which re-exports it and adds the
reporting conversions).

Two accounting modes (``mode``; :func:`accounting_mode` chooses ``"zcdp"`` for every
release unless a seeded experiment asks for ``"gaussian"``), and the selection step:

* ``"gaussian"`` (continuous Gaussian noise only: seeded experiments that ask for it). A composition of
  Gaussian mechanisms with total ``rho`` has exactly the privacy profile of one
  Gaussian mechanism with noise multiplier ``1 / sqrt(2 rho)`` (the privacy loss of
  each is a Gaussian random variable; Gaussian differential privacy composes as
  ``mu = sqrt(sum mu_i^2)``, Dong, Roth and Su 2022, Cor. 3.3). The tight
  ``(epsilon, delta)`` is that single Gaussian's (Balle and Wang 2018), calibrated by
  bisection on its exact formula (:func:`analytic_gaussian_multiplier`), or with
  ``dp_accounting``'s PLD accountant when a selection step is composed.
* ``"zcdp"`` (any rho-zCDP mechanism, e.g. the discrete Gaussian of the secure
  source, which is ``Delta^2 / (2 sigma^2)``-zCDP for integer shifts: Canonne, Kamath
  and Steinke 2020, Thm. 14). Converted with ``dp_accounting``'s RDP accountant on a
  ``ZCDpEvent`` (RDP ``epsilon(alpha) = rho alpha``), which uses the improved
  RDP-to-DP conversion. Valid for every rho-zCDP mechanism, slightly looser.
* A selection step by the exponential mechanism with parameter ``eps_sel`` (the
  private choice of the dimension) is pure ``eps_sel``-DP. In ``"gaussian"`` mode it
  is composed in the PLD accountant as binary randomized response with parameter
  ``eps_sel``, which dominates every ``eps_sel``-DP mechanism (Kairouz, Oh and
  Viswanath 2015, Thm. 2.1); in ``"zcdp"`` mode it counts as ``eps_sel^2 / 8``-zCDP
  (the exponential mechanism is ``eps_sel``-bounded-range, hence
  ``eps_sel^2 / 8``-zCDP: Cesar and Rogers 2021, Lemma 3.2).

Neighbouring relation. The Gaussian sensitivities the mechanisms pass in are
replace-one (R1) sensitivities. ``dp_accounting``'s ``REPLACE_ONE`` Gaussian event
assumes a replacement moves the query by at most 2 (a removal plus an addition of
unit sensitivity), so a Gaussian with std ``sigma`` and R1 sensitivity ``Delta`` is
entered as ``GaussianDpEvent(2 sigma / Delta)`` under ``REPLACE_ONE`` (equivalently
``GaussianDpEvent(sigma / Delta)`` under ``ADD_OR_REMOVE_ONE``: the profile of a
Gaussian mechanism depends only on ``Delta / sigma``).
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy.special import log_ndtr, ndtr

from ..errors import ParameterError
from ..noise.samplers import _laplace_scale

MODES = ("gaussian", "zcdp")


def _dpa():
    import dp_accounting

    return dp_accounting


def _rr_noise_parameter(eps_sel: float) -> float:
    """Binary randomized response with parameter eps: report truthfully w.p. e^eps / (1 + e^eps)."""
    # dp_accounting's RR reports the true value w.p. 1 - p + p / k; k = 2 gives ratio (2 - p) / p = e^eps
    return 2.0 / (1.0 + math.exp(eps_sel))


@lru_cache(maxsize=1024)
def epsilon_for(rho: float, delta: float, mode: str = "gaussian", eps_sel: float = 0.0, rounds: int = 1) -> float:
    """The epsilon (at ``delta``) of a release of total Gaussian ``rho`` plus ``rounds`` optional
    ``eps_sel``-DP selections (each one exponential mechanism). A pure function of public numbers,
    cached: every budget split of a fit asks for it, and a root-finding accountant takes milliseconds."""
    dpa = _dpa()
    if mode not in MODES:
        raise ParameterError(f"accounting mode must be one of {MODES}, got {mode!r}")
    if rho <= 0 and eps_sel <= 0:
        return 0.0
    if mode == "zcdp":
        acc = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
        acc.compose(dpa.ZCDpEvent(rho + int(rounds) * eps_sel**2 / 8.0))
        return float(acc.get_epsilon(delta))
    if eps_sel <= 0:
        return float(dpa.get_epsilon_gaussian(1.0 / math.sqrt(2.0 * rho), delta))
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                               value_discretization_interval=1e-3)
    if rho > 0:
        acc.compose(dpa.GaussianDpEvent(2.0 / math.sqrt(2.0 * rho)))
    acc.compose(dpa.RandomizedResponseDpEvent(_rr_noise_parameter(eps_sel), 2), int(rounds))
    return float(acc.get_epsilon(delta))


@lru_cache(maxsize=256)
def calibrate_rho(epsilon: float, delta: float, mode: str = "gaussian", selection_share: float = 0.0,
                  selection_rounds: int = 1) -> float:
    """Largest total zCDP ``rho`` whose release is ``(epsilon, delta)``-DP per ``dp_accounting``.

    ``selection_share`` of ``rho`` goes to ``selection_rounds`` exponential-mechanism selections,
    each with ``eps_sel = sqrt(8 rho_sel / rounds)`` (so that together they are ``rho_sel``-zCDP;
    in ``"gaussian"`` mode each is composed as randomized response); the rest is Gaussian.

    >>> round(calibrate_rho(1.0, 1e-5), 4)
    0.0359
    """
    if not (epsilon > 0) or not (0 < delta < 1):
        raise ParameterError(f"calibration needs epsilon > 0 and 0 < delta < 1, got ({epsilon}, {delta})")
    if mode not in MODES:
        raise ParameterError(f"accounting mode must be one of {MODES}, got {mode!r}")
    if math.isinf(epsilon):
        return math.inf
    if selection_share <= 0 and mode == "gaussian":
        # one Gaussian with multiplier 1 / sqrt(2 rho): the analytic Gaussian, on the safe side of delta
        return 1.0 / (2.0 * analytic_gaussian_multiplier(epsilon, delta) ** 2)

    def eps_of(rho):
        eps_sel = math.sqrt(8.0 * rho * selection_share / selection_rounds) if selection_share > 0 else 0.0
        return epsilon_for(rho * (1.0 - selection_share), delta, mode, eps_sel, selection_rounds)

    lo, hi = 0.0, max(epsilon, 1e-6)
    while eps_of(hi) < epsilon:
        lo, hi = hi, hi * 2.0
    for _ in range(40 if mode == "zcdp" else 22):
        mid = 0.5 * (lo + hi)
        if eps_of(mid) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-4 * hi:
            break
    return lo


def accounting_mode(accounting: str, secure: bool) -> str:
    """The accounting a Gaussian-mechanism release uses: ``"auto"`` is ``"zcdp"`` for every source.

    The secure source's grid-snapped discrete Gaussian is proven ``rho``-zCDP (Canonne, Kamath and
    Steinke 2020), not to have the continuous Gaussian's exact privacy profile, so a real release
    converts through zCDP; a seeded run calibrates the same way, so that its noise (and every
    number measured on it) is the noise of a real release. ``"gaussian"`` (the tight profile of
    continuous noise) may be chosen for seeded experiments only.
    """
    if accounting not in ("auto",) + MODES:
        raise ParameterError(f"accounting must be 'auto' or one of {MODES}, got {accounting!r}")
    if accounting == "gaussian" and secure:
        raise ParameterError("accounting='gaussian' holds for continuous Gaussian noise (seeded experiments); the "
                             "secure source's discrete Gaussian noise is accounted in zCDP (accounting='auto')")
    return "zcdp" if accounting == "auto" else accounting


def zcdp_noise_multiplier(rho_part: float) -> float:
    """Noise multiplier ``sigma / Delta`` making one Gaussian mechanism ``rho_part``-zCDP: ``1 / sqrt(2 rho)``."""
    if rho_part == math.inf:
        return 0.0
    if not (rho_part > 0):
        raise ParameterError(f"a zCDP share must be > 0, got {rho_part}")
    return 1.0 / math.sqrt(2.0 * rho_part)


#: Relative margin below the target delta kept by :func:`analytic_gaussian_multiplier`; it covers the
#: floating-point error of :func:`balle_wang_delta` (below 1e-13 relative) and the rounding of
#: ``sigma -> rho -> sigma`` (1e-16), so the exact delta never exceeds the target.
DELTA_MARGIN = 1e-9


def balle_wang_delta(s: float, epsilon: float) -> float:
    """The exact delta at ``epsilon`` of one Gaussian mechanism with ``sigma / Delta_2 = s`` (Balle and Wang 2018).

    ``delta = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s)``, evaluated as
    ``Phi(x1) (1 - exp(eps + log Phi(x2) - log Phi(x1)))`` so that the difference of two close
    tail probabilities keeps its relative precision (the direct form loses up to 1e-11).

    >>> f"{balle_wang_delta(3.0, 1.0):.4e}"
    '2.0751e-04'
    """
    a, b = 1.0 / (2.0 * s), epsilon * s
    x1, x2 = a - b, -a - b
    return float(ndtr(x1) * -math.expm1(epsilon + float(log_ndtr(x2)) - float(log_ndtr(x1))))


@lru_cache(maxsize=256)
def analytic_gaussian_multiplier(epsilon: float, delta: float) -> float:
    """Smallest ``sigma / Delta_2`` giving (epsilon, delta)-DP: the analytic Gaussian mechanism.

    Balle and Wang (ICML 2018, Thm. 8): Gaussian noise of standard deviation ``s Delta_2``
    is (epsilon, delta)-DP iff ``Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s) <= delta``.
    Valid for every epsilon > 0 (the classical ``sqrt(2 ln(1.25/delta))/eps`` is proven
    only for epsilon < 1, and is larger). Solved by bisection on ``s`` against
    ``delta (1 - DELTA_MARGIN)`` with :func:`balle_wang_delta`; the upper end of the final
    bracket is returned, so the exact delta of the result never exceeds ``delta``.

    >>> round(analytic_gaussian_multiplier(1.0, 1e-5), 3)
    3.731
    """
    if not (epsilon > 0) or not (0 < delta < 1):
        raise ParameterError(f"the Gaussian mechanism needs epsilon > 0 and delta in (0, 1), got {epsilon}, {delta}")
    if math.isinf(epsilon):
        return 0.0
    target = delta * (1.0 - DELTA_MARGIN)

    def excess(s):
        return balle_wang_delta(s, epsilon) - target

    lo, hi = 1e-6, 1.0
    while excess(hi) > 0:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def laplace_scale(l1_sensitivity: float, epsilon: float) -> float:
    """Laplace mechanism: scale ``Delta_1 / epsilon`` gives epsilon-DP (Dwork et al. 2006); 0 for epsilon = inf.

    The noise sources compute the same scale with the same function.

    >>> laplace_scale(2.0, 0.5)
    4.0
    """
    return _laplace_scale(l1_sensitivity, epsilon)
