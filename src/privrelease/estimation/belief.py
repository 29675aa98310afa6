"""Calibrated sum-product belief propagation on a junction tree, with messages in log space.

The model is ``log P(x) = sum_C theta_C(x_C) - log Z``, one potential ``theta_C`` per maximal clique
(an array with one axis per attribute of ``C``, attributes in increasing order). With the tree rooted
at one clique, the upward pass sends, from each clique ``C`` to its parent over the separator ``S``,

    m_C(x_S) = log sum_{x_C \\ S} exp(b_C(x_C)),   b_C = theta_C + (the messages from C's children),

so that ``b_C - m_C`` is the log of ``P(x_{C \\ S} | x_S)`` under the model (``C``'s subtree is the
only place its own attributes appear, by the running intersection property). The root's ``b`` is
``log Z`` plus the log of its marginal. The downward pass then needs no logarithm: each clique's
marginal is its conditional times its parent's marginal summed onto the separator.

The upward pass is first run on ``exp(theta_C - max theta_C)`` (every number at most 1), each
message divided by its maximum, with the maxima and divisors kept as logarithms: the same messages
up to a logged constant, in six array operations a clique instead of ten. It is trusted only if no separator
cell's sum falls below ``UNDERFLOW``: what a product of scaled numbers can lose to underflow is
below ``1e-300`` of the largest cell, so that threshold bounds the relative error of every kept sum
by ``1e-50``. Otherwise the pass is redone with the messages themselves as logarithms, each
exponential taken of ``b`` minus its maximum (one per clique, or one per separator cell where the
clique's would underflow): potentials of any magnitude then neither overflow nor lose a separator
cell.

A tree whose cliques meet over no attributes (empty separators) is handled the same way: the message
is a constant and the conditional is the marginal of the child's part.
"""

from __future__ import annotations

from collections import deque
from math import log, prod

import numpy as np

#: A separator cell whose scaled sum falls below this is summed again with its own maximum.
UNDERFLOW = 1e-250


class CliqueTree:
    """The tree's shape, fixed once: clique shapes and offsets in one flat vector, a root-first order,
    each clique's parent, separator and the axes summed over on either side."""

    def __init__(self, sizes, cliques, edges):
        self.sizes = tuple(int(s) for s in sizes)
        self.cliques = [tuple(int(a) for a in c) for c in cliques]
        self.shapes = [tuple(self.sizes[a] for a in c) for c in self.cliques]
        self._counts = np.array([prod(s) for s in self.shapes], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self._counts)]).astype(np.int64)
        self.cells = int(self.offsets[-1])
        self.members = [frozenset(c) for c in self.cliques]
        self.neighbours: list[list[int]] = [[] for _ in self.cliques]
        for i, j in edges:
            self.neighbours[i].append(j)
            self.neighbours[j].append(i)
        self.order, self.parent = _root_first(self.neighbours)
        self.separator, self.child_axes, self.parent_axes = {}, {}, {}
        self.in_child, self.in_parent, self.onto_child, self.onto_parent = {}, {}, {}, {}
        for c in self.order[1:]:
            p = self.parent[c]
            sep = tuple(a for a in self.cliques[c] if a in self.cliques[p])
            self.separator[c] = sep
            self.child_axes[c] = tuple(i for i, a in enumerate(self.cliques[c]) if a not in sep)
            self.parent_axes[c] = tuple(i for i, a in enumerate(self.cliques[p]) if a not in sep)
            self.in_child[c] = tuple(self.sizes[a] if a in sep else 1 for a in self.cliques[c])
            self.in_parent[c] = tuple(self.sizes[a] if a in sep else 1 for a in self.cliques[p])
            cells = prod(self.sizes[a] for a in sep)
            self.onto_child[c] = _onto(self.cliques[c], self.child_axes[c], cells)
            self.onto_parent[c] = _onto(self.cliques[p], self.parent_axes[c], cells)
        self._b_flat, self._p_flat = np.empty(self.cells), np.empty(self.cells)  # calibrate's work space
        self._b, self._p = self.views(self._b_flat), self.views(self._p_flat)
        self._live: dict[int, np.ndarray] | None = None

    def set_support(self, dead: np.ndarray | None) -> None:
        """Declare the cells whose log-potential is ``-inf`` in every ``theta`` calibrated from now on (structural
        zeros; flat boolean, or None for none): each separator cell that has a live cell below it, found by the
        upward pass on the live indicator. The scaled pass then tells a separator cell that sums to exactly 0
        because it is dead from one that underflowed (which needs the pass in logarithms)."""
        if dead is None or not np.any(dead):
            self._live = None
            return
        alive = self.views((~np.asarray(dead, dtype=bool)).astype(np.float64))
        self._live = {}
        for c in reversed(self.order[1:]):
            s = _sum_onto(alive[c], self.onto_child[c]).reshape(self.in_child[c]) > 0
            self._live[c] = s
            alive[self.parent[c]] *= s.reshape(self.in_parent[c])

    def views(self, flat: np.ndarray) -> list[np.ndarray]:
        """Each clique's array, as a view of the flat vector."""
        return [flat[self.offsets[i]:self.offsets[i + 1]].reshape(s) for i, s in enumerate(self.shapes)]

    def calibrate(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """Clique marginals (probabilities, flat, in the cliques' layout) of the model with flat
        potentials ``theta``, and ``log Z``."""
        log_z = self._upward_scaled(theta)
        if log_z is None:  # a separator cell's sum would underflow: messages in logarithms
            log_z = self._upward_log(theta)
        p = self._p
        for c in self.order[1:]:  # downward: the conditional times the parent's separator marginal
            q = p[self.parent[c]]
            p[c] *= _sum_onto(q, self.onto_parent[c]).reshape(self.in_child[c])
        return self._p_flat.copy(), log_z

    def _upward_scaled(self, theta: np.ndarray) -> float | None:
        """The upward pass on ``exp(theta_C - max theta_C)``, each message divided by its maximum and
        every scale kept as a logarithm: conditionals in ``_p`` and ``log Z``; None (and nothing to
        use) when a separator cell's sum falls below ``UNDERFLOW``, where products of these scaled
        numbers could lose it."""
        tops = _finite(np.maximum.reduceat(theta, self.offsets[:-1]))  # a clique of structural zeros only: 0
        np.subtract(theta, np.repeat(tops, self._counts), out=self._p_flat)
        np.exp(self._p_flat, out=self._p_flat)
        p, scale = self._p, tops.tolist()
        for c in reversed(self.order[1:]):
            s = _sum_onto(p[c], self.onto_child[c]).reshape(self.in_child[c])
            live = None if self._live is None else self._live[c]  # a dead separator cell sums to exactly 0
            if (s if live is None else s[live]).min(initial=np.inf) < UNDERFLOW:
                return None
            p[c] /= s if live is None else np.where(live, s, 1.0)  # P(x_{C \ S} | x_S), kept in place for now
            top = s.max()
            p[self.parent[c]] *= (s / top).reshape(self.in_parent[c])
            scale[self.parent[c]] += scale[c] + log(top)
        root = self.order[0]
        total = p[root].sum()
        if total < UNDERFLOW:
            return None
        p[root] /= total
        return float(log(total) + scale[root])

    def _upward_log(self, theta: np.ndarray) -> float:
        """The upward pass with messages as logarithms, each sum rescaled by its separator cell's own
        maximum where the clique's would underflow: conditionals in ``_p`` and ``log Z``."""
        np.copyto(self._b_flat, theta)
        b, p = self._b, self._p
        for c in reversed(self.order[1:]):
            axes = self.child_axes[c]
            top = _finite(b[c].max())
            e = np.exp(b[c] - top)
            s = np.add.reduce(e, axis=axes, keepdims=True)
            if s.min() < UNDERFLOW:  # a separator cell far below the clique's maximum (or dead): rescale per cell
                top = _finite(b[c].max(axis=axes, keepdims=True))
                e = np.exp(b[c] - top)
                s = np.add.reduce(e, axis=axes, keepdims=True)
            np.divide(e, np.where(s > 0, s, 1.0), out=p[c])  # a structural zero's separator cell: 0, not 0 / 0
            with np.errstate(divide="ignore"):
                message = np.log(s)  # -inf where every cell is a structural zero
            message += top
            b[self.parent[c]] += message.reshape(self.in_parent[c])
        root = self.order[0]
        top = _finite(b[root].max())
        e = np.exp(b[root] - top)
        total = e.sum()
        np.divide(e, total, out=p[root])
        return float(np.log(total) + top)

    def containing(self, attrs) -> int | None:
        """A clique holding every attribute of ``attrs`` (the one of fewest cells), or None."""
        want = set(attrs)
        holding = [i for i, c in enumerate(self.members) if want <= c]
        return min(holding, key=self._counts.__getitem__) if holding else None


def _finite(top):
    """A maximum of log-potentials with ``-inf`` (every cell a structural zero) read as 0, so that subtracting it
    leaves ``-inf`` rather than ``nan``."""
    if np.ndim(top) == 0:
        return float(top) if np.isfinite(top) else 0.0
    return np.where(np.isfinite(top), top, 0.0)


def _onto(clique, summed, cells: int) -> tuple[tuple[int, ...], int]:
    """How :func:`_sum_onto` sums a clique's array onto a separator: its axes with the separator's first (in their
    order) and the summed ones last, and the separator's cells."""
    return tuple(i for i in range(len(clique)) if i not in summed) + tuple(summed), int(cells)


def _sum_onto(table: np.ndarray, onto: tuple[tuple[int, ...], int]) -> np.ndarray:
    """``table`` summed onto a separator (flat, row-major over the separator's attributes): the summed axes moved
    last and the table made a matrix whose rows are summed. numpy's sum over several axes that are not the last
    walks the array with a short inner loop: over two axes of a (10, 6, 6, 6, 6, 2) clique it took 250
    microseconds, moved last 30 (the downward pass of the 101-column table's final model: half its time)."""
    perm, cells = onto
    return table.transpose(perm).reshape(cells, -1).sum(axis=1)


def _root_first(adj: list[list[int]]) -> tuple[list[int], dict[int, int]]:
    """Breadth-first order from clique 0 and each other clique's parent."""
    k = len(adj)
    order, parent, queue = [0], {}, deque([0])
    seen = {0}
    while queue:
        c = queue.popleft()
        for d in adj[c]:
            if d not in seen:
                seen.add(d)
                parent[d] = c
                order.append(d)
                queue.append(d)
    if len(order) != k:
        raise ValueError("the cliques' edges do not form one tree")
    return order, parent


def marginalise(attrs: tuple[int, ...], table: np.ndarray, keep) -> np.ndarray:
    """``table`` (axes ``attrs``) summed onto ``keep`` (a subset), with its axes in ``keep``'s order."""
    keep = tuple(keep)
    axes = tuple(i for i, a in enumerate(attrs) if a not in keep)
    out = table.sum(axis=axes) if axes else table
    kept = [a for a in attrs if a in keep]
    return np.transpose(out, [kept.index(a) for a in keep])


def conditional(attrs: tuple[int, ...], table: np.ndarray, given) -> tuple[tuple[int, ...], np.ndarray]:
    """The conditional of ``attrs`` not in ``given`` on those in ``given``, from a joint ``table``:
    a ``(given cells, other cells)`` matrix whose rows sum to one (a row of no mass is uniform), and
    the other attributes in order."""
    given = tuple(a for a in attrs if a in given)
    rest = tuple(a for a in attrs if a not in given)
    perm = [attrs.index(a) for a in given + rest]
    rows = prod(table.shape[attrs.index(a)] for a in given)
    t = np.transpose(table, perm).reshape(rows, -1)
    s = t.sum(axis=1, keepdims=True)
    t = np.where(s > 0, t / np.where(s > 0, s, 1.0), 1.0 / t.shape[1])
    return rest, t
