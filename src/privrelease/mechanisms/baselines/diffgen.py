"""DiffGen (Mohammed, Chen, Fung, Yu, KDD 2011): differentially private top-down generalisation.

The baseline of Jiang et al. 2013, sec. 4.4 (DiffGen-INFOGAIN and DiffGen-MAX).
Taxonomy trees of the categorical attributes are public and declared in the schema
(``taxonomy`` of a categorical column); numeric attributes are split on their public
encoded interval [0, 1].
"""

from __future__ import annotations

from numbers import Integral

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from ...dp.rounding import largest_remainder
from ...dp.selection import exponential_mechanism
from ...errors import InputDataError, ParameterError, SchemaError
from ..base import R1_LABEL, SyntheticMechanism
from ..constraints import COMMON, Instance, Interval, Options

SCORES = ("infogain", "max")
MAX_CELLS = 20_000_000


# ---- taxonomies -----------------------------------------------------------------

def taxonomy_tree(taxonomy: Any, levels) -> Any:
    """Turn a schema taxonomy (names) into an index tree over ``levels``.

    A taxonomy node is a level name (a leaf), a list of nodes (a group whose children
    are the items) or a mapping ``{name: node, ...}`` (each value a named child; a
    one-key mapping just names its node). The result is a nested list of level indices
    (ints are leaves); groups with a single child are collapsed. ``None`` gives the flat
    tree (the root's children are the levels). Every level must appear exactly once.

    >>> taxonomy_tree({"Any": ["b", {"G": ["a", "c"]}]}, ["a", "b", "c"])
    [1, [0, 2]]
    """
    levels = [str(v) for v in levels]
    if taxonomy is None:
        return list(range(len(levels)))
    index = {v: i for i, v in enumerate(levels)}
    seen: list[int] = []

    def conv(node):
        if isinstance(node, Mapping):
            kids = [conv(v) for v in node.values()]
            return kids[0] if len(kids) == 1 else kids
        if isinstance(node, (list, tuple)):
            kids = [conv(v) for v in node]
            if not kids:
                raise SchemaError("a taxonomy group is empty")
            return kids[0] if len(kids) == 1 else kids
        name = str(node)
        if name not in index:
            raise SchemaError(f"taxonomy level {name!r} is not one of the column's categories {levels}")
        seen.append(index[name])
        return index[name]

    tree = conv(taxonomy)
    if sorted(seen) != list(range(len(levels))):
        missing = sorted(set(levels) - {levels[i] for i in seen})
        dup = sorted({levels[i] for i in seen if seen.count(i) > 1})
        raise SchemaError(f"taxonomy must list every level once (missing {missing}, repeated {dup})")
    return tree if isinstance(tree, list) else [tree]


def _leaves(node) -> list[int]:
    if isinstance(node, (int, np.integer)):
        return [int(node)]
    out: list[int] = []
    for k in node:
        out.extend(_leaves(k))
    return out


# ---- scores -------------------------------------------------------------------------

def _entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Class entropy (bits) of each row of a count matrix (0 for empty rows)."""
    counts = np.asarray(counts, dtype=np.float64)
    tot = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tot > 0, counts / tot, 0.0)
        h = -np.where(p > 0, p * np.log2(p), 0.0).sum(axis=-1)
    return h


def infogain(child_counts: np.ndarray) -> np.ndarray:
    """InfoGain of a split: ``H(D_v) - sum_child |D_child| / |D_v| H(D_child)`` (bits).

    ``child_counts`` has shape (..., children, classes). Values lie in [0, log2 K].
    """
    cc = np.asarray(child_counts, dtype=np.float64)
    parent = cc.sum(axis=-2)
    tot = parent.sum(axis=-1)
    w = np.where(tot[..., None] > 0, cc.sum(axis=-1) / np.maximum(tot[..., None], 1), 0.0)
    return _entropy_bits(parent) - (w * _entropy_bits(cc)).sum(axis=-1)


def max_score(child_counts: np.ndarray) -> np.ndarray:
    """Max of a split: ``sum_child max_class |D_child^class|``."""
    return np.asarray(child_counts, dtype=np.float64).max(axis=-1).sum(axis=-1)


def score_sensitivity(score: str, n_classes: int) -> float:
    """Sensitivity of the score under R1 (one record replaced, its label included).

    * InfoGain lies in [0, log2 K] whatever the data, so any change is at most
      ``log2 K`` (= 1 for Adult; DiffGen's value).
    * Max is a sum of per-child maxima of counts: removing a record lowers it by at
      most 1 and adding one raises it by at most 1, so a replacement moves it by at
      most 2 (DiffGen states 1 under add/remove).
    """
    return math.log2(max(n_classes, 2)) if score == "infogain" else 2.0


# ---- the mechanism ---------------------------------------------------------------------

class DiffGen(SyntheticMechanism):
    """Differentially private top-down specialisation with noisy leaf counts.

    Parameters
    ----------
    epsilon : float in (0, inf]
    score : "infogain" (DiffGen-INFOGAIN) or "max" (DiffGen-MAX)
    n_specializations : int, default 10
        h, the number of specialisations (the Jiang et al. setting is not stated; 10 [A]).
    taxonomies : list or None
        One index tree per categorical block of the domain, in order (see
        :func:`taxonomy_tree`; ``release`` fills it from the schema's ``taxonomy`` fields).
        None: flat trees.
    domain : EncodedDomain or None
    n_classes : int or None
    rng : None, int or numpy.random.Generator

    Attributes
    ----------
    cut_ : per attribute, the released cut (categorical: lists of leaf levels; numeric:
        (low, high) intervals in the encoded [0, 1] scale)
    cells_ : (m, attributes) index of each released cell's concept in the cut, per attribute
    cell_labels_ : (m,) class of each released cell
    cell_counts_ : (m,) noisy counts (ceiling, negatives set to 0)
    specializations_ : list of what was specialised, in order

    Notes
    -----
    Guarantee: epsilon-DP under R1 with the label in the record (one record replaced;
    n public, though not used). DiffGen is stated for add/remove neighbours; under
    replacement the count noise is doubled (a record leaving one cell and entering
    another moves the count vector by 2 in L1) and the Max score's sensitivity is 2
    (:func:`score_sensitivity`). Public: the taxonomy trees, the encoded numeric domain
    [0, 1] (from the schema's bounds), the label set and h.

    Steps (ALGORITHMS.md 2.5; Mohammed et al. 2011, Algorithm 1):

    1. Every attribute starts at its root (numeric: [0, 1]); one partition.
    2. ``eps' = epsilon / (2 m)`` with ``m = |A_num| + h + 2 h [|A_num| > 0]`` the largest
       number of exponential mechanisms a run can charge under R1 (below); ``h = 0``
       runs none and gives the whole budget to the counts.
    3. Each numeric interval gets a split point by the exponential mechanism with budget
       eps': candidates are the sub-intervals between consecutive distinct values (and
       the interval ends) weighted by ``exp(eps' u / (2 Delta_u))`` times their length,
       then a point uniform in the chosen sub-interval (the exponential mechanism over
       the continuum with a piecewise-constant utility).
    4. Repeat h times: choose a concept v of the cut with probability proportional to
       ``exp(eps' u(v) / (2 Delta_u))`` (cost eps'); specialise it (children replace it);
       new numeric intervals get split points as in 3 (cost 2 eps', see below).
    5. The remaining budget ``eps_rem = epsilon - spent >= epsilon / 2`` goes to the
       counts of every leaf cell (the product of the cuts) and class:
       ``count + Lap(2 / eps_rem)``, rounded up, negatives set to 0 (as the DiffGen code).

    Accounting under R1 (derived; DiffGen's own accounting is for add/remove):

    * Root split points: the root interval of every numeric attribute holds every
      record, so the ``|A_num|`` root exponential mechanisms all see the replaced record:
      sequential composition, ``|A_num| eps'`` (DiffGen charges eps' once: its argument
      covers one attribute).
    * Specialisation choices: one exponential mechanism per round, ``eps'`` each.
    * Child split points: the two children of a specialised interval hold disjoint
      records, but a replaced record may leave one child and its replacement enter the
      other (a new value on the other side of the split), so both children's mechanisms
      change: ``2 eps'`` per numeric specialisation, not ``eps'`` (parallel composition
      holds under add/remove only). Each child's mechanism is still eps'-DP for the
      removal or the addition it sees: InfoGain lies in [0, log2 K] and Max moves by at
      most 1 when a record is added or removed, both within ``Delta_u``.
    * The sum of the charges is at most ``m eps' = epsilon / 2``; the counts take the
      rest, so the total is epsilon whatever the run (the budget of each step is fixed by
      earlier releases only: adaptive sequential composition).

    Scores depend only on an attribute's own values and the class (the cut is global per
    attribute), so they are computed from per-attribute class counts.

    Output: ``sample()`` replicates each cell by its noisy count with values drawn
    uniformly inside the generalised values (numeric: uniform in the interval; categorical:
    uniform over the leaves of the concept): ordinary records usable by classifiers.
    ``generalized()`` gives the generalised cells themselves.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "score": [Options(*SCORES)],
        "n_specializations": [Interval(Integral, 0, None, closed="left")],
        "taxonomies": [None, Instance(dict, list, tuple, what="a list or dict of taxonomy trees")],
        "n_classes": [None, Interval(Integral, 2, None, closed="left")],
    }

    name: ClassVar[str] = "diffgen"
    relation: ClassVar[str] = R1_LABEL
    supervised: ClassVar[bool] = True
    summary: ClassVar[str] = ("DiffGen (Mohammed et al. 2011): private top-down specialisation over public "
                              "taxonomies (INFOGAIN or MAX score), noisy leaf counts, sampled records")

    def __init__(self, epsilon=1.0, *, score="max", n_specializations=10, taxonomies=None, domain=None,
                 n_classes=None, rng=None):
        self.epsilon = epsilon
        self.score = score
        self.n_specializations = n_specializations
        self.taxonomies = taxonomies
        self.domain = domain
        self.n_classes = n_classes
        self.rng = rng

    @classmethod
    def schema_params(cls, encoder, label_encoder) -> dict:
        """Taxonomy trees declared in the schema (public)."""
        out = {}
        cats = [c for c in encoder.columns if c.kind == "categorical"]
        if any(c.taxonomy is not None for c in cats):
            out["taxonomies"] = [taxonomy_tree(c.taxonomy, c.categories) for c in cats]
        return out

    # -- exponential-mechanism helpers -----------------------------------------------------
    def _choose(self, utilities, eps_prime, log_base=None):
        return exponential_mechanism(utilities, eps_prime, self.delta_u_, self.source_, log_base=log_base)

    def _split_point(self, values, labels, lo, hi, eps_prime):
        """Choose a split point of [lo, hi) by the exponential mechanism (step 3)."""
        K = self.n_classes_
        v = np.sort(values)
        lab = labels[np.argsort(values, kind="stable")]
        # candidate sub-intervals: between consecutive distinct values inside (lo, hi)
        inner = np.unique(v[(v > lo) & (v < hi)])
        edges = np.concatenate([[lo], inner, [hi]])
        left_len = edges[1:] - edges[:-1]
        # class counts left of a split in (edges[i], edges[i+1]): records with value <= edges[i]
        onehot = np.zeros((v.size, K))
        onehot[np.arange(v.size), lab] = 1
        cum = np.vstack([np.zeros(K), np.cumsum(onehot, axis=0)])
        pos = np.searchsorted(v, edges[:-1], side="right")
        left = cum[pos]
        total = cum[-1]
        cc = np.stack([left, total - left], axis=1)  # (candidates, 2, K)
        u = self.score_fn_(cc)
        with np.errstate(divide="ignore"):
            logl = np.log(left_len)
        i = self._choose(u, eps_prime, logl)
        if not math.isfinite(eps_prime):
            return float(0.5 * (edges[i] + edges[i + 1]))
        return float(edges[i] + self.source_.uniform(1)[0] * (edges[i + 1] - edges[i]))

    # -- fit -------------------------------------------------------------------------------------
    def fit(self, X, y=None):
        eps, X, y, dom = self._check_common(X, y)
        h = self._check_int(self.n_specializations, "n_specializations", 0)
        y, K, trees = self._labels_and_trees(y, dom)
        self.n_classes_ = K
        self.score_fn_ = infogain if self.score == "infogain" else max_score
        self.delta_u_ = score_sensitivity(self.score, K)
        n_num = dom.p1
        # R1 worst case: n_num root splits, h choices, 2 child splits per numeric specialisation
        n_em = (n_num + h + (2 * h if n_num else 0)) if h > 0 else 0
        eps_prime = eps / (2 * n_em) if n_em > 0 else eps
        n = X.shape[0]
        attrs = _attributes(X, y, dom, trees, K)
        spent = self._specialise_all(attrs, y, h, eps_prime)
        eps_rem = eps - sum(spent.values()) if math.isfinite(eps) else eps
        self._release_cells(attrs, y, n, K, eps_rem)
        self.domain_ = dom
        self.n_ = n
        self.sensitivities_ = {"score": self.delta_u_, "counts_l1": 2.0}
        self.noise_scales_["exponential_mechanism_temperature"] = \
            (2 * self.delta_u_ / eps_prime) if math.isfinite(eps_prime) else 0.0
        self.budget_split_ = {"root split points (eps' per numeric attribute)": spent["root"],
                              "specialisation choices (eps' each)": spent["choices"],
                              "child split points (2 eps' per numeric specialisation)": spent["children"],
                              "leaf counts": eps_rem}
        self.eps_prime_ = eps_prime
        self._set_cost(eps)
        return self


    def _labels_and_trees(self, y, dom):
        """Integer class codes, the number of classes and one taxonomy tree per categorical block."""
        y = np.asarray(y)
        if y.ndim != 1 or (y.size and (not np.all(np.equal(np.mod(y, 1), 0)) or y.min() < 0)):
            raise InputDataError("y must be a 1-d array of integer class codes 0..K-1")
        y = y.astype(np.int64)
        K = self._check_int(self.n_classes, "n_classes", 2) if self.n_classes is not None else max(2, int(y.max()) + 1)
        if y.max() >= K:
            raise InputDataError(f"y has class code {int(y.max())} but n_classes is {K}")
        trees = self.taxonomies
        if trees is None:
            trees = [list(range(b - a)) for a, b in dom.blocks]
        if len(trees) != len(dom.blocks):
            raise ParameterError(f"taxonomies: expected {len(dom.blocks)} trees (one per categorical block), got {len(trees)}")
        for t, (a, b) in zip(trees, dom.blocks):
            if sorted(_leaves(t)) != list(range(b - a)):
                raise ParameterError("each taxonomy must be an index tree listing every level of its block once")
        return y, K, trees

    def _specialise_all(self, attrs, y, h: int, eps_prime: float) -> dict:
        """Root split points, then ``h`` specialisations chosen by the exponential mechanism;
        returns the epsilon spent on each kind of choice."""
        spent = {"root": 0.0, "choices": 0.0, "children": 0.0}
        if h > 0:  # at h = 0 no split point can reach the output: none is computed or charged
            for at in attrs:
                if at["kind"] == "numeric":
                    at["cut"][0]["split"] = self._split_point(at["values"], y, 0.0, 1.0, eps_prime)
                    spent["root"] += eps_prime  # every root holds every record: sequential
        self.specializations_ = []
        for _ in range(h):
            cands, utils = [], []
            for ai, at in enumerate(attrs):
                for ci, c in enumerate(at["cut"]):
                    cc = self._child_counts(at, ci, c, y)
                    if cc is None:
                        continue
                    cands.append((ai, ci))
                    utils.append(float(self.score_fn_(cc)))
            if not cands:
                break
            k = self._choose(np.array(utils), eps_prime)
            spent["choices"] += eps_prime
            ai, ci = cands[k]
            at = attrs[ai]
            self._specialise(at, ci, y, eps_prime)
            if at["kind"] == "numeric":
                spent["children"] += 2 * eps_prime  # R1: a record may move between the two children
            self.specializations_.append({"attribute": ai, "concept": ci, "score": utils[k]})
        return spent

    def _release_cells(self, attrs, y, n: int, K: int, eps_rem: float) -> None:
        """Laplace counts of every (cell of the final cuts, class); the positive ones are kept."""
        # counts of every cell (product of the cuts) and class
        shape = tuple(len(at["cut"]) for at in attrs) + (K,)
        n_cells = int(np.prod(shape))
        if n_cells > MAX_CELLS:
            raise ParameterError(f"DiffGen would release {n_cells} cells; lower n_specializations")
        flat = np.ravel_multi_index(tuple(at["assign"] for at in attrs) + (y,), shape)
        counts = np.bincount(flat, minlength=n_cells).astype(np.float64)
        self.source_.set_value_bound(float(n))  # every cell count lies in [0, n]
        self.noise_scales_ = {}
        noisy = self._laplace("counts", counts, 2.0, eps_rem, coords=n_cells)
        scale = self.noise_scales_["counts"]
        noisy = np.maximum(np.ceil(noisy - 1e-9 * (scale == 0)), 0).astype(np.int64)
        keep = np.flatnonzero(noisy > 0)
        idx = np.unravel_index(keep, shape)
        self.cells_ = np.column_stack(idx[:-1]) if attrs else np.zeros((keep.size, 0), dtype=np.int64)
        self.cell_labels_ = idx[-1].astype(np.int64)
        self.cell_counts_ = noisy[keep]
        self.cut_ = [[(c["lo"], c["hi"]) for c in at["cut"]] if at["kind"] == "numeric"
                     else [_leaves(c["node"]) for c in at["cut"]] for at in attrs]
        self._attrs_meta = [{k: at[k] for k in ("kind", "col", "cols") if k in at} for at in attrs]

    def _child_counts(self, at, ci, c, y):
        """(children, classes) counts if concept c can be specialised, else None."""
        K = self.n_classes_
        if at["kind"] == "categorical":
            node = c["node"]
            if isinstance(node, (int, np.integer)):
                return None
            return np.stack([at["level_counts"][_leaves(ch)].sum(axis=0) for ch in node])
        mask = at["assign"] == ci
        v = at["values"][mask]
        yy = y[mask]
        left = v < c["split"]
        cc = np.zeros((2, K))
        np.add.at(cc, (left.astype(np.int64) ^ 1, yy), 1)  # row 0 = left child
        return cc

    def _specialise(self, at, ci, y, eps_prime):
        c = at["cut"][ci]
        pos = at["assign"]
        if at["kind"] == "categorical":
            children = [{"node": ch} for ch in c["node"]]
            base = len(at["cut"])
            at["cut"][ci] = children[0]
            at["cut"].extend(children[1:])
            lookup = {}
            for j, ch in enumerate(children):
                for lev in _leaves(ch["node"]):
                    lookup[lev] = ci if j == 0 else base + j - 1
            mask = pos == ci
            table = np.full(max(lookup) + 1, -1, dtype=np.int64)
            for lev, q in lookup.items():
                table[lev] = q
            pos[mask] = table[at["values"][mask]]
            return
        lo, hi, s = c["lo"], c["hi"], c["split"]
        mask = pos == ci
        v = at["values"]
        right_rows = mask & (v >= s)
        left_c = {"lo": lo, "hi": s}
        right_c = {"lo": s, "hi": hi}
        at["cut"][ci] = left_c
        at["cut"].append(right_c)
        pos[right_rows] = len(at["cut"]) - 1
        for q, cc in ((ci, left_c), (len(at["cut"]) - 1, right_c)):
            m = pos == q
            cc["split"] = self._split_point(v[m], y[m], cc["lo"], cc["hi"], eps_prime)

    # -- output ------------------------------------------------------------------------------------
    def _allocation(self, n):
        if n is None:
            return self.cell_counts_
        return largest_remainder(self.cell_counts_, self._check_int(n, "n", 1))

    def sample(self, n: int | None = None):
        """Records drawn uniformly inside the generalised cells.

        ``n=None`` replicates every cell by its noisy count (DiffGen's own output size);
        an integer n allocates n records to the cells in proportion to the noisy counts.
        Post-processing randomness (the source's generator).
        """
        if not hasattr(self, "cells_"):
            raise ParameterError("call fit before sample")
        reps = self._allocation(n)
        rows = np.repeat(np.arange(len(reps)), reps)
        g = self.source_.generator
        X = np.zeros((rows.size, self.domain_.p))
        for ai, (meta, cut) in enumerate(zip(self._attrs_meta, self.cut_)):
            concept = self.cells_[rows, ai]
            if meta["kind"] == "numeric":
                lo = np.array([c[0] for c in cut])[concept]
                hi = np.array([c[1] for c in cut])[concept]
                X[:, meta["col"]] = lo + g.random(rows.size) * (hi - lo)
            else:
                a, _ = meta["cols"]
                sizes = np.array([len(c) for c in cut])
                flat = np.concatenate([np.asarray(c) for c in cut])
                offs = np.concatenate([[0], np.cumsum(sizes)[:-1]])
                pick = offs[concept] + np.floor(g.random(rows.size) * sizes[concept]).astype(np.int64)
                X[np.arange(rows.size), a + flat[pick]] = 1.0
        return X, self.cell_labels_[rows]

    def generalized(self):
        """The released generalised cells: ``(labels of each attribute's concept per cell,
        class per cell, noisy count per cell)``; labels are "lo-hi" (encoded scale) or
        "{levels}" strings."""
        names = []
        for ai, (meta, cut) in enumerate(zip(self._attrs_meta, self.cut_)):
            if meta["kind"] == "numeric":
                lab = [f"[{c[0]:.4g},{c[1]:.4g})" for c in cut]
            else:
                lab = ["{" + ",".join(map(str, c)) + "}" for c in cut]
            names.append(np.asarray(lab, dtype=object)[self.cells_[:, ai]])
        table = np.column_stack(names) if names else np.zeros((len(self.cell_counts_), 0), dtype=object)
        return table, self.cell_labels_, self.cell_counts_

    def certificate_extra(self) -> dict:
        return {"score": self.score, "eps_prime": getattr(self, "eps_prime_", None),
                "n_specializations_done": len(getattr(self, "specializations_", [])),
                "n_released_cells": int(len(getattr(self, "cell_counts_", []))),
                "n_output_records_default": int(np.sum(getattr(self, "cell_counts_", 0)))}


def b_minus_a(at) -> int:
    a, b = at["cols"]
    return b - a


def _attributes(X, y, dom, trees, K) -> list[dict]:
    """One entry per attribute (numeric columns, then categorical blocks, in domain order), each
    with its root cut and every record assigned to it."""
    n = X.shape[0]
    # attributes: numeric columns then categorical blocks, in domain order
    attrs = []
    for j in dom.numeric:
        attrs.append({"kind": "numeric", "col": int(j), "values": X[:, j]})
    for (a, b), tree in zip(dom.blocks, trees):
        attrs.append({"kind": "categorical", "cols": (a, b), "values": np.argmax(X[:, a:b], axis=1),
                      "tree": tree})
    attrs.sort(key=lambda d: d["col"] if d["kind"] == "numeric" else d["cols"][0])
    # cut per attribute: list of concepts; assignment of each record to its concept position
    for at in attrs:
        at["assign"] = np.zeros(n, dtype=np.int64)
        if at["kind"] == "numeric":
            at["cut"] = [{"lo": 0.0, "hi": 1.0}]
        else:
            at["cut"] = [{"node": at["tree"]}]
            lev_counts = np.zeros((b_minus_a(at), K))
            np.add.at(lev_counts, (at["values"], y), 1)
            at["level_counts"] = lev_counts
    return attrs
