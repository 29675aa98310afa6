"""A discrete graphical model fitted to noisy marginals (the estimation of Private-PGM).

McKenna, Sheldon and Miklau 2019, *Graphical-model based estimation and inference for differential
privacy* (ICML): given noisy answers ``y_i`` to marginal queries of a table of ``N`` records over
discrete attributes, find the distribution that fits them best in least squares, searching only among
the consistent ones (the marginals of one non-negative table of total ``N``), and represent it by a
graphical model whose cliques are the measured marginals, so that neither the search nor the answer
ever materialises the full joint domain.

The model is the exponential family ``log P(x) = sum_C theta_C(x_C) - log Z`` over the maximal
cliques of a junction tree of the measured attribute sets (see :mod:`.junction`); ``mu(theta)`` is the
vector of its clique marginals times ``N`` (belief propagation, :mod:`.belief`). The loss is

    L(mu) = sum_i ||P_i mu_{C(i)} - y_i||^2 / (2 std_i^2),

``P_i`` summing the clique ``C(i)`` that holds measurement ``i`` onto its attributes. Its gradient in
marginal space is, cell by cell of each clique,

    dL/dmu_C(x_C) = sum_{i: C(i) = C} (P_i mu_C - y_i)(x_{A_i}) / std_i^2,

the weighted residual of every measurement on the clique, copied to each clique cell that sums into
it (``P_i`` is a 0/1 matrix, so ``d/dmu`` of ``P_i mu`` is ``P_i`` transposed, which broadcasts).

Mirror descent minimises a convex ``L`` over the marginal polytope ``M`` (the clique marginals of
all distributions, times ``N``) with the entropy as the mirror map:
``mu_{t+1} = argmin_{mu in M} <grad L(mu_t), mu> + D(mu, mu_t) / eta``, ``D`` the Kullback-Leibler
divergence of the joints. Over the exponential family this argmin is the model whose natural
parameters are ``theta_t - eta grad L(mu_t)``: the marginal-space gradient is a function of the
clique cells, so it is itself a set of clique potentials, and subtracting it from ``theta`` and
running belief propagation gives the next marginals exactly. That is Private-PGM's update (Algorithm
1 of the paper); ``L`` is smooth, so the step ``eta`` is found by Armijo backtracking: a step is
accepted when the loss falls by at least ``ARMIJO`` times its linear prediction
``<grad L(mu_t), mu_t - mu_{t+1}>``; each iteration starts from the last accepted step doubled and
halves it until accepted.

Plain mirror descent converges slowly once the large residuals are gone: a cell's potential moves
the cell's count in proportion to the count itself, so the rare cells of a wide model are corrected
last (on 100 attributes, 200 iterations leave the measured marginals 1.7 times as far from the truth
as the raw noisy answers). By default (``momentum=True``) each step is therefore taken from the
extrapolated potentials ``theta_t + k/(k+3) (theta_t - theta_{t-1})`` (Nesterov's momentum; ``k``
counts the steps since the last restart), and a step that ends above the current loss is dropped
and the momentum restarted from the current point (O'Donoghue and Candes 2015, *Adaptive restart for
accelerated gradient schemes*); the accepted losses never rise, and a restart is a plain mirror step.
On the same model, 200 iterations reach a lower loss than 1000 of plain mirror descent.

Nothing here sees data or a privacy parameter: only the measurements and their noise stds, and the
public total.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from scipy import sparse

from .belief import CliqueTree, conditional, marginalise
from .junction import ModelSizer, junction_tree, model_cells

__all__ = ["GraphicalModel", "MarginalMeasurement", "ModelSizer", "fit_model", "junction_tree", "model_cells"]

#: Mirror-descent iterations of :func:`fit_model` by default (with momentum, the error of a
#: 100-attribute model's measured marginals stops falling after about 200).
ITERS = 300
#: Share of the predicted decrease a step must achieve to be accepted (Armijo's constant).
ARMIJO = 0.5
#: Halvings of the step tried in one iteration before the descent stops (no decrease is left).
BACKTRACKS = 30
#: Log-potential of a structural zero (a cell known to be empty, :func:`fit_model`'s ``zeros``), added to the
#: free potentials and never moved by the descent: ``-inf``, so that the model restricted to the support is exact
#: whatever the free potentials do. A finite value (it was -200) was outgrown: cells inside a zero get no gradient,
#: while the live cells' potentials drift together by hundreds when the measurements' totals differ from the
#: public one (their common shift changes no live marginal), and over warm-started refits the zero's cells rose
#: by as much relative to them (a tenth of the records in an attribute's cell declared empty).
ZERO_POTENTIAL = -np.inf


@dataclass(frozen=True)
class MarginalMeasurement:
    """Noisy counts of one marginal.

    attrs: distinct attribute indices, in the order that flattens `values` (row-major / C order).
    values: noisy counts, length prod(sizes[a] for a in attrs).
    std: the noise std of every entry (> 0); weight 1/std in the loss.
    """

    attrs: tuple[int, ...]
    values: np.ndarray
    std: float


class GraphicalModel:
    """A fitted model: its clique potentials (log space), calibrated clique marginals and total.

    ``sizes`` are the attributes' numbers of levels; ``cliques`` the junction tree's maximal cliques
    (sorted tuples), ``edges`` its edges; ``potentials`` one array per clique (axes in the clique's
    attribute order); ``total`` the public number of records every marginal sums to; ``offsets`` (flat,
    in the cliques' layout, or None) the fixed log-potentials of structural zeros, added to ``potentials``
    (a warm start carries the potentials alone).
    """

    def __init__(self, sizes, cliques, edges, potentials, total: float, offsets: np.ndarray | None = None):
        self.sizes = tuple(int(s) for s in sizes)
        self.cliques = [tuple(c) for c in cliques]
        self.edges = [tuple(e) for e in edges]
        self.total = float(total)
        self._tree = CliqueTree(self.sizes, self.cliques, self.edges)
        self.potentials = [np.asarray(t, dtype=np.float64).reshape(s) for t, s in zip(potentials, self._tree.shapes)]
        flat = np.concatenate([t.ravel() for t in self.potentials]) if self.potentials else np.zeros(0)
        self.offsets = None if offsets is None else np.asarray(offsets, dtype=np.float64)
        if self.offsets is not None:
            flat = flat + self.offsets
            self._tree.set_support(np.isneginf(self.offsets))
        probabilities, self.log_partition = self._tree.calibrate(flat)
        self._marginals = self._tree.views(probabilities)
        self._conditionals: dict[int, tuple] = {}

    def project(self, attrs) -> np.ndarray:
        """Counts over `attrs` (ndarray of shape sizes[attrs], in the given order), summing to total.

        Inside one clique this sums that clique's marginal; otherwise it eliminates the attributes
        outside `attrs` over the smallest subtree of cliques touching `attrs`, in which the joint is
        the root's marginal times each other clique's conditional on its separator."""
        attrs = _distinct(attrs, len(self.sizes))
        tree = self._tree
        home = tree.containing(attrs)
        if home is not None:
            return self.total * marginalise(self.cliques[home], self._marginals[home], attrs)
        keep = _steiner(tree, attrs)
        order = [c for c in tree.order if c in keep]
        messages: dict[int, tuple[tuple[int, ...], np.ndarray]] = {}
        for c in reversed(order):
            clique = self.cliques[c]
            if c == order[0]:
                factor = (clique, self._marginals[c])
            else:
                sep, rest, cond = self._conditional(c)
                factor = (sep + rest, cond.reshape([self.sizes[a] for a in sep + rest]))
            for child, message in messages.pop(c, []):
                factor = _product(factor, message, self.sizes)
            wanted = set(attrs) | (set(tree.separator[c]) if c != order[0] else set())
            names, table = factor
            table = marginalise(names, table, [a for a in names if a in wanted])
            names = tuple(a for a in names if a in wanted)
            if c == order[0]:
                return self.total * marginalise(names, table, attrs)
            messages.setdefault(tree.parent[c], []).append((c, (names, table)))
        raise AssertionError("unreachable: the subtree has a root")

    def _conditional(self, c: int) -> tuple[tuple[int, ...], tuple[int, ...], np.ndarray]:
        """Clique ``c``'s separator, its other attributes and their conditional on the separator
        (rows: separator cells), computed once."""
        if c not in self._conditionals:
            sep = self._tree.separator[c]
            self._conditionals[c] = (sep, *conditional(self.cliques[c], self._marginals[c], sep))
        return self._conditionals[c]

    def sample(self, m: int, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
        """(m, A) int64 codes: the root clique's cells in counts rounded from ``m`` times its marginal
        (largest remainders, so each is within 1 of ``m * mu / total``) in random order, then each
        further clique's new attributes drawn given its separator's drawn values: independently, or
        (``stratified``) by stratified uniforms within each separator cell (:func:`_stratified`), so that
        every drawn clique's counts stay within a record or so of the model's, as the root's do."""
        m = int(m)
        codes = np.zeros((len(self.sizes), m), dtype=np.int64)  # one row per attribute while drawing
        tree = self._tree
        root = tree.order[0]
        cells = np.repeat(np.arange(self._marginals[root].size), _largest_remainders(self._marginals[root].ravel(), m))
        codes[list(self.cliques[root])] = np.unravel_index(rng.permutation(cells), tree.shapes[root])
        for c in tree.order[1:]:
            sep, rest, table = self._conditional(c)
            rows = np.ravel_multi_index(codes[list(sep)], [self.sizes[a] for a in sep]) if sep else np.zeros(m, np.int64)
            codes[list(rest)] = np.unravel_index(_draw_rows(table, rows, rng, stratified),
                                                 [self.sizes[a] for a in rest])
        return np.ascontiguousarray(codes.T)


def _distinct(attrs, n: int) -> tuple[int, ...]:
    attrs = tuple(int(a) for a in attrs)
    if len(set(attrs)) != len(attrs) or any(not 0 <= a < n for a in attrs):
        raise ValueError(f"attributes must be distinct indices below {n}; got {attrs}")
    return attrs


def _steiner(tree: CliqueTree, attrs) -> set[int]:
    """The smallest subtree holding every clique that meets ``attrs`` (leaves that do not are cut
    off until none is left)."""
    want = set(attrs)
    keep = set(range(len(tree.cliques)))
    degree = [len(n) for n in tree.neighbours]
    leaves = [c for c in keep if degree[c] <= 1 and not want & tree.members[c]]
    while leaves and len(keep) > 1:
        c = leaves.pop()
        keep.discard(c)
        for d in tree.neighbours[c]:
            if d in keep:
                degree[d] -= 1
                if degree[d] <= 1 and not want & tree.members[d]:
                    leaves.append(d)
    return keep


def _product(f, g, sizes) -> tuple[tuple[int, ...], np.ndarray]:
    """The product of two factors ``(attrs, table)`` over the union of their attributes (sorted)."""
    names = tuple(sorted(set(f[0]) | set(g[0])))
    out = None
    for attrs, table in (f, g):
        order = sorted(attrs)
        t = np.transpose(table, [attrs.index(a) for a in order])
        t = t.reshape([sizes[a] if a in attrs else 1 for a in names])
        out = t if out is None else out * t
    return names, out


def _largest_remainders(p: np.ndarray, m: int) -> np.ndarray:
    """Integer counts summing to ``m``, each the floor of ``m p`` or one more (largest remainders
    first, ties by index)."""
    share = m * np.clip(p, 0.0, None) / max(float(np.clip(p, 0.0, None).sum()), 1e-300)
    counts = np.floor(share).astype(np.int64)
    short = m - int(counts.sum())
    if short > 0:
        counts[np.argsort(counts - share, kind="stable")[:short]] += 1
    return counts


def _stratified(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniform per record, stratified within each row: the m records sharing a row (in random order)
    get ``(i + U_i) / m``, i = 0..m-1, so that each row's draws from its conditional hit every value within
    one record of m times its probability, and each record's draw is still distributed as the conditional."""
    m = rows.shape[0]
    shuffled = rng.permutation(m)
    order = shuffled[np.argsort(rows[shuffled], kind="stable")]
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
    sizes = np.diff(np.r_[starts, m])
    rank = np.arange(m) - np.repeat(starts, sizes)
    u = np.empty(m)
    u[order] = (rank + rng.random(m)) / np.repeat(sizes, sizes)
    return u


def _draw_rows(table: np.ndarray, rows: np.ndarray, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
    """One draw per record from row ``rows[r]`` of a row-stochastic ``table``: the rows' cumulative
    sums, each shifted by its row index, make one increasing array, searched at ``row + u`` (``u``
    independent uniforms, or :func:`_stratified` ones)."""
    k = table.shape[1]
    cum = np.cumsum(table, axis=1)
    cum /= cum[:, -1:]
    cum[:, -1] = 1.0
    flat = (cum + np.arange(table.shape[0])[:, None]).ravel()
    u = _stratified(rows, rng) if stratified else rng.random(rows.shape[0])
    drawn = np.searchsorted(flat, rows + u, side="right") - rows * k
    return np.clip(drawn, 0, k - 1)


def fit_model(sizes, measurements, total, *, iters=ITERS, warm: GraphicalModel | None = None,
              cliques_extra=(), momentum: bool = True, zeros=()) -> GraphicalModel:
    """Mirror descent (private-pgm's estimation): the model is the exponential family
    log P(x) = sum_C theta_C(x_C) - log Z over the maximal cliques of junction_tree(sizes,
    [m.attrs for m in measurements] + cliques_extra); mu = its clique marginals times `total`
    (computed by calibrated sum-product belief propagation in log space on the junction tree);
    loss L(mu) = sum_i ||P_i mu - y_i||^2 / (2 std_i^2) (P_i: marginalising the clique that holds
    measurement i onto its attrs, in its attrs' order); theta <- theta - eta * dL/dmu, with eta chosen
    by Armijo backtracking (start from the last accepted step, double it after an accepted step as
    private-pgm does); `warm` starts from an earlier model's potentials (cliques of the old model
    folded into the new cliques that contain them). Attributes with no measurement come out uniform.
    The total is public and fixed (do not estimate it).

    With `warm`, its cliques join `cliques_extra` (so each old clique has a new one holding it and
    the start is exactly the old model). `momentum` takes each step from Nesterov's extrapolated
    potentials with adaptive restarts; `momentum=False` is plain mirror descent. The derivation of
    the gradient and of the update is in the module's docstring.

    `zeros`: structural zeros, ``(attrs, mask)`` pairs (``mask`` boolean over the cells of ``attrs``, in
    their order, True where the cell is known to be empty): each attribute set is made part of a clique, and
    that clique's cells inside a masked cell get the fixed log-potential ``ZERO_POTENTIAL`` on top of the free
    potentials, so the model gives them no mass whatever the measurements say (private-pgm's structural zeros;
    mirror descent over the other cells is unchanged: the family is the same, restricted to their support).
    """
    sizes = tuple(int(s) for s in sizes)
    total = float(total)
    if not (np.isfinite(total) and total > 0):
        raise ValueError(f"the total must be a positive number; got {total}")
    zeros = [(_distinct(a, len(sizes)), np.asarray(z, dtype=bool)) for a, z in zeros]
    measurements = [_checked(m, sizes) for m in measurements]
    extra = [tuple(c) for c in cliques_extra]
    if warm is not None:
        if warm.sizes != sizes:
            raise ValueError(f"the warm start's attribute sizes {warm.sizes} differ from {sizes}")
        extra += warm.cliques
    cliques, edges = junction_tree(sizes, [m.attrs for m in measurements] + extra + [a for a, _ in zeros])
    tree = CliqueTree(sizes, cliques, edges)
    offsets = _zero_offsets(tree, zeros) if any(z.any() for _, z in zeros) else None
    tree.set_support(None if offsets is None else np.isneginf(offsets))
    theta = np.zeros(tree.cells)
    if warm is not None:
        views = tree.views(theta)
        for clique, potential in zip(warm.cliques, warm.potentials):
            c = tree.containing(clique)
            views[c] += _onto_clique(tree, c, clique, potential)
    theta = _descend(tree, _Loss(tree, measurements, total), theta, int(iters), bool(momentum), offsets)
    return GraphicalModel(sizes, cliques, edges, tree.views(theta), total, offsets)


def _zero_offsets(tree: CliqueTree, zeros) -> np.ndarray:
    """The flat log-potentials of the structural zeros: ``ZERO_POTENTIAL`` on every cell of the clique holding
    a zero set that lies inside one of its masked cells, 0 elsewhere."""
    flat = np.zeros(tree.cells)
    views = tree.views(flat)
    for attrs, mask in zeros:
        if mask.shape != tuple(tree.sizes[a] for a in attrs):
            raise ValueError(f"the structural zeros over attributes {attrs} have shape {mask.shape}")
        c = tree.containing(attrs)
        views[c][_onto_clique(tree, c, attrs, mask)] = ZERO_POTENTIAL
    return flat


def _onto_clique(tree: CliqueTree, c: int, attrs, table: np.ndarray) -> np.ndarray:
    """``table`` (axes in the order of ``attrs``, a subset of clique ``c``) broadcast onto the clique's cells: its
    axes put in the clique's (sorted) order, a length-1 axis for each other attribute of the clique."""
    t = np.transpose(table, np.argsort(attrs)).reshape([tree.sizes[a] if a in attrs else 1 for a in tree.cliques[c]])
    return np.broadcast_to(t, tree.shapes[c])


def _checked(m: MarginalMeasurement, sizes) -> MarginalMeasurement:
    attrs = _distinct(m.attrs, len(sizes))
    values = np.asarray(m.values, dtype=np.float64).ravel()
    cells = prod(sizes[a] for a in attrs)
    if values.size != cells:
        raise ValueError(f"the measurement over attributes {attrs} has {values.size} values for {cells} cells")
    if not np.isfinite(values).all():
        raise ValueError(f"the measurement over attributes {attrs} has a value that is not a finite number")
    if not (np.isfinite(m.std) and m.std > 0):
        raise ValueError(f"the measurement over attributes {attrs} needs a positive noise std; got {m.std}")
    return MarginalMeasurement(attrs, values, float(m.std))


class _Loss:
    """``L`` and its marginal-space gradient, with every ``P_i`` in one sparse 0/1 matrix ``Q`` from
    the flat clique marginals (probabilities) to the measured cells, so ``P_i mu = total (Q p)_i``."""

    def __init__(self, tree: CliqueTree, measurements, total: float):
        rows, cols = [], []
        y, weight = [], []
        start = 0
        for m in measurements:
            c = tree.containing(m.attrs)
            index = np.arange(m.values.size).reshape([tree.sizes[a] for a in m.attrs])
            rows.append(start + _onto_clique(tree, c, m.attrs, index).ravel())
            cols.append(np.arange(tree.offsets[c], tree.offsets[c + 1]))
            y.append(m.values)
            weight.append(np.full(m.values.size, 1.0 / m.std**2))
            start += m.values.size
        rows_, cols_ = (np.concatenate(v) if v else np.zeros(0, np.int64) for v in (rows, cols))
        q = sparse.csr_matrix((np.full(rows_.size, float(total)), (rows_, cols_)), shape=(start, tree.cells))
        self.q, self.q_t = q, q.T.tocsr()
        self.y = np.concatenate(y) if y else np.zeros(0)
        self.weight = np.concatenate(weight) if weight else np.zeros(0)
        self.total = float(total)

    def value(self, p: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss at marginals ``total * p`` and the weighted residuals ``(P_i mu - y_i) / std_i^2``."""
        r = self.q @ p - self.y
        wr = self.weight * r
        return 0.5 * float(np.multiply(r, wr).sum()), wr  # no BLAS: its threads cost more than they save here

    def gradient(self, wr: np.ndarray) -> np.ndarray:
        """``dL/dmu`` on every clique cell: each measurement's weighted residual, broadcast back."""
        return (self.q_t @ wr) / self.total

    def first_step(self) -> float:
        """A step at which one measured cell, alone, would move about as far as its residual."""
        curvature = self.q_t @ self.weight / self.total
        return 1.0 / (self.total * max(float(curvature.max(initial=0.0)), 1e-300))


def _descend(tree: CliqueTree, loss: _Loss, theta: np.ndarray, iters: int, momentum: bool,
             offsets: np.ndarray | None = None) -> np.ndarray:
    """Mirror descent with Armijo backtracking (module docstring), each step taken from the
    extrapolated point when ``momentum``; returns the last potentials (the fixed ``offsets`` of the
    structural zeros added to every point calibrated, never moved)."""
    work = np.empty_like(theta) if offsets is not None else None  # calibrate reads its argument, keeps none of it
    calibrate = tree.calibrate if offsets is None else (lambda t: tree.calibrate(np.add(t, offsets, out=work)))
    p, _ = calibrate(theta)
    at = _Point(theta, p, *loss.value(p))
    step, previous, k = loss.first_step(), theta, 0
    for _ in range(iters):
        if at.value == 0.0:
            break
        beta = k / (k + 3.0) if momentum else 0.0
        start = at
        if beta > 0.0:
            y = at.theta + beta * (at.theta - previous)
            p_y, _ = calibrate(y)
            start = _Point(y, p_y, *loss.value(p_y))
        found = _armijo(calibrate, loss, start, step)
        if found is not None and found[0].value <= at.value:
            previous, at, step, k = at.theta, found[0], 2.0 * found[1], k + 1
        elif beta > 0.0:
            previous, k = at.theta, 0  # the extrapolation overshot: restart the momentum from here
        else:
            break  # no step lowers the loss: converged to rounding
    return at.theta


@dataclass(frozen=True)
class _Point:
    theta: np.ndarray
    p: np.ndarray
    value: float
    weighted_residual: np.ndarray


def _armijo(calibrate, loss: _Loss, start: _Point, step: float) -> tuple[_Point, float] | None:
    """The mirror step from ``start`` with the largest of ``step``, ``step / 2``, ... that lowers the
    loss by at least ``ARMIJO`` times its linear prediction, and that step (None if none does)."""
    grad = loss.gradient(start.weighted_residual)
    for _ in range(BACKTRACKS):
        theta = start.theta - step * grad
        p, _ = calibrate(theta)
        point = _Point(theta, p, *loss.value(p))
        if start.value - point.value >= ARMIJO * loss.total * float(np.multiply(grad, start.p - p).sum()):
            return point, step
        step *= 0.5
    return None
