"""The publishable certificate of a release, and the private diagnostics kept apart from it.

The :class:`Certificate` holds only public facts (the schema's hash, the mechanism and its
parameters, the public n, sensitivities, noise scales, output hash) and DP-protected
values. Exact facts computed from the private input that do not go through a mechanism
(per-column clip counts, the input's sha256, a mechanism's exact counts such as how many
projected records were clipped, the warnings that exist because of single records) change deterministically when one record changes, so
they go into a separate :class:`PrivateDiagnostics` record, written as
``NAME.private-diagnostics.json`` beside the certificate ``NAME.json``; its name and its
first line say that it is private.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._version import __version__
from ..mechanisms import Mechanism
from ..noise import make_source

PRIVATE_WARNING = ("PRIVATE: exact diagnostics of the private input (not differentially private); "
                   "keep with the custodian's records, never publish")
PRIVATE_SUFFIX = ".private-diagnostics.json"


@dataclass
class Certificate:
    """What was released, how, and with which privacy guarantee (publishable)."""

    mechanism: str
    guarantee: str
    neighbouring_relation: str
    epsilon: float | None
    delta: float | None
    parameters: dict
    budget_split: dict
    sensitivities: dict
    noise_scales: dict
    n_treated_as_public: bool
    randomness: str
    package_version: str
    n_input_records: int
    n_output_records: int
    output_kind: str
    output_columns: list
    delta_source: str | None = None
    output_sha256: str | None = None
    schema_sha256: str | None = None
    created_utc: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    notes: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    schema_provenance: dict | None = None  # how the schema was made, e.g. a DP draft and its cost
    constraints: list = field(default_factory=list)  # the schema's public rules, each holding in every row

    def to_dict(self) -> dict:
        return {k: _jsonable(v) for k, v in self.__dict__.items()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)


@dataclass
class PrivateDiagnostics:
    """Exact facts of the private input (clip counts, input hash, a mechanism's exact counts, and the
    warnings present because of single records, such as which columns were clipped): NOT private."""

    input_sha256: str | None
    clip_counts: dict
    mechanism: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"warning": PRIVATE_WARNING, **{k: _jsonable(v) for k, v in self.__dict__.items()}}

    def to_json(self) -> str:
        """JSON whose first line states that the content is private."""
        d = self.to_dict()
        rest = json.dumps({k: v for k, v in d.items() if k != "warning"}, indent=2)
        return "{\"warning\": " + json.dumps(PRIVATE_WARNING) + ",\n" + rest[2:] + "\n"


def diagnostics_path(certificate_path: str | Path) -> Path:
    """``cert.json`` -> ``cert.private-diagnostics.json`` (same folder)."""
    p = Path(certificate_path)
    stem = p.name[:-len(".json")] if p.name.lower().endswith(".json") else p.name
    return p.with_name(stem + PRIVATE_SUFFIX)


@dataclass
class ReleaseResult:
    """A released table (in the schema's columns, or the reduced space where stated), its certificate and
    the private diagnostics (exact, never to be published)."""

    data: pd.DataFrame | None
    certificate: Certificate
    mechanism: Mechanism
    private_diagnostics: PrivateDiagnostics | None = None


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else str(f)
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if v is None or isinstance(v, (str, int, bool)):
        return v
    return str(v)


def make_certificate(plan, n_out: int, out_columns: list, out_hash: str | None) -> Certificate:
    """The certificate of a fitted release (publishable: no exact private counts)."""
    from .construct import user_params

    mech = plan.mechanism
    cost = getattr(mech, "privacy_cost_", None)
    notes = list(getattr(mech, "notes_", []))
    src = getattr(mech, "source_", None)
    randomness = src.description if src is not None else make_source(None).description
    if src is not None and not src.secure:
        notes.append("seeded randomness: reproducible, not for real releases")
    split = getattr(plan.encoder, "constraints", None)
    for parts in (split.calendar if split else ()):
        names = ", ".join(f"'{n}'" for n in parts.names if n is not None)
        notes.append(f"the date column '{parts.column}' was released as its calendar parts {names} (a public map "
                     f"of each record, put back together after the release)")
    return Certificate(
        mechanism=mech.name,
        guarantee=mech.guarantee,
        neighbouring_relation=mech.relation,
        epsilon=None if cost is None else cost.epsilon,
        delta=None if cost is None else cost.delta,
        parameters=user_params(mech),
        budget_split=dict(getattr(mech, "budget_split_", {})),
        sensitivities=dict(getattr(mech, "sensitivities_", {})),
        noise_scales=dict(getattr(mech, "noise_scales_", {})),
        n_treated_as_public=True,
        randomness=randomness,
        package_version=__version__,
        n_input_records=int(plan.n),
        n_output_records=int(n_out),
        output_kind=mech.output_kind,
        output_columns=list(out_columns),
        delta_source=plan.delta_source,
        output_sha256=out_hash,
        schema_sha256=hashlib.sha256(plan.schema.to_yaml().encode()).hexdigest(),
        notes=notes + _provenance_notes(plan.schema.provenance),
        extra=mech.certificate_extra(),
        schema_provenance=plan.schema.provenance,
        constraints=[c.to_dict() for c in plan.schema.constraints],
    )


def _provenance_notes(provenance: dict | None) -> list:
    """A note when the schema itself spent budget (a DP draft): that cost is not part of this release's."""
    if not provenance or provenance.get("method") != "dp-draft":
        return []
    return [f"the schema was drafted from the data under differential privacy (epsilon={provenance.get('epsilon')}, "
            f"delta={provenance.get('delta')}); that spend is separate from this release's and adds to it"]


def make_diagnostics(plan, clip_counts: dict, input_hash: str | None, private_warnings=()) -> PrivateDiagnostics:
    return PrivateDiagnostics(input_sha256=input_hash, clip_counts=dict(clip_counts),
                              mechanism=plan.mechanism.private_diagnostics(), warnings=list(private_warnings))
