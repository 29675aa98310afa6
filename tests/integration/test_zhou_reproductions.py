"""Quick slices of the Zhou-Ligett-Wasserman reproductions (run in CI with -m ci_slice)."""

import json

import pytest

from privrelease.datasets import shared_datasets_dir
from privrelease.experiments import get_reproduction


@pytest.mark.slow
@pytest.mark.ci_slice
def test_zhou_pca_bound_quick(tmp_path):
    base = shared_datasets_dir()
    if base is None or not (base / "hapt_features").is_dir() or not (base / "gfe").is_dir():
        pytest.skip("HAPT features / GFE not found (set PRIVRELEASE_DATA)")
    res = get_reproduction("zhou-pca-bound").run(tmp_path, quick=True, seed=0)
    assert (tmp_path / "zhou-pca-bound.png").exists()
    assert json.loads((tmp_path / "zhou-pca-bound.json").read_text())["name"] == "zhou-pca-bound"
    for d in res["datasets"]:
        assert d["by_m"], d["data"]
        for a in d["by_m"]:
            assert a["distance_le_bound_all"]
        # more released rows, closer subspaces
        assert d["by_m"][-1]["distance"] < d["by_m"][0]["distance"]


@pytest.mark.slow
@pytest.mark.ci_slice
def test_zhou_privacy_loss_quick(tmp_path):
    res = get_reproduction("zhou-privacy-loss").run(tmp_path, quick=True, seed=0)
    assert (tmp_path / "zhou-privacy-loss.png").exists()
    for r in res["pair"]:
        assert r["mc_max_abs_log_ratio"] <= r["loss_bound_on_acceptance_set"] + 1e-9
    ratios = [v["ratio_to_p_star"] for v in res["class_alpha_eq_1_crossing"].values()]
    assert len(ratios) >= 2 and max(ratios) / min(ratios) < 1.3
