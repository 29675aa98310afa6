import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is an optional extra")

from privrelease.engine import RecordMap, SufficientStats
from privrelease.engine.distributed import dask_stats
from privrelease.mechanisms import JiangPCA
from privrelease.schema import Encoder


def test_dask_stats_equal_in_memory(small_schema, small_df):
    enc = Encoder(small_schema)
    X = enc.encode(small_df).X
    y = Encoder(small_schema, ["label"]).encode(small_df).X.argmax(1)
    ddf = dd.from_pandas(small_df, npartitions=5)
    st = dask_stats(ddf, RecordMap(enc, Encoder(small_schema, ["label"]), n_classes=2), scheduler="synchronous")
    ref = SufficientStats.from_matrix(X, y, 2)
    assert st.n == ref.n and np.allclose(st.s2, ref.s2) and np.allclose(st.classes[1].s1, ref.classes[1].s1)
    # a moment-based mechanism fitted on either gives the same release for the same seed
    a = JiangPCA(epsilon=1.0, n_components=2, rng=0, domain=enc.domain).fit_stats(st)
    b = JiangPCA(epsilon=1.0, n_components=2, rng=0, domain=enc.domain).fit_stats(ref)
    assert np.allclose(a.components_, b.components_)


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_release_file_dask_engine_matches_local(tmp_path, small_schema, small_df, ext):
    import pandas as pd

    from privrelease import release_file
    from privrelease.io import write_table

    inp = tmp_path / f"in.{ext}"
    write_table(small_df, inp)
    outs = {}
    for engine in ("local", "dask"):
        out = tmp_path / f"out-{engine}.csv"
        release_file(inp, small_schema, out, "jiang-pca", 1.0, rng=5, n_components=3, engine=engine)
        outs[engine] = pd.read_csv(out)
    pd.testing.assert_frame_equal(outs["local"], outs["dask"])


def test_dask_engine_refuses_a_mechanism_that_fits_on_records(tmp_path, small_schema, small_df):
    """A mechanism whose declared passes need the records in memory is refused on the dask engine
    (it used to run on the client silently, whatever the engine)."""
    from privrelease import release_file
    from privrelease.errors import ParameterError
    from privrelease.io import write_table

    inp = tmp_path / "in.csv"
    write_table(small_df, inp)
    with pytest.raises(ParameterError, match="--engine local"):
        release_file(inp, small_schema, tmp_path / "o.csv", "jiang-lda", 1.0, rng=0, engine="dask")
    assert not (tmp_path / "o.csv").exists()


def test_dask_and_local_maps_give_the_same_statistics_and_clip_counts(small_schema, small_df):
    """Both engines run RecordMap.stats: same sums after the same preprocessing, and the clip counts are
    gathered from the partitions too (the Dask path used to drop them)."""
    from privrelease.engine import stream_stats

    df = small_df.copy()
    df.loc[[3, 50, 120], "age"] = 140  # clipped to the upper bound, counted
    rmap = RecordMap(Encoder(small_schema, ["age", "score", "color"]), Encoder(small_schema, ["label"]),
                     preprocessing=(("row_norm_bound", 0.8),), n_classes=2)
    d = dask_stats(dd.from_pandas(df, npartitions=4), rmap, scheduler="synchronous")
    local = stream_stats((df.iloc[i:i + 50] for i in range(0, len(df), 50)), rmap)
    assert d.n == local.n == 200 and d.clip_counts == local.clip_counts == {"age": 3}
    assert np.allclose(d.s2, local.s2) and np.allclose(d.classes[1].s1, local.classes[1].s1)
    assert d.preprocessing == local.preprocessing == (("row_norm_bound", 0.8),)
    assert np.all(np.linalg.norm(Encoder(small_schema, ["age", "score", "color"]).encode(df).X, axis=1) > 0.8)


def _write_row_groups(path, df, sizes):
    """``df`` as a Parquet file with row groups of ``sizes`` records (0: a row group without records)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    with pq.ParquetWriter(path, table.schema) as w:
        start = 0
        for m in sizes:
            w.write_table(table.slice(start, m), row_group_size=max(m, 1))
            start += m
    assert [pq.ParquetFile(path).metadata.row_group(i).num_rows for i in range(len(sizes))] == list(sizes)


def _positions(X, y, offset):
    """An indexed pass's value: where each record of the chunk sits, with its encoded row."""
    return [(offset, X.copy())]


@pytest.mark.parametrize("target", [1, 1500, 10**9])  # a partition per row group, runs of them, whole files
def test_parquet_partitions_follow_row_groups_in_file_order(tmp_path, monkeypatch, small_schema, small_df, target):
    """Dask partitions of Parquet input are runs of row groups read by pyarrow: with several row groups
    per file, a row group without records and a file without records, the partitions keep the files'
    sorted order and the row order within them, so an indexed pass gives every record the same global
    index as the local engine does, and gauss-copula's passes give the local fit's model."""
    import math

    from privrelease.engine.passes import ChunkPasses, DaskPasses
    from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
    from privrelease.release import sources
    from privrelease.release.sources import FileSource, resolve_inputs

    _write_row_groups(tmp_path / "part-0.parquet", small_df.iloc[:90], [40, 0, 30, 20])
    _write_row_groups(tmp_path / "part-1.parquet", small_df.iloc[:0], [0])
    _write_row_groups(tmp_path / "part-2.parquet", small_df.iloc[90:], [70, 40])
    monkeypatch.setattr(sources, "_PARTITION_BYTES", target)
    rmap = RecordMap(Encoder(small_schema, ["age", "score", "color"]), Encoder(small_schema, ["label"]),
                     n_classes=2)
    source = FileSource(resolve_inputs(tmp_path), small_schema, 50)
    frames = source.dask_partitions()
    assert len(frames) == {1: 5, 1500: 4, 10**9: 2}[target]
    ex = DaskPasses(frames, rmap, scheduler="synchronous")
    local = ChunkPasses(lambda: ((c.X, c.y) for c in (rmap.encode(df) for df in source.chunks())))

    expected = rmap.encode(small_df).X

    def placed(passes):
        out = np.full(expected.shape, np.nan)
        for offset, X in passes.run(_positions, indexed=True):
            out[offset:offset + len(X)] = X
        return out

    here, there = placed(local), placed(ex)
    assert not np.isnan(there).any() and np.array_equal(there, here)
    assert np.array_equal(there, expected)
    kw = dict(epsilon=math.inf, delta=1e-5, n_classes=2, n_components=2, domain=rmap.encoder.domain,
              dependence="mixture", **GaussCopula.schema_params(rmap.encoder, None))
    remote = GaussCopula(rng=3, **kw).fit_executor(ex)
    mine = GaussCopula(rng=3, **kw).fit_executor(local)
    for attr in ("centre_", "components_", "class_means_", "class_covariances_"):
        assert np.allclose(getattr(remote.mixture_, attr), getattr(mine.mixture_, attr), rtol=1e-9, atol=1e-12), attr
    del kw["n_components"], kw["dependence"]  # the default's graphical model on the same partitions
    remote, mine = GaussCopula(rng=3, **kw).fit_executor(ex), GaussCopula(rng=3, **kw).fit_executor(local)
    assert remote.marginals_measured_ == mine.marginals_measured_
    for a, b in zip(remote.model_.potentials, mine.model_.potentials):
        assert np.allclose(a, b, rtol=1e-9, atol=1e-9)


class _HeavyMap:
    """A map that carries ~1 MB of fitted state (as a fitted copula transform carries its marginals)."""

    def __init__(self):
        self.table = np.arange(125_000, dtype=np.float64)

    def __call__(self, X, y):
        return float(X.sum())


def test_a_pass_ships_its_map_once_not_once_per_partition(small_schema, small_df):
    """Each partition's task refers to the map (and the record map) as a shared graph node, so what the
    scheduler sends grows by a few hundred bytes per partition, not by the map's size: the map used to
    be embedded in every partition's task (32 partitions: ~32 MB for a 1 MB map)."""
    import cloudpickle
    import dask

    from privrelease.engine.passes import DaskPasses

    sizes = []

    def recording_get(dsk, keys, **kw):
        graph = dsk.__dask_graph__() if hasattr(dsk, "__dask_graph__") else dsk
        sizes.append(sum(len(cloudpickle.dumps(task)) for task in dict(graph).values()))
        return dask.get(dsk, keys, **kw)

    rmap = RecordMap(Encoder(small_schema, ["age", "score", "color"]), None)
    frames = dd.from_pandas(small_df, npartitions=32).to_delayed()
    assert len(frames) == 32
    value = DaskPasses(frames, rmap, scheduler=recording_get).run(_HeavyMap())
    assert value == pytest.approx(rmap.encode(small_df).X.sum())
    assert 1_000_000 < sizes[0] < 2_000_000
