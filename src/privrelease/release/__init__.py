"""The release package: construction from the schema, the pipeline, the certificate, the transaction.

* :mod:`.construct`: schema facts and privacy parameters -> a configured mechanism (:class:`Plan`);
* :mod:`.pipeline`: :func:`release` (in memory) and :func:`release_file` (streamed, local or Dask);
* :mod:`.options`: :class:`ReleaseOptions`, a file release's own options as one value;
* :mod:`.certificate`: the publishable :class:`Certificate` and the private diagnostics;
* :mod:`.transaction`: outputs and ledger charge as one transaction;
* :mod:`.output`: decoding and writing of released records;
* :mod:`.sources`: input files (a file, a directory, a glob) and the engine (local, Dask cluster);
* :mod:`.parts`: released records part by part (per-part noise sources), on the client or a worker;
* :mod:`.emit`: the released table as one file or a Parquet dataset of part files.
"""

from .certificate import Certificate, PrivateDiagnostics, ReleaseResult, _jsonable, diagnostics_path
from .construct import (
    DEFAULT_MECHANISM,
    MIN_RECORDS,
    Plan,
    build_mechanism,
    construct,
    default_delta,
    default_total_delta,
    encoders,
)
from .options import ReleaseOptions
from .pipeline import release, release_file, run_release
from .transaction import parse_budget

__all__ = [
    "DEFAULT_MECHANISM", "MIN_RECORDS", "Certificate", "PrivateDiagnostics", "ReleaseResult", "Plan", "release",
    "release_file", "run_release", "ReleaseOptions", "build_mechanism", "construct", "default_delta", "default_total_delta", "diagnostics_path",
    "encoders", "parse_budget", "_jsonable",
]
