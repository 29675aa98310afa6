"""Empirical privacy audits, for a privacy reviewer.

The custodian-facing fidelity metrics and report live in :mod:`privrelease.evaluation`.

* :mod:`~privrelease.audit.epsilon_bound`: :func:`audit_epsilon`, a statistically valid lower
  bound on a mechanism's epsilon from repeated runs on two neighbouring datasets
  (:class:`AuditResult`, :func:`clopper_pearson`);
* :mod:`~privrelease.audit.noise_transcript`: sources that record, replay and halve a
  mechanism's noise draws (:class:`TranscriptSource`, :class:`HalvedNoiseSource`);
* :mod:`~privrelease.audit.draw_audit`: :func:`audit_draw`, the audit of one noised
  statistic of a mechanism on its captured queries, with its halved-noise mutant.
"""

from __future__ import annotations

from .draw_audit import DrawAudit, audit_draw
from .epsilon_bound import AuditResult, audit_epsilon, clopper_pearson
from .noise_transcript import (
    NOISE_KINDS,
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

__all__ = ["NOISE_KINDS", "AuditResult", "DrawAudit", "HalvedNoiseSource", "NoiseDraw", "StopAtDraw",
           "TranscriptSource", "audit_draw", "audit_epsilon", "capture_draw", "clopper_pearson", "draw_index",
           "exact_prefix", "record_transcript", "redraw"]
