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
