"""A release runs its linear algebra with one BLAS thread, and gives the previous setting back."""

from threadpoolctl import threadpool_info

from privrelease import release
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula


def _blas_threads():
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_release_fits_and_samples_single_threaded_and_restores(monkeypatch, small_schema, small_df):
    seen = []
    fit, sample = GaussCopula.fit, GaussCopula.sample

    def spy_fit(self, *a, **k):
        seen.append(("fit", _blas_threads()))
        return fit(self, *a, **k)

    def spy_sample(self, *a, **k):
        seen.append(("sample", _blas_threads()))
        return sample(self, *a, **k)

    monkeypatch.setattr(GaussCopula, "fit", spy_fit)
    monkeypatch.setattr(GaussCopula, "sample", spy_sample)
    before = _blas_threads()
    release(small_df, small_schema, "gauss-copula", 1.0, rng=0)
    assert [s for s, _ in seen] == ["fit", "sample"]
    assert all(t <= {1} for _, t in seen)
    assert _blas_threads() == before
