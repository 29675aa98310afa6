"""Old import path of the zCDP calibration: it lives in :mod:`privrelease.dp.calibration`."""

from ..dp.calibration import MODES, calibrate_rho, epsilon_for

__all__ = ["MODES", "calibrate_rho", "epsilon_for"]
