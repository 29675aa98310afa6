"""Statistical privacy test of the compression (distributional privacy, NOT differential privacy).

The audit formula of ALGORITHMS.md section 4 is tested against Monte-Carlo
log-likelihood ratios on a concrete Example III.6 neighbour pair: every accepted draw
stays within the formula's bound, the bound is not vacuous (a variant that skips the
truncation exceeds it), and the generic epsilon audit of the pair stays below it.
"""

import math

import numpy as np

from privrelease.audit import audit_epsilon
from privrelease.evaluation.distributional import _sample_S, audit_pair, example_iii6_pair, log_likelihood_ratio
from privrelease.mechanisms.compression.mechanism import Compression
from privrelease.mechanisms.compression.bounds import compressed_covariance, normalized_covariance

N, P, M, C = 30, 3, 20, 0.4  # a narrow acceptance box: truncation matters


def _pair():
    X1, X2 = example_iii6_pair(N, P, 0.34, seed=1)
    return X1, X2, normalized_covariance(X1), normalized_covariance(X2)


def test_accepted_draws_stay_within_the_formula_and_untruncated_ones_do_not():
    X1, X2, S1, S2 = _pair()
    a = audit_pair(X1, X2, M, C=C, delta_max=0.0)
    losses, free = [], []
    for seed in range(150):
        mech = Compression(m=M, C=C, delta_max=0.0, max_draws=10_000, rng=seed).fit(X1)
        losses.append(log_likelihood_ratio(compressed_covariance(mech.compressed_), S1, S2, M))
        mut = Compression(m=M, C=math.inf, rng=seed).fit(X1)  # mutant: no truncation
        free.append(log_likelihood_ratio(compressed_covariance(mut.compressed_), S1, S2, M))
    assert np.max(np.abs(losses)) <= a.loss_bound_on_acceptance_set + 1e-9
    assert np.max(np.abs(free)) > a.loss_bound_on_acceptance_set  # the bound relies on the truncation


def test_epsilon_audit_of_the_pair_stays_below_the_formula():
    X1, X2, S1, S2 = _pair()
    a = audit_pair(X1, X2, M, C=C, delta_max=0.0, mc_draws=20_000, seed=5)
    assert a.renormalisation_how.startswith("Monte Carlo")  # m is below Lemma IV.4's requirement here
    tau = a.tau

    def batch(sig, rng, k):
        # rows of Phi X given X are i.i.d. N(0, Sigma_X) (tested in test_compression_distribution)
        out, need = [], k
        while need > 0:
            S = _sample_S(sig, M, 40 * need + 10, rng)
            S = S[np.max(np.abs(S - S1), axis=(1, 2)) <= tau][:need]
            out.append(log_likelihood_ratio(S, S1, S2, M))
            need -= len(S)
        return np.concatenate(out)

    res = audit_epsilon(batch=batch, d0=S1, d1=S2, trials=3000, seed=0, claimed=a.total_bound)
    assert res.epsilon_lower <= a.total_bound
