"""PrivBayes from DataSynthesizer on an already discretised table (runs in the peer's own venv).

Called by ``benchmarks/bench_mixed.py`` as ``python privbayes_peer.py SPEC.json``; SPEC as for
``snsynth_peer.py`` plus ``degree`` (the Bayesian network's maximum number of parents).
Every column is handed over as a categorical attribute whose domain is the PUBLIC list of
cells (a domain file), so the library reads no level off the data; epsilon is split by the
library itself between the network search and the conditional distributions.
"""

import json
import os
import sys
import tempfile
import time

import pandas as pd

from _common import cpu_seconds, write_result


def main(spec_path):
    spec = json.loads(open(spec_path).read())
    with tempfile.TemporaryDirectory(prefix="privbayes-") as work:
        run(spec, work)


def run(spec, work):
    from DataSynthesizer.DataDescriber import DataDescriber
    from DataSynthesizer.DataGenerator import DataGenerator

    codes = pd.read_csv(spec["input"]).astype(int)
    names = list(codes.columns)
    text = codes.apply(lambda s: "v" + s.astype(str))  # text levels: no numeric type inference
    data_csv = os.path.join(work, "data.csv")
    text.to_csv(data_csv, index=False)
    domain_file = os.path.join(work, "domain.json")
    with open(domain_file, "w") as fh:
        json.dump({n: ["v%d" % i for i in range(int(k))] for n, k in zip(names, spec["cardinalities"])}, fh)
    t0, c0 = time.perf_counter(), cpu_seconds()
    describer = DataDescriber(category_threshold=max(int(k) for k in spec["cardinalities"]) + 1)
    describer.describe_dataset_in_correlated_attribute_mode(
        data_csv, k=int(spec.get("degree", 2)), epsilon=float(spec["epsilon"]),
        attribute_to_datatype={n: "String" for n in names},
        attribute_to_is_categorical={n: True for n in names},
        attribute_to_is_candidate_key={n: False for n in names},
        categorical_attribute_domain_file=domain_file, seed=int(spec["seed"]))
    description = os.path.join(work, "description.json")
    describer.save_dataset_description_to_file(description)
    fit_wall, fit_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    gen = DataGenerator()
    gen.generate_dataset_in_correlated_attribute_mode(int(spec["rows"]), description, seed=int(spec["seed"]))
    out = gen.synthetic_dataset[names].apply(lambda s: s.astype(str).str[1:].astype(int))
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    out.to_csv(spec["output"], index=False)
    write_result(spec["result"], wall, cpu, fit_wall, fit_cpu, ("DataSynthesizer", "numpy", "pandas"))


if __name__ == "__main__":
    main(sys.argv[1])
