"""Empirical privacy audits, for a privacy reviewer.

The custodian-facing fidelity metrics and report live in :mod:`privrelease.evaluation`.

* :mod:`~privrelease.audit.epsilon_bound`: :func:`audit_epsilon`, a statistically valid lower
  bound on a mechanism's epsilon from repeated runs on two neighbouring datasets
  (:class:`AuditResult`, :func:`clopper_pearson`);
* :mod:`~privrelease.audit.noise_transcript`: sources that record, replay and halve a
  mechanism's noise draws (:class:`TranscriptSource`, :class:`HalvedNoiseSource`);
* :mod:`~privrelease.audit.draw_audit`: :func:`audit_draw`, the audit of one noised
  statistic of a mechanism on its captured queries, with its halved-noise mutant;
* :mod:`~privrelease.audit.gdp_bound`: :func:`mu_lower_bound`, a lower bound on the GDP mu,
  and :func:`audit_draws`, the joint (white-box) audit of every Gaussian draw of a mechanism.
"""

from __future__ import annotations

from .draw_audit import DrawAudit, audit_draw
from .epsilon_bound import AuditResult, audit_epsilon, clopper_pearson
from .gdp_bound import DrawsAudit, MuResult, audit_draws, audit_mu, capture_all, mu_lower_bound
from .noise_transcript import (
    NOISE_KINDS,
    AsRealRelease,
    HalvedNoiseSource,
    NoiseDraw,
    StopAtDraw,
    TranscriptSource,
    capture_draw,
    draw_index,
    exact_prefix,
    record_transcript,
    redraw,
)

__all__ = ["NOISE_KINDS", "AsRealRelease", "AuditResult", "DrawAudit", "DrawsAudit", "HalvedNoiseSource", "MuResult",
           "NoiseDraw", "StopAtDraw", "TranscriptSource", "audit_draw", "audit_draws", "audit_epsilon", "audit_mu",
           "capture_all", "capture_draw", "clopper_pearson", "draw_index", "exact_prefix", "mu_lower_bound",
           "record_transcript", "redraw"]
