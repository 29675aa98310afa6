import numpy as np
import pandas as pd
import pytest

from privrelease.engine import RecordMap, SufficientStats, stream_stats
from privrelease.io import iter_table_chunks, write_table
from privrelease.linalg import generalized_eigh, mirror, psd_repair, sorted_eigh, upper
from privrelease.schema import Encoder


def test_upper_mirror_roundtrip():
    A = np.random.default_rng(0).random((5, 5))
    A = A + A.T
    assert np.array_equal(mirror(upper(A), 5), A)


def test_sorted_eigh_matches_numpy_and_signs():
    rng = np.random.default_rng(1)
    B = rng.random((6, 6))
    A = B @ B.T
    w, V = sorted_eigh(A)
    assert np.all(np.diff(w) <= 0)
    assert np.allclose(V @ np.diag(w) @ V.T, A)
    idx = np.argmax(np.abs(V), axis=0)
    assert np.all(V[idx, range(6)] > 0)


def test_generalized_eigh_solves_pencil():
    rng = np.random.default_rng(2)
    A = rng.random((4, 4)); A = A + A.T
    B = rng.random((4, 4)); B = B @ B.T + np.eye(4)
    w, V = generalized_eigh(A, B)
    assert np.allclose(A @ V, B @ V * w)


def test_psd_repair_is_symmetric_psd():
    S = np.array([[1.0, 3.0, 0.0], [3.0, 1.0, 0.0], [0.0, 0.0, -2.0]])
    R = psd_repair(S)
    assert np.array_equal(R, R.T)
    assert np.linalg.eigvalsh(R).min() > 0


def test_stats_merge_equals_whole():
    rng = np.random.default_rng(3)
    X = rng.random((1000, 4)); y = rng.integers(0, 3, 1000)
    whole = SufficientStats.from_matrix(X, y, 3)
    a = SufficientStats.from_matrix(X[:400], y[:400], 3)
    b = SufficientStats.from_matrix(X[400:], y[400:], 3)
    m = a + b
    assert m.n == 1000 and np.allclose(m.s1, whole.s1) and np.allclose(m.s2, whole.s2)
    for c in range(3):
        assert m.classes[c].n == whole.classes[c].n
        assert np.allclose(m.classes[c].s2, whole.classes[c].s2)
    assert np.allclose(whole.s2, X.T @ X)


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_streamed_stats_equal_in_memory(tmp_path, small_schema, small_df, ext):
    path = tmp_path / f"d.{ext}"
    write_table(small_df, path)
    enc = Encoder(small_schema)
    X = enc.encode(small_df).X
    st = stream_stats(iter_table_chunks(path, small_schema, chunk_rows=37), RecordMap(enc))
    assert st.n == len(small_df)
    assert np.allclose(st.s1, X.sum(0)) and np.allclose(st.s2, X.T @ X)
