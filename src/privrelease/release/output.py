"""Released records: decoding into the declared output space, drawing in chunks, writing CSV/Parquet."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from ..errors import ParameterError, option
from ..mechanisms import Mechanism, RowAlignedMechanism


def decode_output(mech, X, ys, enc, lab, start: int = 0) -> pd.DataFrame:
    """Released matrix -> table in the mechanism's declared output space (plus the label column); the
    schema's constraints map the records back to the table's columns (``start``: the index of the
    first record in the whole release, which numbers fresh identifiers)."""
    space = mech.capabilities.output_space
    own = getattr(mech, "output_columns_", None)  # a fitted attribute: set when the output is reduced
    if space == "encoded":  # e.g. compression: the encoded columns, not decodable
        out = pd.DataFrame(np.asarray(X), columns=list(enc.feature_names))
    elif space == "own" or own is not None:
        out = pd.DataFrame(np.asarray(X), columns=list(own))
    else:
        out = enc.decode(X)
    if lab is not None and ys is not None:
        col = lab.columns[0]
        if col.kind == "numeric":
            values = lab.decode(np.asarray(ys, dtype=np.float64).reshape(-1, 1))[col.name].to_numpy()
        else:
            values = np.asarray(col.categories, dtype=object)[np.asarray(ys, dtype=int)]
        # in the schema's order (the API's and the command line's tables agree); reduced outputs: last
        pos = getattr(lab, "position", None) if space == "schema" and own is None else None
        out.insert(len(out.columns) if pos is None else min(pos, len(out.columns)), col.name, values)
    constraints = getattr(enc, "constraints", None)
    return constraints.complete(out, start) if constraints and space == "schema" and own is None else out


def n_draw(mech, n_synthetic, n):
    """Records to draw from a synthetic mechanism (None when its output size is one of its parameters);
    checked before the data are read."""
    if isinstance(mech, RowAlignedMechanism):
        if n_synthetic is not None:
            raise ParameterError(f"mechanism '{mech.name}' releases one row per input row; "
                                 f"{option('n_synthetic', '--n-synthetic')} applies to synthetic mechanisms only")
        return None
    if mech.capabilities.fixed_output_rows:
        if n_synthetic is not None:
            raise ParameterError(f"mechanism '{mech.name}' releases a number of rows fixed by its parameters; "
                                 f"{option('n_synthetic', '--n-synthetic')} does not apply")
        return None
    return n if n_synthetic is None else Mechanism._check_int(n_synthetic, option("n_synthetic", "--n-synthetic"), 1)


def write_frames(frames: Iterable[pd.DataFrame], path: Path, fmt: str, gzip_csv: bool = False,
                 progress: Callable[[str, int], None] | None = None) -> tuple[int, list]:
    """Write an iterator of DataFrames into ``path`` (CSV or Parquet); return (rows, columns)."""
    n, columns = 0, []
    with open(path, "wb") as fh:
        if fmt == "csv":
            import gzip

            sink = gzip.GzipFile(fileobj=fh, mode="wb") if gzip_csv else fh
            for df in frames:
                buf = io.StringIO()
                df.to_csv(buf, index=False, header=not columns)
                sink.write(buf.getvalue().encode())
                columns = columns or list(df.columns)
                n += len(df)
                if progress:
                    progress("writing", n)
            if sink is not fh:
                sink.close()
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            writer = None
            for df in frames:
                table = pa.Table.from_pandas(df, preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(fh, table.schema)
                    columns = list(df.columns)
                elif not table.schema.equals(writer.schema):  # e.g. a part whose values are all missing
                    table = table.cast(writer.schema)
                writer.write_table(table)
                n += len(df)
                if progress:
                    progress("writing", n)
            if writer is not None:
                writer.close()
        fh.flush()
        os.fsync(fh.fileno())
    return n, columns
