"""Every registered mechanism through the budget ledger: the charge equals the certified cost.

The ledger charges the cost a mechanism declares *before* it sees the data
(``release._declared_cost``); the certificate states the cost it computed while
fitting. They must agree, and a budget equal to one release must be exhausted by it.
"""

import math

import pytest

from privrelease import release
from privrelease.accounting import Ledger
from privrelease.errors import BudgetExceededError, ParameterError
from privrelease.mechanisms import list_mechanisms
from privrelease.dp.costs import PrivacyCost

MECHS = [m for m in list_mechanisms() if getattr(m, "contract_release", True)]
DP = [m for m in MECHS if m.guarantee != "distributional"]


def _kwargs(cls):
    delta = 1e-5 if getattr(cls, "uses_delta", False) or cls.guarantee == "(epsilon,delta)-DP" else None
    return delta, dict(getattr(cls, "contract_params", {}))


@pytest.mark.parametrize("cls", DP, ids=[m.name for m in DP])
def test_ledger_charge_equals_certified_cost(cls, small_schema, small_df, tmp_path):
    delta, params = _kwargs(cls)
    eps = 0.7
    led = Ledger(tmp_path / "budget.sqlite")
    budget = PrivacyCost(eps, delta or 0.0)
    res = release(small_df, small_schema, cls.name, eps, delta=delta, rng=1, ledger=led, dataset_id="d",
                  budget=budget, **params)
    (entry,) = led.history("d")
    assert entry["status"] == "committed" and entry["mechanism"] == cls.name
    cert = res.certificate
    assert math.isclose(entry["epsilon"], cert.epsilon, rel_tol=1e-12)
    assert math.isclose(entry["delta"], cert.delta or 0.0, rel_tol=1e-12, abs_tol=0.0)
    assert math.isclose(led.spent("d").epsilon, eps, rel_tol=1e-12)
    with pytest.raises(BudgetExceededError):  # the budget was exactly one release
        release(small_df, small_schema, cls.name, eps, delta=delta, rng=1, ledger=led, dataset_id="d", **params)


@pytest.mark.parametrize("cls", [m for m in MECHS if m.guarantee == "distributional"],
                         ids=[m.name for m in MECHS if m.guarantee == "distributional"])
def test_distributional_mechanisms_are_not_recorded(cls, small_schema, small_df, tmp_path):
    _, params = _kwargs(cls)
    led = Ledger(tmp_path / "budget.sqlite")
    with pytest.raises(ParameterError, match="finite-epsilon"):
        release(small_df, small_schema, cls.name, None, rng=1, ledger=led, dataset_id="d", budget=1.0, **params)
    assert led.history("d") == []
