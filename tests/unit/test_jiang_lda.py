"""Unit tests of the corrected and paper-faithful DP-LDA and of the greedy L1 sampler."""

import itertools
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from privrelease.errors import InputDataError, ParameterError
from privrelease.linalg import upper
from privrelease.mechanisms.jiang.lda import JiangLDA, greedy_l1_sample, lda_sensitivities, paper_lda_sensitivity, _greedy_kernel, _greedy_numpy
from privrelease.schema.encoding import EncodedDomain


def _domain(p1, ks):
    numeric = tuple(range(p1))
    blocks, start = [], p1
    for k in ks:
        blocks.append((start, start + k))
        start += k
    return EncodedDomain(p=start, numeric=numeric, blocks=tuple(blocks))


def _records(dom):
    """Every encoded record with numeric values on {0, 0.5, 1}."""
    nums = itertools.product([0.0, 0.5, 1.0], repeat=dom.p1)
    cats = itertools.product(*[range(b - a) for a, b in dom.blocks])
    out = []
    for v, c in itertools.product(list(nums), list(cats)):
        x = np.zeros(dom.p)
        x[list(dom.numeric)] = v
        for (a, _), k in zip(dom.blocks, c):
            x[a + k] = 1.0
        out.append(x)
    return np.array(out)


@pytest.mark.parametrize("p1,ks,K", [(1, (2,), 2), (1, (2, 3), 3), (2, (2,), 2), (0, (3, 2), 2)])
def test_sensitivities_bound_every_neighbour_pair(p1, ks, K):
    dom = _domain(p1, ks)
    sens = lda_sensitivities(dom, K)
    recs = _records(dom)
    worst = {"counts": 0.0, "class_sums": 0.0, "second_moment": 0.0}
    for (i, x), (j, x2) in itertools.product(enumerate(recs), repeat=2):
        if j < i:
            continue
        for c, c2 in itertools.product(range(K), repeat=2):
            dc = np.zeros(K)
            dc[c] -= 1
            dc[c2] += 1
            s = np.zeros((K, dom.p))
            s[c] -= x
            s[c2] += x2
            worst["counts"] = max(worst["counts"], np.abs(dc[:-1]).sum())
            worst["class_sums"] = max(worst["class_sums"], np.abs(s).sum())
            worst["second_moment"] = max(worst["second_moment"],
                                         np.abs(upper(np.outer(x2, x2) - np.outer(x, x))).sum())
    for k in worst:
        assert worst[k] <= sens[k] + 1e-12, (k, worst[k], sens[k])
    # the class-sum bound 2L is attained (a record moving class)
    assert worst["class_sums"] == sens["class_sums"]


def test_paper_sensitivity_is_too_small_for_mixed_data():
    # E2 witness: one numeric at 1 and three binary categoricals all switching level
    dom = _domain(1, (2, 2, 2))
    x = np.array([1, 1, 0, 1, 0, 1, 0], dtype=float)
    x2 = np.array([1, 0, 1, 0, 1, 0, 1], dtype=float)
    change = np.abs(upper(np.outer(x2, x2) - np.outer(x, x))).sum()
    paper_second = ((1 + 3 + 1) * (1 + 3) + 3 * 4) / 2
    assert change > paper_second
    assert change <= lda_sensitivities(dom, 2)["second_moment"]
    assert paper_lda_sensitivity(dom) == 2 * 4 + paper_second


def test_sampler_matches_exact_statistics_of_a_simple_table():
    dom = _domain(1, (3,))
    rng = np.random.default_rng(0)
    n = 400
    codes = rng.integers(0, 3, n)
    X = np.zeros((n, 4))
    X[:, 0] = np.round(rng.random(n), 1)
    X[np.arange(n), 1 + codes] = 1
    y = (X[:, 0] > 0.5).astype(int)
    means = np.stack([X[y == c].mean(0) for c in range(2)])
    E2 = X.T @ X / n
    Xs, ys = greedy_l1_sample(means, E2, np.bincount(y, minlength=2), dom)
    assert Xs.shape == X.shape and np.array_equal(np.bincount(ys), np.bincount(y))
    # one-hot blocks and the [0, 1] box hold
    assert np.all(Xs[:, 1:].sum(1) == 1) and Xs.min() >= 0 and Xs.max() <= 1
    for c in range(2):
        assert np.abs(Xs[ys == c].mean(0) - means[c]).sum() < 0.05
    assert np.abs(Xs.T @ Xs / n - E2).sum() < 0.1


def test_compiled_and_python_kernels_agree():
    dom = _domain(2, (3, 2))
    rng = np.random.default_rng(1)
    means = rng.random((2, dom.p))
    E2 = np.cov(rng.random((50, dom.p)).T) + 0.25
    sizes = np.array([13, 7])
    Xa, ya = greedy_l1_sample(means, E2, sizes, dom)
    Xb, yb = np.zeros_like(Xa), np.zeros_like(ya)
    _greedy_kernel(means, np.clip(means, 0, 1), E2, sizes, np.array([2, 5]), np.array([5, 7]), np.array([0, 1]),
                   Xb, yb)
    assert np.allclose(Xa, Xb) and np.array_equal(ya, yb)


@pytest.mark.parametrize("p1,ks,K,seed", [(2, (3, 2), 2, 1), (0, (4,), 3, 2), (3, (), 2, 3), (1, (2, 2, 5), 2, 4)])
def test_numpy_fallback_emits_the_same_records_as_the_compiled_kernel(p1, ks, K, seed):
    dom = _domain(p1, ks)
    rng = np.random.default_rng(seed)
    # noisy-looking statistics: means outside [0, 1], an indefinite second moment, exact zeros
    means = rng.normal(0.4, 0.6, (K, dom.p))
    means[:, :1] = 0.0
    E2 = rng.normal(0.2, 0.5, (dom.p, dom.p))
    if seed % 2:
        E2 = (E2 + E2.T) / 2  # the released one is symmetric; the function does not assume it
    sizes = rng.integers(5, 40, K)
    args = (np.clip(means, 0, 1), E2, sizes, np.array([a for a, _ in dom.blocks], dtype=np.int64),
            np.array([b for _, b in dom.blocks], dtype=np.int64), np.array(dom.numeric, dtype=np.int64))
    m = int(sizes.sum())
    Xa, ya = greedy_l1_sample(means, E2, sizes, dom)
    Xb, yb = np.zeros((m, dom.p)), np.zeros(m, dtype=np.int64)
    _greedy_numpy(means, *args, Xb, yb)
    assert np.array_equal(Xa, Xb) and np.array_equal(ya, yb)


def test_sampler_falls_back_to_numpy_without_numba(monkeypatch):
    import privrelease.mechanisms.jiang.lda as mod

    X, y, dom = _toy(200)
    fitted = JiangLDA(1.0, domain=dom, rng=3).fit(X, y)
    Xa, ya = fitted.sample()
    monkeypatch.setattr(mod, "_KERNEL", [None])
    called = []
    real = mod._greedy_numpy
    monkeypatch.setattr(mod, "_greedy_numpy", lambda *a: called.append(1) or real(*a))
    Xb, yb = fitted.sample()
    assert called and np.array_equal(Xa, Xb) and np.array_equal(ya, yb)


def test_release_works_when_numba_cannot_be_imported(tmp_path):
    # a fresh interpreter in which `import numba` fails: the numpy loop is chosen
    code = (
        "import sys; sys.modules['numba'] = None\n"
        "import numpy as np\n"
        "from privrelease.mechanisms.jiang import lda as J\n"
        "from privrelease.schema.encoding import EncodedDomain\n"
        "dom = EncodedDomain(p=4, numeric=(0,), blocks=((1, 4),))\n"
        "rng = np.random.default_rng(0)\n"
        "X = np.zeros((60, 4)); X[:, 0] = rng.random(60); X[np.arange(60), 1 + rng.integers(0, 3, 60)] = 1\n"
        "y = (X[:, 0] > 0.5).astype(int)\n"
        "Xs, ys = J.JiangLDA(2.0, domain=dom, rng=0).fit(X, y).sample()\n"
        "assert J._compiled_kernel() is None and Xs.shape == (60, 4) and np.all(Xs[:, 1:].sum(1) == 1)\n"
        "print('ok')\n"
    )
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    if os.path.isdir(src):
        env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def _toy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    dom = _domain(2, (3,))
    X = np.zeros((n, dom.p))
    X[:, :2] = rng.random((n, 2))
    X[np.arange(n), 2 + rng.integers(0, 3, n)] = 1
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y, dom


def test_fit_noise_scales_and_budget():
    X, y, dom = _toy()
    m = JiangLDA(2.0, domain=dom, rng=0).fit(X, y)
    L = dom.p1 + dom.p2
    assert m.noise_scales_["counts"] == pytest.approx(1 / 0.2)
    assert m.noise_scales_["class_sums"] == pytest.approx(2 * L / 0.6)
    assert m.noise_scales_["second_moment"] == pytest.approx(lda_sensitivities(dom, 2)["second_moment"] / 1.2)
    assert sum(m.budget_split_.values()) == pytest.approx(2.0)
    assert m.class_counts_.sum() == len(X) and m.class_counts_.min() >= 1
    assert m.guarantee == "epsilon-DP"
    assert np.allclose(m.second_moment_, m.second_moment_.T)


def test_paper_faithful_is_labelled_not_private():
    X, y, dom = _toy()
    m = JiangLDA(1.0, domain=dom, rng=0, paper_faithful=True).fit(X, y)
    assert "NOT differentially private" in m.guarantee
    assert any("NOT differentially private" in s for s in m.notes_)
    assert m.certificate_extra()["differentially_private"] is False
    assert np.array_equal(m.class_counts_, np.bincount(y))  # the true sizes: the leak of E1
    m.set_params(paper_faithful=False).fit(X, y)
    assert m.guarantee == "epsilon-DP" and m.certificate_extra()["differentially_private"] is True


def test_multiclass_counts_sensitivity_two():
    X, _, dom = _toy()
    y = np.arange(len(X)) % 3
    m = JiangLDA(1.0, domain=dom, rng=0).fit(X, y)
    assert m.sensitivities_["counts"] == 2 and m.class_means_.shape == (3, dom.p)
    Xs, ys = m.sample(90)
    assert len(Xs) == 90 and set(ys) <= {0, 1, 2}


def test_epsilon_inf_uses_exact_statistics():
    X, y, dom = _toy()
    m = JiangLDA(math.inf, domain=dom, rng=0).fit(X, y)
    assert np.array_equal(m.class_counts_, np.bincount(y))
    assert np.allclose(m.second_moment_, X.T @ X / len(X))


@pytest.mark.parametrize("bad", [dict(budget_shares=(0.5, 0.5)), dict(budget_shares=(0.5, 0.6, -0.1)),
                                 dict(paper_faithful="yes"), dict(n_classes=1)])
def test_bad_parameters(bad):
    X, y, dom = _toy()
    with pytest.raises(ParameterError):
        JiangLDA(1.0, domain=dom, rng=0, **bad).fit(X, y)


def test_bad_labels():
    X, y, dom = _toy()
    with pytest.raises(InputDataError):
        JiangLDA(1.0, domain=dom, rng=0).fit(X, y + 0.5)
    with pytest.raises(InputDataError):
        JiangLDA(1.0, domain=dom, rng=0).fit(X)
    with pytest.raises(InputDataError):
        JiangLDA(1.0, domain=dom, rng=0, n_classes=2).fit(X, y * 2)
