"""MST and AIM written on mbi 2.x's estimation API (runs in the peer's own venv, without privrelease).

Called by ``benchmarks/bench_mixed.py`` as ``python mbi2_peer.py SPEC.json``; SPEC as for
``snsynth_peer.py`` (``method`` is "mst" or "aim"). mbi 2.x ships the estimation (Private-PGM's
graphical models, mirror descent, the sampler) but no mechanism; the two mechanisms below follow
the papers, with the defaults of Private-PGM's reference mechanisms:

MST (McKenna, Miklau and Sheldon 2021, "Winning the NIST contest"): rho from (epsilon, delta)
by the conversion of Canonne, Kamath and Steinke 2020; a third of rho on all one-way marginals,
a third on selecting a maximum spanning tree of the pairs (exponential mechanism on the L1 error
of each pair under the one-way model, one edge at a time, sensitivity 1), a third on the tree's
two-way marginals; the one-way cells whose noisy count is below 3 sigma are merged into one cell
before selection (and drawn back uniformly among the merged cells after sampling).

AIM (McKenna, Mullins, Sheldon and Miklau 2022): workload every pair of columns (weight 1, at
most 10,000 cells), candidates its downward closure weighted by overlap with the workload;
16 x columns rounds to start with, 90 % of each round's budget on the Gaussian measurement and
10 % on the exponential-mechanism selection; every one-way marginal measured first; the score of
a candidate is its weight times (L1 error of the current model minus the expected L1 norm of the
noise); candidates are restricted so that the model stays below 80 MB times the share of the
budget spent; the noise is halved (and the selection budget doubled) whenever a measurement
changes the model's marginal by less than the expected noise; the last round spends what is left.
Each round re-fits the model with mirror descent (1,000 iterations, warm-started), and the final
model is re-fitted once more before sampling.

Neighbouring tables differ by one added or removed record (the papers' relation; each marginal
has L2 sensitivity 1). The released table has ``rows`` records drawn i.i.d. from the model
(``synthetic_data(method="sample")``, which in mbi 2.x conditions on the junction tree's
maximal cliques).
"""

import itertools
import json
import sys
import time

import numpy as np
import pandas as pd

from _common import cpu_seconds, write_result


# ---- privacy accounting and primitives ------------------------------------------------------------

def zcdp_delta(rho, eps):
    """The delta of rho-zCDP at epsilon (Canonne, Kamath and Steinke 2020, Proposition 12)."""
    from scipy.optimize import minimize_scalar

    def log_delta(a):
        return (a - 1) * (a * rho - eps) + (a - 1) * np.log1p(-1 / a) - np.log(a)

    hi = max(2.0, (eps + 1) / (2 * rho) + 2) if rho > 0 else 1e6
    best = minimize_scalar(log_delta, bounds=(1.0 + 1e-9, hi), method="bounded")
    return float(min(1.0, np.exp(best.fun)))


def zcdp_rho(eps, delta):
    """The largest rho whose zCDP guarantee implies (eps, delta)-DP (bisection on zcdp_delta)."""
    lo, hi = 0.0, eps + 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if zcdp_delta(mid, eps) <= delta else (lo, mid)
    return lo


def exponential_mechanism(scores, eps, sensitivity, rng):
    """Index drawn with probability proportional to exp(eps * score / (2 * sensitivity))."""
    q = np.asarray(scores, dtype=float)
    logits = 0.5 * eps / sensitivity * (q - q.max())
    p = np.exp(logits)
    return int(rng.choice(q.size, p=p / p.sum()))


def measure(data, clique, sigma, rng):
    """The clique's marginal plus N(0, sigma^2) noise per cell, as an mbi LinearMeasurement."""
    from mbi import LinearMeasurement

    x = np.asarray(data.project(clique).datavector(), dtype=float)
    return LinearMeasurement(x + rng.normal(0.0, sigma, x.size), tuple(clique), stddev=float(sigma))


def fit(domain, measurements, iters, warm_start=None):
    """Private-PGM's estimation: mirror descent on the squared error of the noisy marginals."""
    from mbi.estimation import MirrorDescent

    return MirrorDescent().estimate(domain, measurements, iters=iters, warm_start=warm_start)


# ---- MST ------------------------------------------------------------------------------------------

def mst(data, rho, rng):
    """MST: one-way marginals, a private maximum spanning tree of pairs, its two-way marginals."""
    names, d = list(data.domain.attributes), len(data.domain.attributes)
    sigma = np.sqrt(3.0 / (2.0 * rho))
    one = [measure(data, (c,), sigma * np.sqrt(d), rng) for c in names]  # rho/3 over d marginals
    data, one, mapping = compress(data, one)
    tree = spanning_tree(data, rho / 3.0, one, rng)
    two = [measure(data, e, sigma * np.sqrt(len(tree)), rng) for e in tree] if tree else []
    return fit(data.domain, one + two, iters=5000), mapping


def compress(data, oneway):
    """Merge each column's cells whose noisy count is below 3 sigma into one cell."""
    mapping = {}
    for m in oneway:
        y, (col,) = np.asarray(m.noisy_measurement), m.clique
        keep = y >= 3 * m.stddev
        if keep.all() or keep.sum() == 0:
            continue
        idx = np.full(y.size, keep.sum(), dtype=int)
        idx[keep] = np.arange(keep.sum())
        mapping[col] = idx
    if not mapping:
        return data, oneway, mapping
    return data.compress(mapping), [m.compress(mapping, data.domain) for m in oneway], mapping


def spanning_tree(data, rho, oneway, rng):
    """Edges of a spanning tree chosen pair by pair by the exponential mechanism (Kruskal order)."""
    names = list(data.domain.attributes)
    if len(names) < 2:
        return []
    model = fit(data.domain, oneway, iters=1000)
    # The one-way model is a product: its pair marginal is the outer product of its one-way
    # marginals over the total (the same numbers model.project gives, without compiling a
    # variable elimination per pair).
    one = {c: np.asarray(model.project((c,)).datavector(), dtype=float) for c in names}
    total = float(sum(one[names[0]]))
    pairs = list(itertools.combinations(names, 2))
    err = {(a, b): float(np.abs(np.asarray(data.project((a, b)).datavector(flatten=False), dtype=float)
                                - np.outer(one[a], one[b]) / total).sum()) for a, b in pairs}
    parent = {c: c for c in names}

    def root(c):
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    eps = np.sqrt(8.0 * rho / (len(names) - 1))
    edges = []
    for _ in range(len(names) - 1):
        cand = [p for p in pairs if root(p[0]) != root(p[1])]
        a, b = cand[exponential_mechanism([err[p] for p in cand], eps, 1.0, rng)]
        parent[root(a)] = root(b)
        edges.append((a, b))
    return edges


# ---- AIM ------------------------------------------------------------------------------------------

def downward_closure(cliques):
    """Every non-empty subset of every clique, shortest first."""
    out = set()
    for cl in cliques:
        for r in range(1, len(cl) + 1):
            out.update(itertools.combinations(cl, r))
    return sorted(out, key=len)


def aim_candidates(domain, degree=2, max_cells=10000):
    """The workload's downward closure, each weighted by its overlap with the workload's cliques."""
    work = [cl for cl in itertools.combinations(domain.attributes, degree) if domain.size(cl) <= max_cells]
    return {cl: float(sum(len(set(cl) & set(w)) for w in work)) for cl in downward_closure(work)}


def small_enough(candidates, model, domain, limit_mb):
    """The candidates that keep the model under ``limit_mb``, or that it already covers."""
    from mbi.junction_tree import hypothetical_model_size

    cliques = [tuple(c) for c in model.cliques]
    free = set(downward_closure(cliques))
    return {cl: w for cl, w in candidates.items()
            if cl in free or hypothetical_model_size(domain, cliques + [cl]) <= limit_mb}


def select(candidates, answers, model, eps, sigma, domain, rng):
    """The worst-approximated candidate, by the exponential mechanism on the bias-corrected L1 error."""
    keys = list(candidates)
    scores = [candidates[cl] * (np.abs(answers[cl] - np.asarray(model.project(cl).datavector())).sum()
                                - np.sqrt(2 / np.pi) * sigma * domain.size(cl)) for cl in keys]
    return keys[exponential_mechanism(scores, eps, max(abs(candidates[cl]) for cl in keys), rng)]


def aim(data, rho, rng, max_model_mb=80.0, iters=1000, log=None):
    """AIM with budget annealing; returns the final model."""
    import jax

    domain = data.domain
    candidates = aim_candidates(domain)
    answers = {cl: np.asarray(data.project(cl).datavector(), dtype=float) for cl in candidates}
    rounds = 16 * len(domain.attributes)
    sigma, eps = np.sqrt(rounds / (2 * 0.9 * rho)), np.sqrt(8 * 0.1 * rho / rounds)
    oneway = [cl for cl in candidates if len(cl) == 1]
    measurements = [measure(data, cl, sigma, rng) for cl in oneway]
    used = len(oneway) * 0.5 / sigma ** 2
    model, last = fit(domain, measurements, iters), False
    while not last:
        if rho - used < 2 * (0.5 / sigma ** 2 + eps ** 2 / 8):  # spend what is left in one last round
            sigma, eps, last = np.sqrt(1 / (2 * 0.9 * (rho - used))), np.sqrt(8 * 0.1 * (rho - used)), True
        used += eps ** 2 / 8 + 0.5 / sigma ** 2
        pool = small_enough(candidates, model, domain, max_model_mb * used / rho)
        cl = select(pool, answers, model, eps, sigma, domain, rng)
        measurements.append(measure(data, cl, sigma, rng))
        before = np.asarray(model.project(cl).datavector())
        model = fit(domain, measurements, iters, warm_start=model)
        change = np.abs(np.asarray(model.project(cl).datavector()) - before).sum()
        if log:
            log(f"round {len(measurements) - len(oneway)}: {cl} sigma {sigma:.1f} budget {used / rho:.3f}")
        if change <= np.sqrt(2 / np.pi) * sigma * domain.size(cl):
            sigma, eps = sigma / 2, eps * 2
        # Every round has a new model structure, so nothing compiled for the last one is used again;
        # without this the compiled programs pile up until the process runs out of memory mappings
        # (two Adult releases failed after 37-49 min with "LLVM ... Unable to allocate section memory").
        jax.clear_caches()
    return fit(domain, measurements, iters, warm_start=model)


# ---- the run --------------------------------------------------------------------------------------

def main(spec_path):
    import jax

    jax.config.update("jax_enable_x64", True)  # mbi's advice for large totals
    jax.config.update("jax_enable_compilation_cache", False)  # mbi's advice: many small programs
    from mbi import Dataset, Domain

    spec = json.loads(open(spec_path).read())
    seed = int(spec["seed"])
    np.random.seed(seed)  # mbi's sampler and decompression draw from numpy's global state
    rng = np.random.default_rng(seed)
    codes = pd.read_csv(spec["input"]).astype(int)
    names = ["col%d" % i for i in range(codes.shape[1])]
    domain = Domain(names, [int(k) for k in spec["cardinalities"]])
    data = Dataset({n: codes.iloc[:, i].to_numpy() for i, n in enumerate(names)}, domain)
    rho = zcdp_rho(float(spec["epsilon"]), float(spec["delta"]))
    t0, c0 = time.perf_counter(), cpu_seconds()
    mapping = {}
    if spec["method"] == "mst":
        model, mapping = mst(data, rho, rng)
    elif spec["method"] == "aim":
        model = aim(data, rho, rng, log=lambda m: print(m, file=sys.stderr, flush=True))
    else:
        raise SystemExit("method must be mst or aim")
    fit_wall, fit_cpu = time.perf_counter() - t0, cpu_seconds() - c0
    synth = model.synthetic_data(rows=int(spec["rows"]), method="sample")
    if mapping:
        synth = synth.decompress(mapping)
    df = pd.DataFrame({c: np.asarray(synth.data[n]) for c, n in zip(codes.columns, names)})
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    df.to_csv(spec["output"], index=False)
    write_result(spec["result"], wall, cpu, fit_wall, fit_cpu, ("mbi", "jax", "numpy", "scipy", "pandas"),
                 extra={"rho": rho, "neighbours": "add or remove one record"})


if __name__ == "__main__":
    main(sys.argv[1])
