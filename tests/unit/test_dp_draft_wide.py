"""The DP draft on a wide table at the README's epsilon (issue 35, item 7): every drafted bound holds at
least 90 % of the data and its 10 %..90 % range and lies within 2^4 of its extremes, or no bound is drafted and the schema says so."""

import pytest

from privrelease.dp.draft import dp_draft
from privrelease.errors import SchemaError
from privrelease.schema import Schema
from privrelease.schema.values import StatedFacts
from wide_table import bound_problems, wide_table


@pytest.mark.parametrize("seed", [0, 1])
def test_wide_table_bounds_hold_the_data_or_are_left_to_the_user(seed):
    df = wide_table(5000, seed=seed)
    facts = StatedFacts.of(numeric=list(df.columns))
    d = dp_draft(df, 0.5, 1e-6, rng=seed, facts=facts)
    cols = d.schema["columns"]
    assert len(cols) == 46
    # at about 0.01 epsilon per column a bound now and then misses (1 of 368 bounds over seeds 0..7, failing two
    # checks; 5 before the profile counted decimals)
    assert len({p.split(":")[0] for p in bound_problems(df, cols)}) <= 1, bound_problems(df, cols)
    unbounded = [c for c, spec in cols.items() if spec["lower"] is None]
    assert len(unbounded) < 46 - 10  # most columns of counts, incomes, ratios and sizes get bounds
    assert all(any(f"'{c}'" in w and ("--range COLUMN=lo,hi" in w or f"--range {c}=lo,hi" in w) for w in d.warnings)
               for c in unbounded)
    assert len([w for w in d.warnings if "cannot tell where" in w]) == min(len(unbounded), 1)  # one line for all
    if unbounded:
        with pytest.raises(SchemaError, match="have no bounds") as e:
            Schema.from_dict(d.schema)
        assert all(f"'{c}'" in str(e.value) for c in unbounded)
