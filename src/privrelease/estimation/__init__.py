"""Estimation from released measurements: post-processing that sees only noisy marginals and their
noise scales, never the data or the privacy budget (kept apart from the mechanisms that release them).
The graphical model fitted to noisy marginals is :mod:`.graphical`."""
