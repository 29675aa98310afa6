"""The tuning constants of gauss-copula, the default release, in one place.

Every number here was chosen on the tuning tables (census_income_kdd, its Adult-shaped cut
census_small, gas_drift, musk2, or generated tables; never on Adult or Diabetes 130-US), with the
measurements in ``docs/history/``. Values that must agree are derived from one another: the numeric
columns' coarse nodes (:data:`NODE_CELLS`) are the same in the mixture's node blocks and in a two-level
tree's coarser level. The code reads them from this module at call
time (``copula_defaults.NAME``), so that a benchmark or a test may change one for a run.

None of them is a privacy parameter: sensitivities live with the measurements they bound
(:mod:`.copula_measure`), and every share here is of a budget calibrated elsewhere.
"""

from __future__ import annotations

# ---- the budget's shares -------------------------------------------------------------------------
#: Share of the total zCDP rho spent on the one-way histograms with the mixture (chosen on census_income_kdd,
#: gas_drift, musk2).
DEFAULT_MARGINAL_SHARE = 0.55
#: ... and on a table whose one-way histograms the noise dominates anyway (``auto_marginal_share``).
NOISY_MARGINAL_SHARE = 0.3
#: Expected 1-way TVD from the noise alone above which a table counts as such (release.advice's threshold).
NOISY_TVD = 0.1
#: Cells of a numeric column in that estimate (the 1-way TVD's bins).
NOISY_NUMERIC_CELLS = 20
#: Part of the graphical model's rho spent on the selections (the rest on the measurements), as in AIM.
SELECT_FRACTION = 0.1

# ---- the one-way histograms and the numeric trees -------------------------------------------------
#: ``by_label="auto"``: per class when n / C records would fill 8 cells of this many noise stds each.
CELL_SIGMAS = 8.0
#: ... and, with the graphical model, only for a label of at most this many classes: each class's histograms carry
#: their own noise (a column's one-way counts summed over C classes carry sqrt(C) times one histogram's), the rarer
#: classes' histograms are mostly noise, and the model's rounds measure the label's pairs anyway. Relabelled tuning
#: tables (3 seeds each, per class -> one group; 2-way / 3-way TVD): the census cut with race as the label (5 classes)
#: 0.0144 -> 0.0119 / 0.0296 -> 0.0243, marital status (7) 0.0138 -> 0.0135 / 0.0310 -> 0.0297, class of worker (9)
#: 0.0149 -> 0.0137 / 0.0345 -> 0.0327; with 2 or 3 classes neither wins everywhere (census_income_kdd's income 3-way
#: 0.0501 -> 0.0541, veterans' benefits (3) 0.0487 -> 0.0524; self-employment (3) 0.0564 -> 0.0538; the 101 columns
#: 2-way 0.0863 -> 0.0926), so they stay per class. The mixture keeps its classes (it maps each record through its
#: class's marginals).
MODEL_MAX_CLASSES = 3
#: A label's class whose DP size (the histograms' row sums averaged) is below this many stds of its noise gets no
#: records: an empty class reaches it by noise alone, and its per-class histograms are noise (the draft's ``(other)``
#: level of a label). No class of the tuning tables comes near it.
CLASS_SIZE_SIGMAS = 2.0
#: Below this many split thresholds per group (n / G < SMALL_TABLE_SPLITS * split * sigma) a split could
#: hardly happen: the numeric trees are released at their coarsest level only (and the release says so).
SMALL_TABLE_SPLITS = 2.0
#: Children per internal node (chosen on census_kdd and generated heavy-tailed / 0.1-step tables).
DEFAULT_BRANCHING = 16
#: A node is split (its children measured) when its estimate is at least this many noise stds.
DEFAULT_SPLIT_SIGMAS = 3.0
#: Leaves of all numeric columns and classes together held by the counting pass (memory flat in n).
TOTAL_LEAVES = 2 ** 22
#: Leaves of one column: at most this many, and at least MIN_LEAVES whatever the number of columns.
MAX_LEAVES = 2 ** 20
MIN_LEAVES = 2 ** 10

# ---- the numeric columns' coarse nodes -----------------------------------------------------------
#: Value nodes of a numeric column where it meets the other columns: the finest tree grid with at most
#: this many. 12 admits a 16-ary level's nodes halved (ages 0-90 in 8-year nodes); on the measured levels
#: alone it picks what 10 did on every table measured.
NODE_CELLS = 12
#: Nodes of a numeric column's one-hot block in the mixture (``coarse_cells``; 0: none).
COARSE_CELLS = NODE_CELLS
#: A tree's coarsest level gets at most this many nodes, its branching lowered as far as that needs and its depth
#: kept (public geometry: the histograms, the budget and every noise scale unchanged). Ages 0-90 in 12 nodes of 8
#: years rather than 6 of 16 (two levels: chosen on census_small and census_kdd, docs/history/mixed-pairs.md,
#: "Finer coarse levels"); a deeper tree's coarsest level had been left at the branching's few nodes (a step of
#: 0.001 over [0, 1]: 4 nodes; capital gains 0-99,999: 2), whose children then carried the column's shape at the
#: noise of many more cells. Every tree (3 seeds each, against the two-level rule alone): census_kdd 2-way TVD
#: 0.0457 -> 0.0432, 3-way 0.0544 -> 0.0526, 1-way 0.0162 -> 0.0149, LR AUC 0.879 -> 0.900, dividends' mean x2.5-4.2
#: -> x0.82-1.07; the census cut 0.0130 -> 0.0126; the generated 101-column table 0.0964 -> 0.0929 (1-way 0.0195 ->
#: 0.0184); the loans table 0.0262 -> 0.023; the generated city 0.0241 -> 0.0260 (a lon of 12 nodes where it had 5
#: moves the rounds off (neighbourhood, age)). With the old model (the mixture and the pair tree) this had cost
#: census_kdd's LR AUC 0.809 -> 0.783 and leaked each class's noise into the empty tail nodes, before the tails'
#: threshold and the structural zeros. None: the branching alone.
TOP_NODES = NODE_CELLS
#: Node groupings (:attr:`~.copula_tree.NumericTree.grids`) for node blocks: besides the measured levels,
#: every node of a measured level above the leaves cut into this many parts of equally many children (when
#: it divides the branching; 1: none). Public geometry, nothing more is measured. Trees are built with
#: GRID_PARTS; the graphical model chooses its own (:func:`~.model_plan.model_grid`).
GRID_PARTS = 1
#: Normal scores are clipped to [-L, L] and scaled to [0, 1] for the mixture. At L = 2 (4.6 % of
#: scores clipped) a numeric coordinate has about 1.8 times the spread it has at L = 4, so the
#: mixture's noise (the same on every coordinate) hides less of the numeric columns' dependence:
#: chosen on census_income_kdd, gas_drift and musk2 (docs/history/latent-scale.md).
LATENT_BOUND = 2.0

# ---- the graphical model -------------------------------------------------------------------------
#: Share of the total zCDP rho spent on the model's rounds (selections and measurements); the one-way
#: histograms get the rest.
MODEL_SHARE = 0.6
#: A numeric column's cells in the model are cut from its released masses (:func:`~.model_plan.mass_cuts`), as many
#: as its public grid's nodes, each an equal share of a blend of released mass and public width, this much width to
#: one of mass. Chosen with edges anywhere (3 seeds, 2-way TVD; the grid's equal-width nodes -> weight 0, 0.5, 1, 2):
#: the census cut 0.0137 -> 0.0136, 0.0130, 0.0131, 0.0142; census_income_kdd 0.0466 -> 0.0480, 0.0463, 0.0471,
#: 0.0484 (+-0.0028); the generated loans table 0.032 -> (not run), 0.0264, 0.0278, 0.0262. By mass alone a heavy
#: tail's cells crowd below the first of the evaluation's equal-width bins; 16 cells for every column in place of the
#: grid's 7 to 13 cost the census cut 0.0137 -> 0.0146 (more noise in every candidate holding them). The edges were
#: then kept to the nodes whose masses were released (:func:`~.model_plan.measured_edges`), with the tails-only
#: threshold below: the census cut 0.0131 (6 seeds), census_income_kdd 0.0468 (6 seeds), loans 0.0270 (3-way 0.044
#: -> 0.0375), the census cut's first 4,000 records 0.0571 -> 0.0543 (6 seeds).
CUT_WIDTH_WEIGHT = 0.5
#: The selection's estimate of the error the fitted model keeps of a measurement (:func:`~.copula_measure.kept_error`):
#: each noisy count shifted down by FIT_SHIFT_STDS noise stds and kept non-negative, the error of a cell at most
#: FIT_CELL_STDS stds. Calibrated on the fit itself, not on a TVD: the final model's L1 error on each marginal it
#: measured (2 seeds each), per empty cell 0.13, 0.16 and 0.19 stds on census_income_kdd, the generated city and the
#: generated loans table, per cell holding records 0.51, 0.64 and 0.67, where the counts kept non-negative alone
#: would keep 0.40 and up to 0.80 (the fit holds each measured marginal to the released one-way counts, which
#: pulls a mostly empty row's noise back toward zero). A shift of 0.6 leaves 0.17 at an empty cell. The score's
#: sensitivity follows from the shift (``copula_plan.SCORE_SENSITIVITY``), both read once at import.
FIT_SHIFT_STDS = 0.6
FIT_CELL_STDS = 0.6
#: Candidate marginals with more cells than this are not considered (public: from the schema).
MAX_PAIR_CELLS = 4096
#: Value nodes of a numeric column in the model at most (its tree's grid with the most nodes up to this:
#: :func:`~.model_plan.model_grid`).
MODEL_NODE_CELLS = 16
#: Rounds of the model's selection (each measures one candidate marginal: a pair, or a pair with the label):
#: at least this many per attribute (the label one of them) ...
MODEL_ROUNDS_PER_ATTRIBUTE = 1.0
#: ... and more while the typical candidate's expected noise stays within this share of the table
#: (:func:`~.model_plan.plan_rounds`), up to MAX_ROUNDS_PER_ATTRIBUTE per attribute. Each round's noise grows as the
#: square root of the rounds: a table whose candidates are small for its n (the census cut: 11 attributes, median
#: 93 cells, 30,000 records) affords about 30 rounds within 0.06, and gains (2-way TVD 0.0148 -> 0.0135, 6 seeds);
#: one with large candidates (the generated loans table: median 160 cells, 25,000 records; census_income_kdd: 90
#: cells, 20,000 records) stays at one per attribute, where 30 rounds cost the loans table (0.0323 -> 0.034).
#: The typical candidate is now the geometric mean of the candidates' cells (the median jumps between their size
#: classes: one more attribute took nycflights13's flights from 13 rounds to 9, 2-way TVD 0.052 -> 0.061); the
#: rounds are the same on every table above, Adult, Diabetes 130-US and the generated ones (their releases too).
ROUND_NOISE_TVD = 0.06
MAX_ROUNDS_PER_ATTRIBUTE = 2.0
#: The model's size bound: total cells of its junction tree's cliques, the cliques a refit carries included (a
#: candidate that would pass it is not offered). Every refit and the final fit cost in proportion to it; with
#: the model refitted after every round, census_income_kdd's seeds 0-2 at 2 ** 18 took 10-16 s of CPU. At 2 ** 17
#: (3 seeds each) census_income_kdd, the census cut and the loans table are unchanged to the fourth decimal, and
#: where the bound binds the belief propagation costs half: the generated 100-column table 22.8 -> 17.5 s (2-way
#: TVD 0.1096 both), Diabetes 130-US (measured after) about 10 -> 7.5 s (0.0141 -> 0.0143, within its spread).
MAX_MODEL_CELLS = 2 ** 17
#: Cells of all candidates together, counted in one pass: triples with the label are left out beyond this.
MAX_CANDIDATE_TOTAL = 2 ** 23
#: A table with at least this many numeric columns, more than its categorical ones, keeps the mixture as its
#: dependence model ("auto"). A generated table of 60 numeric and 20 categorical columns (bench_memory.py's
#: factor generator, 100,000 records): the mixture's 2-way TVD 0.0909 (+-0.0004, 24 s CPU), the graphical
#: model's 0.1017 (1 seed, 43 s).
WIDE_NUMERIC = 50
#: Noisy coarsest cells of a numeric tree below this many noise stds are set to 0 with the model (threshold
#: "auto") in its tails, before the first cell at or above it and after the last: the loans table's tails (fees p99
#: x1.34 -> x1.11, 2-way TVD 0.038 -> 0.036). A cell between two counted ones keeps its noisy count: zeroed, a thin
#: run (132 records of a 4,000-record table) was lost to every later estimate, and with the cells cut from released
#: masses it was merged into a neighbour and lost for good; the census cut's first 4,000 records, 6 seeds, 2-way TVD
#: 0.0571 -> 0.0532 on the grid, 0.0584 -> 0.0543 with the cuts; the full cut and census_income_kdd unchanged within
#: their spread. On categorical histograms the threshold lost census_income_kdd's small levels (1-way TVD 0.017 ->
#: 0.021), so it stays off there. A cell apart from the counted range passes this threshold's false-positive rate once
#: for all the cells beyond the range (:func:`~.copula_estimate.kept_cells`), not once for itself.
MODEL_NUMERIC_THRESHOLD = 2.0
#: A public bound's node (a value of its own below the coarsest level) holds records only where its noisy count,
#: summed over the groups, reaches this many stds of that sum: the tails' floor above, since the bound is the
#: outermost value of a tail. On the tuning tables no bound's node is near it (the releases are unchanged).
BOUND_SIGMAS = MODEL_NUMERIC_THRESHOLD
#: A categorical column's levels whose released count (summed over the groups) is below this many noise stds of
#: that sum are merged into one cell of the model (MST's domain compression, from released counts); the sampler
#: draws a merged cell's level uniformly (MST's expansion). census_income_kdd, 3 seeds: 2-way TVD 0.0557 (none)
#: -> 0.0513 (+-0.001), 3-way 0.0663 -> 0.0617; 0.3 to 0.6 alike, 0.1 0.0528, 1 0.0558, MST's 3 0.0576 (a
#: 52-level code kept 13 cells and lost its rarer levels' pairs); the loans table and Adult unchanged.
MERGE_STDS = 0.5
#: The model is refitted after every round while the rounds are at most this many (census_income_kdd, 41
#: rounds, 6 seeds: ten refits 2-way TVD 0.0486, one after every round 0.0466); a table with more rounds gets
#: WIDE_REFITS refits, as before. On the generated table of 100 columns (``bench_memory.py``, 50,000 records)
#: a refit every second round took 127 s of CPU (2-way TVD on 30 of its columns 0.1012), ten refits 23 s
#: (0.1168): refitted often, its measured pairs overlap and the junction tree's cliques multiply.
EVERY_ROUND_REFITS = 50
WIDE_REFITS = 10
#: Mirror-descent iterations of each refit during the rounds (warm-started): the refits share REFIT_ITERS, at
#: most ROUND_ITERS each, and the final model gets FINAL_ITERS. The generated loans table (about ten rounds,
#: 20 a refit), 3 seeds: 2-way TVD 0.0334 (5 a refit: 0.0384); census_income_kdd (41 rounds, 4 a refit),
#: 6 seeds: 0.0467 +- 0.0014 (3: 0.0471 +- 0.0022, 5: 0.0466, 7: 0.0469; 30 a refit took 20-160 s of CPU);
#: its final model at 60 iterations 0.0480, at 150 0.0466.
REFIT_ITERS = 200
ROUND_ITERS = 30
FINAL_ITERS = 150
#: Records drawn from the current model to score the candidates when their marginals are not exact: at most
#: this many, and at most SCORE_WORK / (number of candidates) (census_income_kdd's 1,600 candidates: all of
#: its 20,000; a generated table of 100 columns' 10,000 candidates: 10,000 records, its 2-way TVD 0.0993 against
#: 0.1089 with 3,355).
SCORE_RECORDS = 50_000
SCORE_WORK = 10 ** 8
