"""gauss-copula's two dependence models, as the steps of its fit: the graphical model (the default's, except on
wide numeric tables) and the gauss-pca mixture. Each step calls the plan, measurement,
estimation and sampling modules; the mechanism (:class:`~.gauss_copula.GaussCopula`) runs the steps.
"""

from __future__ import annotations

import math
from typing import ClassVar

from ...errors import ParameterError
from . import copula_defaults as D
from .copula_estimate import ModelFit, empty_tails, level_counts, one_way_measurements
from .copula_measure import CopulaTransform, count_pairs, model_rounds
from .copula_plan import MEASURE_SENSITIVITY, SCORE_SENSITIVITY
from .gauss_pca import GaussPCA
from .model_plan import compress_plan


class GraphicalDependence:
    """The graphical model's steps of :class:`~.gauss_copula.GaussCopula`."""

    #: Parameters of the mixture, and their defaults (the graphical model reads none of them).
    MIXTURE_ONLY: ClassVar[dict] = {"n_components": None, "coarse_cells": D.COARSE_CELLS}

    def _refuse_mixture_parameters(self) -> None:
        given = [k for k, v in self.MIXTURE_ONLY.items() if getattr(self, k) != v]
        if given:
            raise ParameterError(f"{', '.join(given)} set the mixture's dependence model, and this table's is the "
                                 f"graphical model: add dependence='mixture' to use them")

    def _graphical(self, n_cat: int) -> bool:
        """Whether the dependence is the graphical model (public: the schema's columns): ``"auto"`` takes it
        unless the table is wide and numeric (``WIDE_NUMERIC`` numeric columns or more, more than the
        categorical ones), which keeps the mixture."""
        if self.dependence != "auto":
            return self.dependence == "graphical"
        k = len(self.cells_)
        return not (k >= D.WIDE_NUMERIC and k > n_cat)

    def _fit_model(self, passes) -> None:
        """The graphical model: one pass counts every candidate (:func:`~.copula_measure.count_pairs`), the
        rounds choose and measure (:func:`~.copula_measure.model_rounds`), and :class:`~.copula_estimate.ModelFit`
        fits one model to the one-way histograms and every measured marginal."""
        k = len(self.cells_)
        totals = [level_counts(self, a) for a in range(len(self.marginals_))]
        stds = self._first_stds  # each histogram's noise std; a block's total sums the groups' noise
        floors = [D.MERGE_STDS * s * math.sqrt(self.groups_) for s in stds[k:len(totals)]]
        plan = self.model_plan_ = compress_plan(self.model_plan_, totals[k:], floors, totals[:k],
                                                list(zip(self.measured_levels_, self.measured_nodes_)))
        exact = count_pairs(passes, plan, self.n_)
        first = one_way_measurements(self, plan.attributes, stds)
        zeros = empty_tails(first, plan.attributes.sizes, len(self.cells_), [t.off for t in self.cells_])
        if plan.attributes.label is not None and self.groups_ > 1 and not self.class_sizes_.all():
            zeros.append(((plan.attributes.label,), self.class_sizes_ == 0))  # classes released with no records
        fit = ModelFit(plan, first, self.n_, self.source_.generator, zeros)
        chosen = model_rounds(self, exact, plan, self.rho_split_["model_measure"], self.rho_split_["model_select"],
                              fit.estimate, fit.open_, fit.fits, fit.record)
        self.model_ = fit.fit(D.FINAL_ITERS)
        self.marginals_measured_ = [plan.pairs[r] for r in chosen]
        self.sensitivities_.update({"model_score_linf": SCORE_SENSITIVITY, "model_l2": MEASURE_SENSITIVITY})
        self.n_components_, self.n_classes_ = 0, (self._n_classes if self.labelled_ else 1)
        self.budget_split_ = {f"rho_{k}": float(v) for k, v in self.rho_split_.items()}
        self.passes_ = 2
        eps = float(self.epsilon)
        self._set_cost(eps, float(self.delta) if math.isfinite(eps) else 0.0,
                       self.rho_ if math.isfinite(self.rho_) else None)



class MixtureDependence:
    """The mixture's steps of :class:`~.gauss_copula.GaussCopula`."""

    def copula_transform(self) -> CopulaTransform:
        """The fitted per-chunk copula map (post-processing of the released marginals)."""
        dom, k = self.domain_, len(self.cells_)
        return CopulaTransform(p=dom.p, numeric=tuple(dom.numeric[:k]), cells=tuple(self.cells_),
                               cdf=tuple(self._cdf), masses=tuple(self.marginals_[:k]), grouped=self.groups_ > 1,
                               key=self._jitter_seed, coarse=self.coarse_)

    def _adopt_mixture(self, mix: GaussPCA):
        if math.isfinite(self.rho_) and mix.rho_ > self.rho_split_["mixture"] * (1 + 1e-9):
            raise ParameterError("internal accounting mismatch: the mixture spent more than its share")
        if self.label_weights_ is not None and mix.class_weights_.shape == self.label_weights_.shape:
            # post-processing: class shares from the histograms (averaged over every column) replace the
            # mixture's own noisy counts
            mix.class_weights_ = self.label_weights_.copy()
        self.mixture_ = mix
        self.n_components_ = mix.n_components_
        self.n_classes_ = mix.n_classes_
        self.sensitivities_.update({f"mixture_{k}": v for k, v in mix.sensitivities_.items()})
        self.noise_scales_.update({f"mixture_{k}": v for k, v in mix.noise_scales_.items()})
        self.budget_split_ = {"rho_marginals": float(self.rho_split_["marginals"]),
                              **{f"rho_mixture_{k}": float(v) for k, v in mix.rho_split_.items()}}
        self.passes_ = 1 + int(mix.passes_)
        eps = float(self.epsilon)
        self._set_cost(eps, float(self.delta) if math.isfinite(eps) else 0.0,
                       self.rho_ if math.isfinite(self.rho_) else None)

