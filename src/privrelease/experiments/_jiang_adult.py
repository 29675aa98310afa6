"""Shared pieces of the Jiang et al. 2013 Adult reproductions (Figures 2-4).

Data: the bundled Adult example (complete records; train 30,162 = the 2/3 released,
test 15,060 = the 1/3 held out, as in sec. 4.4), preprocessed as in sec. 4.1: fnlwgt,
education, occupation and native-country dropped, numeric attributes scaled to [0, 1]
with public bounds, categorical attributes one-hot: 35 encoded columns (33 features +
the 2 income columns). DiffGen uses the same columns with the bundled taxonomy trees.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pandas as pd

from ..datasets import data_path, load_example
from ..schema import Encoder, Schema

EPSILONS = [0.1, 0.25, 0.5, 1.0, 1.25, 1.5]
LDA_METHODS = {
    "DP-LDA (corrected)": ("jiang-lda", {}),
    "DP-LDA (paper, not DP)": ("jiang-lda", {"paper_faithful": True}),
    "DiffGen-INFOGAIN": ("diffgen", {"score": "infogain"}),
    "DiffGen-MAX": ("diffgen", {"score": "max"}),
}


def blas_one_thread():
    """Limit BLAS to one thread (multi-threaded OpenBLAS spin-waits on a loaded machine)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


class AdultData:
    """Encoded Adult train/test with the encoders, optionally a small slice (quick runs)."""

    def __init__(self, n_train: int | None = None, n_test: int | None = None, seed: int = 0):
        train, _ = load_example("adult")
        test, _ = load_example("adult", "test")
        self.schema = Schema.from_yaml(data_path("adult_diffgen.yaml"))
        rng = np.random.default_rng(seed)
        if n_train is not None and n_train < len(train):
            train = train.iloc[np.sort(rng.choice(len(train), n_train, replace=False))].reset_index(drop=True)
        if n_test is not None and n_test < len(test):
            test = test.iloc[np.sort(rng.choice(len(test), n_test, replace=False))].reset_index(drop=True)
        self.train, self.test = train, test
        label = self.schema.label.name
        self.features = [c.name for c in self.schema.columns if c.name != label]
        self.enc_all = Encoder(self.schema)
        self.enc = Encoder(self.schema, self.features)
        self.lab = Encoder(self.schema, [label])
        self.X_all = self.enc_all.encode(train).X
        self.X = self.enc.encode(train).X
        self.y = self.lab.encode(train).X.argmax(1)
        self.X_test = self.enc.encode(test).X
        self.y_test = self.lab.encode(test).X.argmax(1)

    def labelled_frame(self, X, y) -> pd.DataFrame:
        df = self.enc.decode(X)
        df[self.schema.label.name] = np.asarray(self.schema.label.categories, dtype=object)[np.asarray(y, int)]
        return df


def fit_release(data: AdultData, method: str, epsilon: float, seed: int):
    """Fit one of LDA_METHODS and return (mechanism, X_released, y_released)."""
    from ..mechanisms import get_mechanism

    name, params = LDA_METHODS[method]
    cls = get_mechanism(name)
    extra = dict(cls.schema_params(data.enc, data.lab))
    extra.update(params)
    mech = cls(epsilon=epsilon, domain=data.enc.domain, rng=seed, **extra).fit(data.X, data.y)
    n = len(data.X)
    Xs, ys = mech.sample(n) if name == "diffgen" else mech.sample()
    return mech, Xs, ys


def summarize(values) -> dict:
    v = np.asarray(values, dtype=float)
    return {"mean": float(np.mean(v)), "std": float(np.std(v, ddof=1)) if v.size > 1 else 0.0, "n": int(v.size)}


def finite(x):
    return x if (isinstance(x, float) and math.isfinite(x)) or not isinstance(x, float) else None
