"""Small real slices of the Jiang et al. Adult reproductions (Figures 2-4), run in CI."""

import json

import pytest

from privrelease.experiments.registry import get_reproduction


@pytest.mark.slow
@pytest.mark.ci_slice
@pytest.mark.parametrize("name", ["jiang-fig2", "jiang-fig3", "jiang-fig4"])
def test_quick_reproduction(name, tmp_path):
    res = get_reproduction(name).run(tmp_path, quick=True, seed=0)
    saved = json.loads((tmp_path / f"{name}.json").read_text())
    assert (tmp_path / f"{name}.png").stat().st_size > 0
    assert saved["verdict"] and saved["paper"]
    if name == "jiang-fig2":
        assert 0.5 < res["ours"]["energy_top10"] <= 1.0
        # raw released values: PCA (k <= 10) below LAP at epsilon = 1 (the LAP noise is far larger)
        assert res["ours"]["raw_vs_LAP_only"]["pca_smaller_everywhere"]
    elif name == "jiang-fig3":
        assert 0.8 < res["best_achievable"]["lda"]["accuracy"] < 0.9
        for m in res["rows"][0]["methods"].values():
            assert 0.5 <= m["lda_accuracy"]["mean"] <= 1.0
    else:
        assert res["original_entropy_bits"]["joint"] > 5
        for m in res["rows"][0]["methods"].values():
            assert m["kl"]["mean"] >= 0


def test_reproductions_registered():
    for name in ("jiang-fig2", "jiang-fig3", "jiang-fig4"):
        assert get_reproduction(name).paper == "Jiang et al. 2013"
