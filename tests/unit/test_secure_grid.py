"""The secure source's grid is a function of public quantities only (sensitivity, coordinates, a public bound)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privrelease.engine import SufficientStats
from privrelease.errors import InputDataError, ParameterError
from privrelease.mechanisms.jiang.pca import JiangPCA
from privrelease.noise import SecureSource, make_source
from privrelease.noise.samplers import grid_step
from privrelease.schema.encoding import EncodedDomain


def test_grid_step_is_public_and_widens_only_from_a_public_bound():
    assert grid_step(1.0, 1.0) == 2.0**-20
    assert grid_step(1.0, 1.0, value_bound=2.0**30) == 2.0**-20
    assert grid_step(1.0, 1.0, value_bound=2.0**30 + 1) == 2.0**-19
    with pytest.raises(ParameterError):
        grid_step(0.0, 1.0)


def test_secure_grid_does_not_depend_on_the_value():
    """Defect 2 (secure grid read off the data): the grid was widened from max |value|, so two
    neighbouring values on either side of 2^50 grid units got different lattices and noise
    scales. Now the grid follows the declared public bound, and without one a value beyond the
    grid's range is refused instead of widening it."""
    src = SecureSource()
    v, v_nb = np.array([2.0**30 + 1]), np.array([2.0**30 - 1])  # sensitivity 1: base grid 2^-20 holds 2^30
    with src.value_bound(2.0**31):
        out, scale = src.add_laplace(v, 2.0, 1.0, coords=1)
        out_nb, scale_nb = src.add_laplace(v_nb, 2.0, 1.0, coords=1)
        assert scale == scale_nb == src.laplace_noise_scale(2.0, 1.0, 1)
        gamma = grid_step(2.0, 1.0, 2.0**31)
        assert gamma == 2.0**-19
        for o in (out, out_nb):
            assert np.array_equal(o / gamma, np.round(o / gamma))
        g_out, std = src.add_gaussian(v, 2.0, 3.0, coords=1)
        assert std == src.gaussian_noise_std(2.0, 3.0, 1) == 3.0 * (2.0 + grid_step(2.0, 1.0, 2.0**31))
    with pytest.raises(InputDataError, match="no public bound"):
        src.add_laplace(np.array([2.0**31 + 1]), 2.0, 1.0, coords=1)
    with pytest.raises(ParameterError):
        src.set_value_bound(math.inf)
    # the seeded source accepts (and ignores) the declaration
    seeded = make_source(0)
    with seeded.value_bound(10.0):
        assert seeded.add_laplace(np.zeros(2), 1.0, 1.0, 2)[1] == 1.0


def _jiang_stats(n: int, moved: bool) -> SufficientStats:
    """8 categorical variables of 100 levels, every record at level 0 (or one record replaced by one at level 1)."""
    p = 800
    X0 = np.zeros(p)
    X0[np.arange(8) * 100] = 1.0
    s1, s2 = n * X0, n * np.outer(X0, X0)
    if moved:
        X1 = np.roll(X0, 1)  # the replaced record has level 1 in every variable
        s1 = s1 - X0 + X1
        s2 = s2 - np.outer(X0, X0) + np.outer(X1, X1)
    return SufficientStats(p=p, n=n, s1=s1, s2=s2)


def test_jiang_pca_secure_release_has_the_same_grid_on_neighbouring_data():
    """Defect 2 as reported: jiang-pca on 8 categorical columns of 100 levels with n = 2^18 + 1. One
    dataset's moments reached 2^18 + 1 (grid 2^-31, noise scale 176.00029914), its neighbour's only
    2^18 (grid 2^-32, scale 176.00014957): a perfect distinguisher. Now the grid comes from the public
    n, and both releases have the same scale and lattice."""
    dom = EncodedDomain(p=800, numeric=(), blocks=tuple((100 * j, 100 * j + 100) for j in range(8)))
    n = 2**18 + 1
    scales, lattices = [], []
    for moved in (False, True):
        m = JiangPCA(epsilon=1.0, n_components=2, domain=dom, rng=None).fit_stats(_jiang_stats(n, moved))
        scales.append(m.noise_scales_["moments"])
        released = np.concatenate([m.mean_ * n, (m.explained_variance_)])  # touch the release
        assert np.all(np.isfinite(released))
        lattices.append(grid_step(m.sensitivities_["moments_l1"], 800 + 800 * 801 // 2, float(n)))
    assert scales[0] == scales[1]
    assert lattices[0] == lattices[1]
    assert scales[0] == pytest.approx(176.0, rel=1e-5)
