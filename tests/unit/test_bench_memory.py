"""benchmarks/bench_memory.py: its generated mixed table, and the passes it reports (two for the default's
graphical model, three for the mixture)."""

import numpy as np
import pandas as pd

from repo_scripts import load_script


def test_generated_categorical_columns_have_their_levels_and_depend_on_each_other(tmp_path):
    bench = load_script("benchmarks/bench_memory.py")
    names = bench._generate(tmp_path / "t.parquet", 20_000, 3, categorical=3)
    df = pd.read_parquet(tmp_path / "t.parquet")
    assert list(df.columns) == names == ["x000", "x001", "x002", "c000", "c001", "c002"]
    for c in names[3:]:
        counts = df[c].value_counts()
        assert sorted(counts.index) == [str(k) for k in range(6)]
        assert counts.min() > 0.1 * len(df)  # cut at the normal's sextiles
    assert df[names[:3]].min().min() >= 0.0 and df[names[:3]].max().max() <= 1.0
    codes = df[names[3:]].astype(int).to_numpy()
    assert np.abs(np.corrcoef(np.column_stack([codes, df[names[:3]].to_numpy()]).T)[0, 1:]).max() > 0.1


def test_the_reported_passes_over_the_data(capsys):
    bench = load_script("benchmarks/bench_memory.py")
    common = ["--mechanism", "gauss-copula", "--n", "20000", "--p", "3", "--categorical", "4"]
    bench.main(common + ["--param", "dependence=mixture"])
    mixture = capsys.readouterr().out
    bench.main(common)
    model = capsys.readouterr().out
    assert "pass 1, pass 2, pass 3, writing" in mixture  # the cells, then the mixture's centre and moments
    assert "pass 1, pass 2, writing" in model  # the default: the cells, then the graphical model's candidates
