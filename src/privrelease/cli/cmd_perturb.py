"""``privrelease perturb``: the owner's side of Zhuang-Chang (a projection learned on public data, then MMD
perturbation). No formal privacy guarantee."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import List, Optional

import typer

from .common import err, parse_params

MMD_KEYS = ("fine", "lam", "alpha", "max_iter", "update", "sigma")


def perturb(
    records: Path = typer.Argument(..., help="The owner's records (.csv, .csv.gz or .parquet)."),
    public: Path = typer.Option(..., "--public", help="Public labelled records (same columns plus the two labels)."),
    schema: Path = typer.Option(..., "--schema", "-s", help="Schema of the public table (features and the two labels)."),
    utility_label: str = typer.Option(..., "--utility-label", help="Utility label column (kept usable)."),
    privacy_label: str = typer.Option(..., "--privacy-label", help="Privacy label column (to hide)."),
    projection: str = typer.Option("jupa", "--projection", help="jupa, ruca, dca, mdr, pca, random-projection, full-dimensional."),
    out: Path = typer.Option(..., "--out", "-o", help="Perturbed records (written atomically)."),
    param: List[str] = typer.Option([], "--param", "-p", help="key=value: projection (n_components, rho0, rho1, rho1_prime, rho) or MMD (fine, lam, alpha, max_iter, update, sigma) parameter."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seeded targets for experiments (default: OS entropy)."),
    certificate: Optional[Path] = typer.Option(None, "--certificate", "-c", help="Write a certificate JSON here."),
):
    """Owner side (Zhuang-Chang): project RECORDS with a projection learned on public data, then MMD-perturb.

    NO formal privacy guarantee: the certificate says "none (empirical)"; measure attack accuracies with
    `privrelease reproduce zhuang-table`.
    """
    import pandas as pd

    from ..errors import PrivateDataWarning
    from ..io import write_table
    from ..mechanisms import get_mechanism

    enc, pub, own = _perturb_tables(records, public, schema, utility_label, privacy_label)
    params = parse_params(param)
    mmd = {key: params.pop(key) for key in list(params) if key in MMD_KEYS}
    cls = get_mechanism("jupa-mmd")
    mech = cls(public_X=enc.encode(pub).X, public_utility=pub[utility_label].astype(str).to_numpy(),
               public_privacy=pub[privacy_label].astype(str).to_numpy(), projection=projection,
               projection_params=params, rng=seed, **mmd).fit()
    own_enc = enc.encode(own, warn=False)
    with warnings.catch_warnings():
        if certificate is not None:  # the warnings that depend on single records go to the private file only
            warnings.simplefilter("ignore", PrivateDataWarning)
        private_warnings = enc.warn_clipped(own_enc.clip_counts, len(own))
    Z = mech.transform(own_enc.X)
    write_table(pd.DataFrame(Z, columns=mech.output_columns_), out)
    if certificate is not None:
        _write_certificate(certificate, cls, mech, {"projection": projection, **params, **mmd}, len(own),
                           private_warnings)
    typer.echo(f"wrote {out} ({len(Z):,} records, {Z.shape[1]} columns; guarantee: none (empirical))", err=True)


def _perturb_tables(records: Path, public: Path, schema: Path, utility_label: str, privacy_label: str):
    """The encoder of the feature columns (the schema's columns but the two labels), the public table and
    the owner's records; both tables must hold every feature."""
    from ..errors import InputDataError
    from ..io import read_table
    from ..schema import Encoder, Schema

    sch = Schema.from_yaml(schema)
    for lab in (utility_label, privacy_label):
        if lab not in sch.names:
            err(f"label column '{lab}' is not in the schema")
    feats = [c for c in sch.names if c not in (utility_label, privacy_label)]
    enc = Encoder(sch, feats)
    pub = read_table(public, sch)
    own = read_table(records, sch)
    for name_, df_ in (("public", pub), ("records", own)):
        miss = [c for c in feats if c not in df_.columns]
        if miss:
            raise InputDataError(f"{name_} table lacks feature columns {miss}")
    return enc, pub, own


def _write_certificate(certificate: Path, cls, mech, parameters: dict, n_records: int, private_warnings) -> None:
    """The certificate of a perturbation ("epsilon": None) and, beside it, its PRIVATE diagnostics."""
    from ..io import atomic_write
    from ..release import _jsonable, diagnostics_path

    cert = {"mechanism": cls.name, "guarantee": cls.guarantee, "neighbouring_relation": cls.relation,
            "epsilon": None, "parameters": parameters,
            "extra": mech.certificate_extra(), "notes": mech.notes_, "n_records": int(n_records),
            "randomness": mech.source_.description}
    with atomic_write(certificate, "w") as fh:
        fh.write(json.dumps(_jsonable(cert), indent=2))
    private = {"warning": "PRIVATE: exact diagnostics of the owner's records; never publish",
               **mech.private_diagnostics(), "warnings": list(private_warnings)}
    with atomic_write(diagnostics_path(certificate), "w") as fh:
        fh.write(json.dumps(_jsonable(private), indent=2))
