"""The release on a Dask cluster of 2 worker processes equals the local one (one cluster per module).

Statistics agree up to floating-point summation order; the same seed gives the same release
(noise drawn on the client from merged statistics; per-part seeds for the records); a failing
partition or a lost worker leaves no partial output and no second ledger charge.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed", reason="dask[distributed] is an optional extra")

from privrelease.accounting.ledger import Ledger  # noqa: E402
from privrelease.engine import RecordMap, stream_stats  # noqa: E402
from privrelease.engine.passes import ChunkPasses, DaskPasses  # noqa: E402
from privrelease.errors import InputDataError  # noqa: E402
from privrelease.mechanisms.gauss_mixture.gauss_pca import GaussPCA  # noqa: E402
from privrelease.release import release_file  # noqa: E402
from privrelease.release.sources import FileSource, resolve_inputs  # noqa: E402
from privrelease.schema import Encoder  # noqa: E402


@pytest.fixture(scope="module")
def parts_dir(tmp_path_factory):
    """Four Parquet files of 150 rows (the small schema's columns)."""
    folder = tmp_path_factory.mktemp("parts")
    rng = np.random.default_rng(1)
    for k in range(4):
        pd.DataFrame({
            "age": rng.integers(0, 101, 150), "score": rng.random(150),
            "color": rng.choice(["red", "green", "blue"], 150), "label": rng.choice(["no", "yes"], 150),
        }).to_parquet(folder / f"part-{k}.parquet")
    return folder


def _maps(schema):
    return RecordMap(Encoder(schema, ["age", "score", "color"]), Encoder(schema, ["label"]),
                     preprocessing=(("row_norm_bound", 0.9),), n_classes=2)


def test_statistics_and_passes_equal_the_local_engine(dask_cluster, parts_dir, small_schema):
    from distributed import Client

    rmap = _maps(small_schema)
    source = FileSource(resolve_inputs(parts_dir), small_schema, 100)
    local = stream_stats(source.chunks(), rmap)
    with Client(dask_cluster.scheduler_address) as client:
        ex = DaskPasses(source.dask_partitions(), rmap, client=client)
        d = ex.map_frames(rmap.stats, type(local).merge)
        assert d.n == local.n == 600 and d.clip_counts == local.clip_counts
        assert np.allclose(d.s2, local.s2, rtol=1e-12) and np.allclose(d.classes[1].s1, local.classes[1].s1)
        # gauss-pca's three passes (centre, clipped moments, within-class) as maps on the workers
        remote = GaussPCA(epsilon=1.0, delta=1e-5, n_classes=2, n_components=2, rng=7).fit_executor(ex)
    chunks = [(c.X, c.y) for c in (rmap.encode(df) for df in source.chunks())]
    here = GaussPCA(epsilon=1.0, delta=1e-5, n_classes=2, n_components=2, rng=7).fit_executor(
        ChunkPasses(lambda: iter(chunks)))
    assert remote.passes_ == here.passes_ == 3 and len(ex.passes) == 3 and ex.passes[0][0] == 600
    for attr in ("centre_", "components_", "class_means_", "class_covariances_", "within_radius_"):
        assert np.allclose(getattr(remote, attr), getattr(here, attr), rtol=1e-9, atol=1e-12), attr


def test_default_mechanism_runs_its_passes_on_the_workers(dask_cluster, parts_dir, small_schema):
    """gauss-copula: the cell counts and the mixture's passes over the copula-transformed rows run as
    maps on the workers (indexed by each record's global position) and give the local fit's model;
    4 partitions there, chunks of 100 rows here. Without noise (epsilon = inf) the numeric columns
    get the copula, so the atoms' jitter enters the latent rows: a jitter keyed by the chunk, not the
    record, would give different moments."""
    from distributed import Client

    from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula

    rmap = _maps(small_schema)
    source = FileSource(resolve_inputs(parts_dir), small_schema, 100)
    enc = rmap.encoder
    kw = dict(epsilon=math.inf, delta=1e-5, n_classes=2, domain=enc.domain, **GaussCopula.schema_params(enc, None))
    with Client(dask_cluster.scheduler_address) as client:
        ex = DaskPasses(source.dask_partitions(), rmap, client=client)
        remote = GaussCopula(rng=7, **kw).fit_executor(ex)
    assert len(ex.frames) == 4 and ex.lengths == [150] * 4
    chunks = [(c.X, c.y) for c in (rmap.encode(df) for df in source.chunks())]
    assert len(chunks) == 8
    here = GaussCopula(rng=7, **kw).fit_passes(lambda: iter(chunks))
    assert remote.passes_ == here.passes_ == 2 and len(ex.passes) == 2  # the histograms, the model's candidates
    assert len(remote.cells_) == 2 and remote.cells_[0].grid  # age 0..100: an atom per value (tree leaves)
    for a, b in zip(remote.marginals_, here.marginals_):
        assert np.allclose(a, b, rtol=1e-12)
    assert remote.marginals_measured_ == here.marginals_measured_ and remote.model_.cliques == here.model_.cliques
    for a, b in zip(remote.model_.potentials, here.model_.potentials):
        assert np.allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("mechanism, out, kw", [
    ("gauss-copula", "released", dict(n_synthetic=500)),  # the default
    ("gauss-pca", "released", dict(n_synthetic=500, n_components=2)),  # synthetic, Parquet dataset
    ("gauss-pca", "released.csv", dict(n_synthetic=500, n_components=2)),  # single file, gathered in order
    ("laplace", "released", {}),  # row-aligned noise per input part (parts = files on both engines)
])
def test_same_seed_same_release_on_both_engines(dask_cluster, parts_dir, small_schema, tmp_path, mechanism, out,
                                                kw):
    certs, tables = {}, {}
    for engine in ("local", "dask"):
        target = tmp_path / engine / out
        extra = dict(scheduler=dask_cluster.scheduler_address) if engine == "dask" else {}
        certs[engine] = release_file(parts_dir, small_schema, target, mechanism, 1.0, rng=11, chunk_rows=150,
                                     engine=engine, **extra, **kw)
        tables[engine] = pd.read_csv(target) if out.endswith(".csv") else pd.read_parquet(target)
    a, b = tables["local"], tables["dask"]
    assert certs["local"].n_output_records == certs["dask"].n_output_records == len(a) == len(b)
    num = a.select_dtypes("number").columns
    assert np.allclose(a[num], b[num], rtol=1e-8, atol=1e-8)
    assert (a.drop(columns=num) == b.drop(columns=num)).all().all()
    if mechanism == "laplace":  # no statistics pass at all: bit-identical
        assert certs["local"].output_sha256 == certs["dask"].output_sha256
    if out == "released":
        assert sorted(p.name for p in (tmp_path / "dask" / out).iterdir())[0] == "part-00000.parquet"
    assert not [p for p in (tmp_path / "dask").iterdir() if p.name.startswith(".")]  # no temporary left


def test_the_default_on_a_cluster_sends_no_large_graph(dask_cluster, parts_dir, small_schema, tmp_path):
    """The trees travel as their public parameters and the fitted model is scattered to the workers once: no task
    graph reaches Dask's large-graph warning (10 MB), which a continuous column's tree of a million leaves (about
    50 MB pickled whole) did in every pass."""
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        release_file(parts_dir, small_schema, tmp_path / "released", "gauss-copula", 1.0, rng=3, chunk_rows=150,
                     engine="dask", scheduler=dask_cluster.scheduler_address, n_synthetic=500)
    assert not [str(w.message)[:60] for w in seen if "large graph" in str(w.message)]


def test_a_failing_partition_leaves_nothing_and_charges_nothing(dask_cluster, parts_dir, small_schema, tmp_path):
    """A map that raises on one partition (a value out of the schema's bounds with 'error') fails the
    release: no output directory, no temporary, the ledger's reservation cancelled."""
    bad = tmp_path / "in"
    bad.mkdir()
    for p in sorted(parts_dir.iterdir()):
        (bad / p.name).write_bytes(p.read_bytes())
    df = pd.read_parquet(bad / "part-2.parquet")
    df.loc[5, "age"] = 400
    df.to_parquet(bad / "part-2.parquet")
    led = Ledger(tmp_path / "ledger.db")
    with pytest.raises(InputDataError, match="age"):
        release_file(bad, small_schema, tmp_path / "out", "gauss-pca", 1.0, rng=0, n_synthetic=100,
                     on_out_of_bounds="error", engine="dask", scheduler=dask_cluster.scheduler_address,
                     ledger=led, dataset_id="d", budget=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "ledger.db"]
    assert led.spent("d").epsilon == 0


def test_a_worker_lost_mid_release_gives_one_output_and_one_charge(dask_cluster, parts_dir, small_schema,
                                                                     tmp_path, monkeypatch):
    """The first partition task kills its worker process; the scheduler recomputes it elsewhere and the
    release completes with the output of an undisturbed run and exactly one committed charge."""
    import cloudpickle

    from privrelease.release import pipeline
    import dask_faults

    cloudpickle.register_pickle_by_value(dask_faults)
    marker = tmp_path / "killed"
    real = pipeline.construct

    def killing(*a, **k):
        plan = real(*a, **k)
        fields = {f.name: getattr(plan.record_map, f.name) for f in dataclasses.fields(plan.record_map)}
        return dataclasses.replace(plan, record_map=dask_faults.KillOnceMap(**fields, marker=str(marker)))

    led = Ledger(tmp_path / "ledger.db")
    kw = dict(n_synthetic=300, n_components=2, rng=5, engine="dask", scheduler=dask_cluster.scheduler_address)
    undisturbed = release_file(parts_dir, small_schema, tmp_path / "ref", "gauss-pca", 1.0, **kw)
    monkeypatch.setattr(pipeline, "construct", killing)
    cert = release_file(parts_dir, small_schema, tmp_path / "out", "gauss-pca", 1.0, ledger=led, dataset_id="d",
                        budget=5, **kw)
    assert marker.exists()  # a worker did die
    assert cert.output_sha256 == undisturbed.output_sha256
    entries = led.history("d")
    assert len(entries) == 1 and entries[0]["status"] == "committed" and led.spent("d").epsilon == 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["killed", "ledger.db", "out", "ref"]


def test_cli_releases_a_glob_on_a_named_cluster(dask_cluster, parts_dir, small_schema, tmp_path, capsys):
    """The same command line (the default mechanism) with --engine dask --scheduler ADDRESS releases a glob
    of files into a dataset, equal to the local release."""
    import yaml

    from cli_helpers import run_cli

    schema = tmp_path / "s.yaml"
    schema.write_text(yaml.safe_dump(small_schema.to_dict()))
    common = ["release", str(parts_dir / "part-*.parquet"), "--schema", str(schema), "-e", "1", "--seed", "3",
              "--n-synthetic", "200"]
    code, _, err = run_cli([*common, "--out", str(tmp_path / "here")], capsys)
    assert code == 0, err
    code, _, err = run_cli([*common, "--out", str(tmp_path / "there"), "--engine", "dask", "--scheduler",
                            dask_cluster.scheduler_address], capsys)
    assert code == 0, err
    a, b = pd.read_parquet(tmp_path / "here"), pd.read_parquet(tmp_path / "there")
    assert len(a) == len(b) == 200 and np.allclose(a["score"], b["score"], atol=1e-8)
    assert (a["color"] == b["color"]).all() and (a["label"] == b["label"]).all()


@pytest.mark.parametrize("extra, needle", [
    (["--workers", "2"], "need --engine dask"),
    (["--engine", "dask", "--workers", "0"], "workers must be an integer"),  # in Python: the argument's name
    (["--engine", "dask", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "either --scheduler"),
])
def test_cluster_options_are_checked_before_anything_starts(parts_dir, small_schema, tmp_path, extra, needle):
    from privrelease.errors import ParameterError

    kw = {"--workers": "workers", "--scheduler": "scheduler", "--engine": "engine"}
    args = {kw[k]: (int(v) if k == "--workers" else v) for k, v in zip(extra[::2], extra[1::2])}
    with pytest.raises(ParameterError, match=needle):
        release_file(parts_dir, small_schema, tmp_path / "o", "gauss-pca", 1.0, rng=0, **args)
    assert not list(tmp_path.iterdir())


def test_inputs_that_match_nothing_or_mix_formats_are_refused(parts_dir, tmp_path):
    (tmp_path / "a.csv").write_text("age\n1\n")
    (tmp_path / "b.parquet").write_bytes((parts_dir / "part-0.parquet").read_bytes())
    with pytest.raises(InputDataError, match="mixes formats"):
        resolve_inputs(tmp_path)
    with pytest.raises(InputDataError, match="no input file matches"):
        resolve_inputs(tmp_path / "nothing-*.parquet")
    assert resolve_inputs(tmp_path / "*.parquet") == [tmp_path / "b.parquet"]


def test_workers_option_starts_and_stops_a_local_cluster(parts_dir, small_schema, tmp_path):
    """``workers=N`` (--workers N) runs the release on a LocalCluster of its own, closed afterwards."""
    import distributed

    cert = release_file(parts_dir, small_schema, tmp_path / "o.parquet", "gauss-pca", 1.0, rng=1, n_synthetic=50,
                        n_components=2, engine="dask", workers=1)
    assert cert.n_input_records == 600 and len(pd.read_parquet(tmp_path / "o.parquet")) == 50
    with pytest.raises(ValueError):
        distributed.get_client()  # no client left behind


def test_an_unreachable_scheduler_is_refused_with_one_line_and_no_charge(parts_dir, small_schema, tmp_path, capsys,
                                                                         monkeypatch):
    """A --scheduler address where no scheduler listens: exit 2 with one line naming the address, after
    the connection timeout (shortened here), nothing written and nothing charged to the ledger."""
    import yaml

    from cli_helpers import run_cli
    from privrelease.release import sources

    monkeypatch.setattr(sources, "SCHEDULER_TIMEOUT", "1s")
    schema = tmp_path / "s.yaml"
    schema.write_text(yaml.safe_dump(small_schema.to_dict()))
    code, _, err = run_cli(["release", str(parts_dir), "--schema", str(schema), "-e", "1", "--out",
                            str(tmp_path / "out"), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9",
                            "--ledger", str(tmp_path / "ledger.db"), "--dataset-id", "d", "--budget", "5"], capsys)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "tcp://127.0.0.1:9" in errors[0], err
    assert not (tmp_path / "out").exists()
    assert Ledger(tmp_path / "ledger.db").spent("d").epsilon == 0


def _environ(names):
    import os

    return {k: os.environ.get(k) for k in names}


def test_a_cluster_started_for_the_release_reuses_allocations_like_a_local_process(monkeypatch):
    """The workers of a ``--workers N`` cluster start with glibc's mmap and trim thresholds at 32 MiB
    (Dask's default trim threshold pins the mmap threshold at 128 KiB, which made allocation-heavy
    maps 2-2.5x slower on a worker than locally); Dask's other worker variables are kept. As in
    Dask, a variable already in the environment wins (Dask's workers leave theirs in the
    environment of the process that started them: cleared here as in a fresh CLI process)."""
    from privrelease.release.sources import WORKER_MALLOC_ENV, dask_client

    for name in WORKER_MALLOC_ENV:
        monkeypatch.delenv(name, raising=False)
    with dask_client(None, 1) as client:
        (env,) = client.run(_environ, [*WORKER_MALLOC_ENV, "OMP_NUM_THREADS"]).values()
    assert env == {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "33554432", "OMP_NUM_THREADS": "1"}
