"""Zero-concentrated DP accounting with ``dp_accounting`` conversions to (epsilon, delta).

The calibration used by the mechanisms at fit time lives in
:mod:`privrelease.dp.calibration` (a DP primitive below the mechanisms and this layer); this module
re-exports it and adds the conversions a certificate or a budget ledger reports:

* :func:`epsilon_tight` - the exact profile of a composition of Gaussian mechanisms
  (one Gaussian with noise multiplier ``1 / sqrt(2 rho)``), via ``dp_accounting``'s PLD
  accountant;
* :func:`epsilon_rdp` - the RDP accountant's conversion of a ``rho``-zCDP event (valid
  for every rho-zCDP mechanism, e.g. discrete Gaussian noise);
* :func:`epsilon_classic` - Bun and Steinke's ``rho + 2 sqrt(rho ln(1/delta))`` (Prop. 1.3),
  the loosest, shown for comparison.

>>> rho = calibrate_rho(1.0, 1e-5)
>>> round(epsilon_tight(rho, 1e-5), 3), epsilon_rdp(rho, 1e-5) > 1.0, epsilon_classic(rho, 1e-5) > 1.0
(1.0, True, True)
"""

from __future__ import annotations

import math

from ..dp.calibration import calibrate_rho, epsilon_for, zcdp_noise_multiplier

__all__ = ["calibrate_rho", "epsilon_for", "zcdp_noise_multiplier", "epsilon_tight", "epsilon_rdp",
           "epsilon_classic", "conversions"]


def epsilon_tight(rho: float, delta: float) -> float:
    """Epsilon at ``delta`` of Gaussian mechanisms with total ``rho`` (PLD accountant, replace-one)."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    # REPLACE_ONE Gaussian events assume a replacement moves the query by 2 (see dp.calibration)
    acc.compose(dp_accounting.GaussianDpEvent(2.0 / math.sqrt(2.0 * rho)))
    return float(acc.get_epsilon(delta))


def epsilon_rdp(rho: float, delta: float) -> float:
    """Epsilon at ``delta`` of any ``rho``-zCDP mechanism (RDP accountant on a ``ZCDpEvent``)."""
    return epsilon_for(rho, delta, mode="zcdp")


def epsilon_classic(rho: float, delta: float) -> float:
    """``rho + 2 sqrt(rho ln(1/delta))`` (Bun and Steinke 2016, Prop. 1.3)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def conversions(rho: float, delta: float) -> dict:
    """All three conversions, for a certificate or a report."""
    return {"rho": rho, "delta": delta, "epsilon_tight_gaussian": epsilon_tight(rho, delta),
            "epsilon_rdp_zcdp": epsilon_rdp(rho, delta), "epsilon_classic_zcdp": epsilon_classic(rho, delta)}
