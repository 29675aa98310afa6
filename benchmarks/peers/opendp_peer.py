"""AIM from the OpenDP Library (``opendp.extras.mbi``) on an already discretised table (own venv).

Called by ``benchmarks/bench_mixed.py`` as ``python opendp_peer.py SPEC.json``; SPEC as for
``snsynth_peer.py`` (``method`` must be "aim"). OpenDP 0.16 pins mbi 1.1.0; the venv holds
exactly what it pins (``opendp[mbi]==0.16.0``).

Every column is handed over with its PUBLIC keys (0 .. cells - 1), so no level is read off the
data; OpenDP adds a null key to each column (a cell the data never fills). The budget is
zero-concentrated DP: rho from (epsilon, delta) by the same conversion as ``mbi2_peer.py``,
neighbouring tables differ by one added or removed record (``unit_of(contributions=1)``), and
OpenDP's own defaults split it (half on the one-way marginals, the rest to AIM's rounds, 90 % of
each round on measurement). The workload is every pair of columns (``queries=2``), as for the
other AIM; every other AIM setting is OpenDP's default (80 MB model bound, 16 x columns rounds).

OpenDP draws its noise from its own cryptographic generator, so a seed fixes the sampling step
only. Sampling: i.i.d. records (``method="sample"``) from the model re-expressed over the maximal
cliques of its junction tree, the repair of mbi 1.1.0's sampler that ``snsynth_peer.py`` applies
too (mbi 2.x samples this way itself). A released null cell (the key OpenDP adds) is replaced by a
cell drawn uniformly from the column's public cells; their number is reported.
"""

import json
import sys
import time

import numpy as np
import pandas as pd

from _common import cpu_seconds, write_result
from mbi2_peer import zcdp_rho
from snsynth_peer import repaired_model


def release_table(codes, cardinalities, rho):
    """OpenDP's contingency table released by its AIM over the public keys."""
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    frame = pl.LazyFrame({c: codes[c].to_numpy().astype(np.int64) for c in codes.columns})
    context = dp.Context.compositor(data=frame, privacy_unit=dp.unit_of(contributions=1),
                                    privacy_loss=dp.loss_of(rho=rho))
    keys = {c: list(range(int(k))) for c, k in zip(codes.columns, cardinalities)}
    return context.query(rho=rho).contingency_table(keys=keys, algorithm=dp.mbi.AIM(queries=2)).release()


def decode(table, columns, cardinalities, rows, rng):
    """Records drawn from the table's model, as the public cell codes of each column."""
    sample = repaired_model(table.model).synthetic_data(rows=rows, method="sample").df
    out, nulls = {}, 0
    for c, k in zip(columns, cardinalities):
        keys = table.keys[c].to_list()
        vals = np.array([keys[i] for i in sample[c].to_numpy()], dtype=object)
        miss = np.array([v is None for v in vals])
        nulls += int(miss.sum())
        vals[miss] = rng.integers(0, int(k), miss.sum())
        out[c] = vals.astype(int)
    return pd.DataFrame(out), nulls


def main(spec_path):
    spec = json.loads(open(spec_path).read())
    if spec["method"] != "aim":
        raise SystemExit("method must be aim")
    np.random.seed(int(spec["seed"]))  # mbi's sampler draws from numpy's global state
    rng = np.random.default_rng(int(spec["seed"]))
    codes = pd.read_csv(spec["input"]).astype(int)
    rho = zcdp_rho(float(spec["epsilon"]), float(spec["delta"]))
    t0, c0 = time.perf_counter(), cpu_seconds()
    table = release_table(codes, spec["cardinalities"], rho)
    fit_wall, fit_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    df, nulls = decode(table, list(codes.columns), spec["cardinalities"], int(spec["rows"]), rng)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    df.to_csv(spec["output"], index=False)
    write_result(spec["result"], wall, cpu, fit_wall, fit_cpu, ("opendp", "mbi", "jax", "polars", "numpy", "pandas"),
                 extra={"rho": rho, "neighbours": "add or remove one record", "null_cells_released": nulls,
                        "measured_cliques": [list(c) for c in table.marginals.cliques()]})


if __name__ == "__main__":
    main(sys.argv[1])
