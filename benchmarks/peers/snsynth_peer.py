"""MST or AIM from smartnoise-synth on an already discretised table (runs in the peer's own venv).

Called by ``benchmarks/bench_mixed.py`` as ``python snsynth_peer.py SPEC.json``. SPEC holds
``method`` ("mst" or "aim"), ``input`` (CSV of integer cell codes, one column per schema
column), ``cardinalities`` (the PUBLIC number of cells of each column: bins or declared
levels), ``epsilon``, ``delta``, ``rows``, ``seed``, ``output`` (CSV of codes written here)
and ``result`` (JSON: wall and CPU seconds, library versions).

The domain handed to the library is the public one: every declared level and every bin,
whether it occurs or not (the library's own transformer would read the levels off the
data). Fitting is the library's ``MST``/``AIM`` routine unchanged.

Sampling follows the upstream repair of ``MarkovRandomField.synthetic_data`` (ryan112358/mbi
pull request 145, released after mbi 1.1.0, the version on the package index):
1. each column is generated conditionally on the MAXIMAL cliques of the model's junction
   tree, not on the measured cliques: the model is re-expressed over those cliques
   (``potentials.expand``, which leaves the distribution unchanged) before sampling;
2. records are drawn i.i.d. (``method="sample"``) instead of the deterministic rounding whose
   within-group ranks give sibling columns spurious correlations.
"""

import json
import sys
import time

import numpy as np
import pandas as pd

from _common import cpu_seconds, write_result


def repaired_model(model):
    """The same distribution, its potentials over the maximal cliques of its junction tree."""
    from mbi import MarkovRandomField, junction_tree

    jtree, _ = junction_tree.make_junction_tree(model.domain, [set(c) for c in model.cliques])
    maximal = [tuple(a for a in model.domain.attrs if a in node) for node in jtree.nodes]
    return MarkovRandomField(potentials=model.potentials.expand(maximal), marginals=model.marginals,
                             total=model.total)


def main(spec_path):
    from mbi import Dataset, Domain
    from snsynth.utils import cdp_rho

    spec = json.loads(open(spec_path).read())
    np.random.seed(spec["seed"])  # the library's selection steps draw from numpy's global state
    codes = pd.read_csv(spec["input"]).astype(int)
    names = ["col%d" % i for i in range(codes.shape[1])]
    domain = Domain(names, [int(k) for k in spec["cardinalities"]])
    t0, c0 = time.perf_counter(), cpu_seconds()
    if spec["method"] == "mst":
        from snsynth.mst.mst import MSTSynthesizer

        synth = MSTSynthesizer(epsilon=spec["epsilon"], delta=spec["delta"])
        synth.MST(Dataset(pd.DataFrame(codes.to_numpy(), columns=names).values, domain=domain),
                  spec["epsilon"], spec["delta"])
        model, undo = synth.synthesizer, synth.undo_compress_fn
    elif spec["method"] == "aim":
        from snsynth.aim.aim import AIMSynthesizer

        synth = AIMSynthesizer(epsilon=spec["epsilon"], delta=spec["delta"])
        synth.rho = cdp_rho(spec["epsilon"], spec["delta"])
        data = Dataset(pd.DataFrame(codes.to_numpy(), columns=names), domain=domain)
        synth.AIM(data, synth.get_workload(data, degree=synth.degree, max_cells=synth.max_cells,
                                           num_marginals=synth.num_marginals))
        model, undo = synth.synthesizer, (lambda d: d)
    else:
        raise SystemExit("method must be mst or aim")
    fit_wall, fit_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    out = undo(repaired_model(model).synthetic_data(rows=int(spec["rows"]), method="sample"))
    df = out.df[names] if hasattr(out, "df") else pd.DataFrame(np.asarray(out), columns=names)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    df.columns = list(codes.columns)
    df.to_csv(spec["output"], index=False)
    write_result(spec["result"], wall, cpu, fit_wall, fit_cpu, ("smartnoise-synth", "mbi", "opendp", "jax", "numpy", "pandas"))


if __name__ == "__main__":
    main(sys.argv[1])
