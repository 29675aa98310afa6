"""gauss-copula's sampling stage: records drawn from the fitted model, at each column's public resolution.

The mixture (:class:`~.gauss_pca.GaussPCA`) draws every record's latent scores; within each group
(class) every numeric column is rank-matched to its released marginal (through its node when it has a
node block), and every categorical column takes levels by quotas from its released frequencies
(:mod:`.quotas`). With the graphical model, :func:`sample_model` draws every attribute's cell from the
model instead. Post-processing of released values only.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from .copula_tree import NumericTree
from .quotas import quota_assign


def rank_match(z: np.ndarray, cells: NumericTree, F: np.ndarray, masses: np.ndarray, nonempty: np.ndarray,
               gen: np.random.Generator) -> np.ndarray:
    """Values of one numeric column for m sampled latent scores ``z``: the i-th smallest takes the
    released quantile at ``(i + U) / m`` (ties broken at random). ``F``, ``masses``: the released
    left masses and masses of the column's cells (one group); ``nonempty``: the last non-empty
    cell at or before each cell. An atom's quantile is its value (the missing leaf: NaN); an interval's
    is linear inside it, snapped to the column's resolution."""
    m = z.size
    order = np.argsort(z + 1e-12 * gen.standard_normal(m), kind="stable")
    u = np.empty(m)
    u[order] = (np.arange(m) + gen.random(m)) / m
    # u in [F_k, F_{k+1}) lies in cell k; side="right" skips empty cells (F_k = F_{k+1})
    k = np.clip(np.searchsorted(F, u, side="right") - 1, 0, cells.n_cells - 1)
    k = nonempty[k]  # trailing empty cells (rounding at u -> 1): the last non-empty one
    frac = np.clip((u - F[k]) / np.where(masses[k] > 0, masses[k], 1.0), 0.0, 1.0)
    return cells.values(k, frac)


def numeric_values(Z: np.ndarray, col: int, coarse, j: int, cells: NumericTree, F: np.ndarray, masses: np.ndarray,
                   nonempty: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Values of numeric column ``j`` (encoded column ``col``) for sampled latent rows ``Z`` of one
    group: by :func:`rank_match` on its normal score, or, when it has a node block in the mixture
    (``coarse``), its node by :func:`quota_assign` on the block (meeting the released node masses)
    and its value inside the node by :func:`rank_match_within`."""
    block = None if coarse is None else coarse.block(j)
    if block is None:
        return rank_match(Z[:, col], cells, F, masses, nonempty, gen)
    level = coarse.levels[j]
    node = quota_assign(Z[:, block[0]:block[1]], cells.grid_counts(masses, level), gen)
    return rank_match_within(Z[:, col], node, cells, cells.grids[level], F, masses, gen)


def rank_match_within(z: np.ndarray, node: np.ndarray, cells: NumericTree, starts: np.ndarray, F: np.ndarray,
                      masses: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Values of one numeric column for records already given their node (node ``i``: the leaves
    ``starts[i]:starts[i + 1]``): inside each node, the i-th smallest latent score of its m records takes the
    released quantile at ``(i + U) / m`` of the node's leaves (as :func:`rank_match` does for the whole column)."""
    m = z.size
    order = cell_order(node, z + 1e-12 * gen.standard_normal(m))
    ns = node[order]
    cnt = np.bincount(node, minlength=starts.size - 1)
    first = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    lo, hi = F[starts[ns]], F[starts[ns + 1]]
    u = lo + (np.arange(m) - first[ns] + gen.random(m)) / cnt[ns] * (hi - lo)
    k = np.clip(np.searchsorted(F, u, side="right") - 1, starts[ns], starts[ns + 1] - 1)
    k = np.where(masses[k] > 0, k, _heaviest_leaf(masses, starts, ns, k))
    frac = np.clip((u - F[k]) / np.where(masses[k] > 0, masses[k], 1.0), 0.0, 1.0)
    out = np.empty(m)
    out[order] = cells.values(k, frac)
    return out


def cell_order(cell: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``np.lexsort((key, cell))``: the records by cell, by ``key`` inside a cell (ties of ``key`` in any order),
    as a sort by ``key`` then a stable sort by cell, the latter a radix sort on 16-bit cells: a third of
    lexsort's time on 50,000 records (50 numeric columns' two orderings each were a tenth of a release)."""
    order = np.argsort(key)
    cell = np.asarray(cell)[order]
    small = cell.size == 0 or (cell.min() >= 0 and cell.max() < 2 ** 15)
    return order[np.argsort(cell.astype(np.int16) if small else cell, kind="stable")]


def _heaviest_leaf(masses, starts, nodes, k):
    """For records whose leaf has no mass (a node with no released mass): the node's first leaf
    with the most mass (its first leaf when none has any)."""
    out = k.copy()
    for v in np.unique(nodes):
        a, b = starts[v], starts[v + 1]
        out[nodes == v] = a + int(np.argmax(masses[a:b]))
    return out


def decode_latent(mech, Z: np.ndarray, y) -> np.ndarray:
    """Encoded records from the mixture's latent rows ``Z`` (classes ``y``) of a fitted gauss-copula
    ``mech``: numeric columns rank-matched to the released marginals (through their node when they
    have a node block), categorical levels by quotas (post-processing of released values)."""
    gen, dom, n = mech.source_.generator, mech.domain_, Z.shape[0]
    X = np.zeros((n, dom.p))
    if not mech.cells_:  # numeric columns on their encoded scale (no copula)
        idx = np.asarray(dom.numeric, dtype=int)
        X[:, idx] = np.clip(Z[:, idx], 0.0, 1.0)
    if not mech.marginals_:  # no histogram released: argmax decoding
        for a, e in dom.blocks:
            X[np.arange(n), a + np.argmax(Z[:, a:e], axis=1)] = 1.0
        return X
    g = mech._groups(y, n)
    off = len(mech.cells_)
    for c in range(mech.groups_):
        rows = np.flatnonzero(g == c)
        if rows.size == 0:
            continue
        Zc = Z[rows]  # one copy of the group's latent rows for all its columns
        for j, col in enumerate(dom.numeric[:off]):
            X[rows, col] = numeric_values(Zc, col, mech.coarse_, j, mech.cells_[j], mech._cdf[j][c],
                                          mech.marginals_[j][c], mech._nonempty[j][c], gen)
        for b, (a, e) in enumerate(dom.blocks):
            X[rows, a + quota_assign(Zc[:, a:e], mech.marginals_[off + b][c], gen)] = 1.0
    return X


def sample_copula(mech, n: int):
    """``n`` records ``(X, y)`` of a fitted gauss-copula ``mech``: the mixture's draws decoded by
    :func:`decode_latent`."""
    Z, y = mech.mixture_.sample(n)
    return decode_latent(mech, Z, y), y


def sample_model(mech, n: int):
    """``n`` records ``(X, y)`` of a fitted gauss-copula whose dependence is the graphical model: every
    attribute's cell drawn from the model (:meth:`~privrelease.estimation.graphical.GraphicalModel.sample`,
    stratified: each clique's drawn counts within a record or so of the model's),
    then each numeric column's value inside its cell from its group's released tree masses (stratified
    quantiles, :func:`rank_match_within` on the positions of :func:`within_scores`, tilted by
    :func:`level_tilts`). Post-processing of released values only."""
    gen, dom = mech.source_.generator, mech.domain_
    attrs = mech.model_plan_.attributes
    codes = mech.model_.sample(n, gen, stratified=True)
    label = attrs.label
    y = codes[:, label].astype(np.int64) if label is not None else None
    g = mech._groups(y, n)
    X = np.zeros((n, dom.p))
    k = len(mech.cells_)
    Z = within_scores(codes[:, :k], gen) if k > 1 else None
    guide = guiding_levels(codes[:, :k], codes[:, k:k + len(dom.blocks)])
    for j, col in enumerate(dom.numeric[:k]):
        node, starts = codes[:, j], attrs.starts(j)
        u = gen.random(n) if Z is None else ndtr(Z[:, j])
        if guide[j] >= 0:
            u = level_tilts(node, codes[:, k + guide[j]], cell_widths(attrs.trees[j], starts), u)
        for c in range(mech.groups_):
            rows = np.flatnonzero(g == c)
            if rows.size:
                X[rows, col] = rank_match_within(u[rows], node[rows], mech.cells_[j], starts,
                                                 mech._cdf[j][c], mech.marginals_[j][c], gen)
    for b, (a, e) in enumerate(dom.blocks):
        merge = attrs.block_merges[b]
        X[np.arange(n), a + expand_levels(codes[:, k + b], merge, gen)] = 1.0
    return X, y


def expand_levels(cell: np.ndarray, merge, gen) -> np.ndarray:
    """A categorical column's levels from its cells in the model (``merge``: each level's cell, or None): a
    cell of one level is that level; a merged cell's level is drawn uniformly from its levels (MST's expansion
    of a compressed domain). A merged level's released count is below ``MERGE_STDS`` noise stds, so the
    differences between the levels of one cell are noise: drawn by their released counts (each group's
    histogram projected onto the non-negative counts, then summed), the rare levels took the noise's positive
    parts as mass (census_income_kdd, 6 seeds: 1-way TVD 0.0159 -> 0.0150, 2-way 0.0464 -> 0.0451, 3-way
    0.0551 -> 0.0540; the counts shrunk toward the cell's mean by James-Stein, which falls back to equal shares
    where the noise explains their spread: 0.0152, 0.0453, 0.0542). Drawn per group, the groups' own
    histograms made such levels near-perfect predictors of a class (a logistic regression trained on the
    release lost 0.06 of AUC on census_income_kdd)."""
    if merge is None:
        return cell
    merge = np.asarray(merge)
    level = np.zeros(int(merge.max()) + 1, dtype=np.int64)
    level[merge] = np.arange(merge.size)  # a cell of one level: that level
    out = level[cell]
    for c in np.flatnonzero(np.bincount(merge) > 1):
        members, rows = np.flatnonzero(merge == c), np.flatnonzero(cell == c)
        if rows.size:
            out[rows] = members[gen.integers(0, members.size, size=rows.size)]
    return out


def within_scores(cells: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """``(n, k)`` normal scores that place the n drawn records inside their cells of the k numeric columns
    (:func:`rank_match_within` ranks them within each cell): a Gaussian copula whose correlation is that of the
    drawn cells' normal scores (each column's cells ranked, ties broken at random, mapped to normal quantiles).

    The model fixes each record's cells; inside a cell the value used to be drawn independently for each
    column, so two columns that move together between cells (two measurements of one size, a latitude and a
    longitude along a street) lost their agreement inside them: x and y of R's diamonds fell within 0.1 mm of
    each other in 39 % of released rows against 96 % of real ones. Here the positions inside the cells carry
    the dependence the cells show. Where the columns are nearly independent between cells the scores are nearly
    independent too, and since a cell spans a small part of its column, the positions move the pair's coarse
    tables little whatever they are. A function of the model's draws and fresh randomness only
    (post-processing)."""
    from scipy.special import ndtri

    n, k = cells.shape
    ranks = np.empty((n, k))
    for j in range(k):
        order = cell_order(cells[:, j], gen.random(n))
        ranks[order, j] = (np.arange(n) + 0.5) / n
    R = np.nan_to_num(np.corrcoef(ndtri(ranks), rowvar=False))
    np.fill_diagonal(R, 1.0)
    w, V = np.linalg.eigh(R)  # R is a correlation matrix, PSD up to rounding
    return gen.standard_normal((n, k)) @ (V * np.sqrt(np.maximum(w, 0.0))).T


def cell_widths(tree, starts: np.ndarray) -> np.ndarray:
    """The public width of each cell of a numeric attribute: the sum of its leaves' widths, and 0 for a cell of
    one leaf (one value: an atom such as a spending's zero, a grid value cut as a run of its own, or the missing
    cell), inside which a position means nothing and whose density says nothing of a slope beside it."""
    starts = np.asarray(starts, dtype=np.int64)
    w = np.add.reduceat(np.asarray(tree.weights, dtype=np.float64), starts[:-1])
    return np.where(np.diff(starts) > 1, w, 0.0)


def level_tilts(cell: np.ndarray, level: np.ndarray, widths: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Positions in [0, 1] inside the cells of one numeric attribute, each record's position ``u`` tilted toward
    the side of its cell where its level of a categorical attribute continues (post-processing of the drawn
    cells ``cell`` and levels ``level`` of the attribute :func:`guiding_levels` chose, and public ``widths``).

    The model holds a numeric column in cells, and a level's records inside a cell used to take the cell's
    positions as every other level's. A level that occupies a stretch of the column (a neighbourhood its band of
    latitude, a grade its range of rates) and whose boundary cuts a cell was then spread over the whole cell.
    Here the level's density in the cell is taken to run linearly from its density in the left neighbour to its
    density in the right one: ``f(t) = 1 + a (2t - 1)`` on the cell, ``a = (d_right - d_left) / (d_right +
    d_left)`` (densities: the drawn counts of the level over the public widths; a neighbour of width 0, one
    value or the missing cell (:func:`cell_widths`), or absent counts as the cell itself, so an edge or a cell
    beside a spike reads no slope from it). A level entering a cell from the right, with nothing on its left,
    gets ``a = 1``: its records gather at the right end. ``u`` is carried through the tilt's quantile function (``t = F_a^{-1}(u)``, ``F_a(t) = a t^2 + (1 - a)
    t``), which is increasing, so positions correlated across columns (:func:`within_scores`) stay ranked as
    they were among a level's records."""
    if cell.size == 0:
        return u
    K, lv = widths.size, np.asarray(level, dtype=np.int64)
    L = int(lv.max()) + 1
    span = widths > 0
    d = np.bincount(lv * K + cell, minlength=L * K).reshape(L, K) / np.where(span, widths, 1.0)[None, :]
    idx = np.arange(K)
    left = np.where(span[np.maximum(idx - 1, 0)] & (idx > 0), idx - 1, idx)
    right = np.where(span[np.minimum(idx + 1, K - 1)] & (idx < K - 1), idx + 1, idx)
    dl, dr = d[:, left], d[:, right]
    a = np.where(dl + dr > 0, (dr - dl) / np.maximum(dl + dr, 1e-300), 0.0)
    a[:, ~span] = 0.0
    a = a[lv, cell]
    flat = np.abs(a) < 1e-9
    root = np.sqrt(np.maximum((1.0 - a) ** 2 + 4.0 * a * u, 0.0))
    return np.where(flat, u, (root - (1.0 - a)) / (2.0 * np.where(flat, 1.0, a)))


def guiding_levels(cells: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """For each numeric attribute (``cells``: the drawn ``(n, k)`` cells), the categorical attribute (a column of
    ``levels``, ``(n, blocks)``) whose levels explain most of the variance of its cells' mid-rank scores (the
    correlation ratio, from the drawn records); -1 where there is none. One sparse product per categorical
    attribute gives every numeric attribute's level means at once."""
    from scipy import sparse

    n, k = cells.shape
    if levels.shape[1] == 0 or n == 0 or k == 0:
        return np.full(k, -1, dtype=np.int64)
    S = np.empty((n, k))
    for j in range(k):
        counts = np.bincount(cells[:, j]).astype(np.float64)
        S[:, j] = ((np.cumsum(counts) - 0.5 * counts) / n)[cells[:, j]]
    centre = S.mean(axis=0)
    ratios = np.empty((levels.shape[1], k))  # the variance of the level means, each weighted by its count
    for b in range(levels.shape[1]):
        lv = np.asarray(levels[:, b], dtype=np.int64)
        size = np.bincount(lv).astype(np.float64)
        sums = sparse.csr_matrix((np.ones(n), (lv, np.arange(n))), shape=(size.size, n)) @ S
        ratios[b] = size @ (sums / np.maximum(size, 1)[:, None] - centre) ** 2
    return np.argmax(ratios, axis=0).astype(np.int64)
