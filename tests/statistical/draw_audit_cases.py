"""Shared pieces of the per-statistic audits (one noised statistic of one mechanism per case).

A :class:`DrawCase` names a mechanism, the statistic it noises (a name of the fitted
``noise_scales_`` or an index in the noise transcript), a fit function ``fit(data, source)``
and a neighbouring pair built so that the statistic's query moves by its sensitivity given
the earlier releases. :func:`privrelease.audit.audit_draw` captures the query on
both datasets once and redraws only the noise, so hundreds of thousands of trials cost a
fraction of a second; the mutant is the same draw with half the noise
(:class:`~privrelease.audit.HalvedNoiseSource`).

``python tests/statistical/draw_audit_cases.py`` prints the measured rows of docs/audits.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import pytest

from privrelease.audit import DrawAudit, audit_draw

CI_TRIALS = 200_000
FULL_TRIALS = 2_000_000
#: Confidence parameter of the real mechanisms' audits: where a pair realises the whole claim, a
#: correct mechanism is refuted with probability at most REAL_ALPHA (the mutants use 0.05).
REAL_ALPHA = 1e-3


@dataclass
class DrawCase:
    mechanism: str
    statistic: str
    fit: Callable[[Any, Any], Any]
    d0: Any
    d1: Any
    pair: str
    claimed: float
    delta: float = 0.0
    draw: int | str | None = None  # default: the statistic's name in noise_scales_
    xfail: str | None = None  # a known defect this audit refutes
    mutant_factor: float = 0.5  # the noise multiplier of the mutant that must be caught
    extra: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.mechanism}:{self.statistic}"

    def run(self, trials: int, seed: int = 0) -> DrawAudit:
        return audit_draw(self.fit, self.d0, self.d1, self.statistic if self.draw is None else self.draw,
                          trials=trials, claimed=self.claimed, delta=self.delta, seed=seed,
                          mutant_factor=self.mutant_factor, real_alpha=REAL_ALPHA, **self.extra)

    def param(self, marks=()):
        marks = list(marks)
        if self.xfail:
            marks.append(pytest.mark.xfail(strict=True, reason=self.xfail))
        return pytest.param(self, id=self.id, marks=marks)


def check(case: DrawCase, trials: int, seed: int = 0) -> DrawAudit:
    """The real mechanism is not refuted and the mutant (half the noise unless the case says otherwise) is."""
    res = case.run(trials, seed)
    assert res.real.epsilon_lower <= case.claimed, f"real mechanism refuted: {res.summary()}"
    assert res.mutant.epsilon_lower > case.claimed, f"mutant (noise x {case.mutant_factor}) not caught: {res.summary()}"
    return res


def case_tests(cases: list[DrawCase]):
    """``(test_ci_slice, test_full)`` for a module's cases: the CI slice and the full-power run."""

    @pytest.mark.slow
    @pytest.mark.ci_slice
    @pytest.mark.parametrize("case", [c.param() for c in cases])
    def test_ci_slice(case):
        check(case, CI_TRIALS, seed=1)

    @pytest.mark.slow
    @pytest.mark.parametrize("case", [c.param() for c in cases])
    def test_full(case):
        check(case, FULL_TRIALS, seed=2)

    return test_ci_slice, test_full


def all_cases() -> list[DrawCase]:
    import test_draw_audits_gauss_pca as g
    import test_draw_audits_laplace_family as lf
    import test_draw_audits_selection as sel

    return list(g.CASES) + list(lf.CASES) + list(sel.CASES)


if __name__ == "__main__":  # pragma: no cover - prints the table rows of docs/audits.md
    import sys
    import time

    trials = int(sys.argv[1]) if len(sys.argv) > 1 else CI_TRIALS
    seed = 1 if trials == CI_TRIALS else 2  # the seeds of test_ci_slice and test_full
    for c in all_cases():
        t = time.perf_counter()
        r = c.run(trials, seed)
        print(f"| {c.mechanism} | {c.statistic} | {c.pair} | {trials:,} | {c.claimed:g} | {r.real.epsilon_lower:.3f} | "
              f"x{c.mutant_factor:g}: {r.mutant.epsilon_lower:.3f} | {time.perf_counter() - t:.2f}s |")
