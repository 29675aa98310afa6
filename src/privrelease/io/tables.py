"""Table I/O. Output files are written atomically (temporary file + ``os.replace``)."""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import os
import tempfile
import warnings
from pathlib import Path
from typing import Iterator
import zlib

import pandas as pd

from ..errors import DataWarning, InputDataError, option, shorten_list

FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".gz": "csv"}


def table_format(path: str | Path) -> str:
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-2:] == [".csv", ".gz"] or (suffixes and suffixes[-1] == ".csv"):
        return "csv"
    if suffixes and suffixes[-1] in (".parquet", ".pq"):
        return "parquet"
    raise InputDataError(f"{path.name}: unsupported file type; use .csv, .csv.gz or .parquet")


def csv_read_options(schema) -> dict:
    """``read_csv`` keywords for the schema's columns. A categorical column's cells are read as written, only an
    empty cell being missing: its other spellings of a missing value are the schema's ``na_values`` (read later by
    :func:`privrelease.schema.encoding.read_missing`, as a Parquet file's text is), so a level that pandas would
    take for a missing value ("NA", "None", "null") is the level the schema declares, in a CSV as in Parquet. A
    date column is read as text too (20200131 is a date); it and the numeric columns keep pandas' spellings."""
    if schema is None:
        return {}
    from pandas._libs.parsers import STR_NA_VALUES

    from ..schema.dates import DatetimeColumn

    levels = {c.name for c in schema.categorical}
    dates = {c.name for c in schema.numeric if isinstance(c, DatetimeColumn)}
    derived = [n for c in getattr(schema, "constraints", ()) for n in c.derived]
    pandas_na = sorted(STR_NA_VALUES)
    return {"dtype": {n: str for n in sorted(levels | dates)}, "keep_default_na": False,
            "na_values": {n: [""] if n in levels else pandas_na for n in [*schema.names, *derived]}}


def warn_extra_columns(columns, schema, source: str) -> None:
    """Warn (naming them) about data columns the schema does not declare: they are left out of a release."""
    if schema is None:
        return
    declared = set(schema.names) | {n for c in getattr(schema, "constraints", ()) for n in c.derived}
    extra = [str(c) for c in columns if c not in declared]
    if extra:
        warnings.warn(f"{source} has {len(extra)} column(s) not declared in the schema, left out of the release: "
                      f"{shorten_list(extra)}", DataWarning, stacklevel=3)


def read_table(path: str | Path, schema=None, sep: str | None = None, encoding: str | None = None,
               as_text: bool = False) -> pd.DataFrame:
    """Read a whole CSV or Parquet file (categorical schema columns are read as text; with ``as_text``
    every CSV column is read as its raw text, missing-value spellings included, as the schema drafts need).

    The format comes from the file's first bytes (:func:`input_format`), a CSV's delimiter from its
    first lines unless ``sep`` is given (:func:`csv_options`); ``encoding`` defaults to UTF-8.
    """
    path = Path(path)
    if not path.exists():
        raise InputDataError(f"input file {path} does not exist")
    fmt, _ = input_format(path)
    with _read_errors(path, fmt):
        if fmt == "csv":
            text = {"dtype": str, "keep_default_na": False} if as_text else csv_read_options(schema)
            return pd.read_csv(path, skipinitialspace=True, **text, **csv_options(path, sep, encoding))
        df = pd.read_parquet(path)
        _check_unique(list(df.columns), path)
        return df


def iter_table_chunks(path: str | Path, schema=None, chunk_rows: int = 200_000, sep: str | None = None,
                      encoding: str | None = None) -> Iterator[pd.DataFrame]:
    """Yield DataFrame chunks of at most ``chunk_rows`` rows (memory independent of file size).

    A file that cannot be read (e.g. a CSV named ``.parquet``, a cut gzip stream, text that is
    not in its encoding) raises :class:`~privrelease.errors.InputDataError` with one line.
    """
    path = Path(path)
    if not path.exists():
        raise InputDataError(f"input file {path} does not exist")
    fmt, _ = input_format(path)
    with _read_errors(path, fmt):
        if fmt == "csv":
            yield from pd.read_csv(path, **csv_read_options(schema), skipinitialspace=True, chunksize=chunk_rows,
                                   **csv_options(path, sep, encoding))
        else:
            yield from _parquet_chunks(path, schema, chunk_rows)


# ---- what a file holds: format by its first bytes, CSV dialect by its first lines ----------------------

_SNIFF_BYTES = 1 << 16
_DELIMITERS = (",", ";", "\t", "|")
_SEP_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}
#: first bytes of files that are not tables privrelease reads, and what to call them
_OTHER_MAGIC = (
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx workbook is one)"),
    (b"\xd0\xcf\x11\xe0", "an Excel .xls workbook (or another OLE2 document)"),
    (b"BZh", "a bzip2-compressed file"), (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"), (b"%PDF", "a PDF document"),
    (b"SQLite format 3\x00", "an SQLite database"), (b"ARROW1", "an Arrow IPC (Feather) file"),
)


def input_format(path: str | Path) -> tuple[str, str | None]:
    """``(format, compression)`` of an input file from its first bytes: Parquet (``PAR1``) and gzip are
    read whatever the file's name; a file that is something else (a ZIP or Excel workbook, a PDF, ...)
    or text named ``.parquet`` is refused with one line naming what it is."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise InputDataError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head.startswith(b"PAR1"):
        return "parquet", None
    if head.startswith(b"\x1f\x8b"):
        return "csv", "gzip"
    for magic, what in _OTHER_MAGIC:
        if head.startswith(magic):
            raise InputDataError(f"{path} is {what}, not a CSV or Parquet table; export it as CSV or Parquet")
    if table_format(path) == "parquet":
        raise InputDataError(f"cannot read {path} as PARQUET: the file does not start as a Parquet file does "
                             f"(if it is a CSV file, name it .csv)")
    return "csv", None


def csv_options(path: str | Path, sep: str | None = None, encoding: str | None = None) -> dict:
    """``read_csv`` keywords for a CSV file: its compression (from its bytes), its encoding (given, or
    UTF-8; UTF-16 by its byte-order mark) and its delimiter (given, or the one of ``, ; tab |`` that splits
    its header into the most fields). A header that names a column twice
    is refused here, before pandas renames the second one."""
    path = Path(path)
    _, compression = input_format(path)
    opener = gzip.open if compression == "gzip" else open
    with _read_errors(path, "csv"), opener(path, "rb") as fh:
        raw = fh.read(_SNIFF_BYTES)
    if encoding is None:
        encoding = "utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"
    try:
        text = _decode_sample(raw, encoding, complete=len(raw) < _SNIFF_BYTES)
    except LookupError:
        raise InputDataError(f"unknown encoding {encoding!r} ({option('encoding', '--encoding')}); e.g. utf-8, "
                             f"latin-1, cp1252") from None
    except UnicodeDecodeError as exc:
        raise _encoding_error(path, exc) from None
    sep = _SEP_NAMES.get(sep, sep) if sep is not None else sniff_delimiter(text)
    if len(sep) != 1:
        raise InputDataError(f"{option('sep', '--sep')} must be one character (or tab, comma, semicolon, pipe, "
                             f"space), got {sep!r}")
    lines = text.lstrip("\ufeff").splitlines()
    if lines:
        header = next(csv.reader([lines[0]], delimiter=sep, skipinitialspace=True), [])
        _check_unique([h.strip() for h in header], path)
    return {"sep": sep, "encoding": encoding, "compression": compression}


def _decode_sample(raw: bytes, encoding: str, complete: bool) -> str:
    """The text of a file's first bytes; a sample cut short loses its last, partial character and line."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if complete or exc.start < len(raw) - 4:
            raise
        text = raw[:exc.start].decode(encoding)
    return text if complete or "\n" not in text else text[:text.rfind("\n") + 1]


def sniff_delimiter(text: str) -> str:
    """The delimiter of CSV text: of ``, ; tab |``, the one that splits its header (the first non-empty
    line) into the most fields, more than one; ``,`` when none does (ties: in that order).

    Only the header is read, never a record: a delimiter guessed from the first records would let one
    record change how every other record is read (a record that breaks a delimiter's consistent split
    would flip the choice), and a release must not depend on one record that way.

    >>> sniff_delimiter("a;b;c\\n1,5;2;3\\n"), sniff_delimiter("a\\tb\\n1\\t2\\n"), sniff_delimiter("x\\n1\\n")
    (';', '\\t', ',')
    """
    header = next((ln for ln in text.splitlines() if ln.strip()), "")
    best, width = ",", 1
    for d in _DELIMITERS:
        w = len(next(csv.reader([header], delimiter=d), []))
        if w > width:
            best, width = d, w
    return best


def _check_unique(names: list, path: Path) -> None:
    seen, dup = set(), []
    for n in names:
        if n in seen and n not in dup:
            dup.append(n)
        seen.add(n)
    if dup:
        raise InputDataError(f"{path} names column(s) {shorten_list(dup)} more than once; give each column its "
                             f"own name")


def _encoding_error(path: Path, exc: UnicodeDecodeError) -> InputDataError:
    byte = exc.object[exc.start:exc.start + 1].hex() if isinstance(exc.object, bytes) else "?"
    return InputDataError(f"cannot read {path}: it is not {exc.encoding.upper()} text (byte 0x{byte}); give its "
                          f"encoding with {option('encoding=...', '--encoding')} (e.g. latin-1 or cp1252)")


@contextlib.contextmanager
def _read_errors(path: Path, fmt: str):
    """The errors of reading a table as one-line :class:`InputDataError` messages."""
    try:
        yield
    except pd.errors.EmptyDataError:
        raise InputDataError(f"input file {path} is empty (no header, no records)") from None
    except UnicodeDecodeError as exc:
        raise _encoding_error(path, exc) from None
    except (zlib.error, EOFError, gzip.BadGzipFile) as exc:
        raise InputDataError(f"cannot read {path}: its gzip data are damaged or cut short "
                             f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    except pd.errors.ParserError as exc:
        raise InputDataError(f"cannot read {path} as CSV: {str(exc).strip().splitlines()[-1]} (a delimiter other "
                             f"than the one read from its first lines? give it with {option('sep=...', '--sep')})") \
            from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, InputDataError):
            raise
        # pyarrow's ArrowInvalid derives from ValueError; ArrowIOError from OSError
        raise InputDataError(f"cannot read {path} as {fmt.upper()}: {str(exc).splitlines()[0] if str(exc) else exc}") \
            from None


def _parquet_chunks(path: Path, schema, chunk_rows: int):
    import pyarrow.parquet as pq

    # no pre-buffering of the whole file (measured: 1.0 GB -> 0.69 GB peak for 200,000 x 50 doubles)
    pf = pq.ParquetFile(path, pre_buffer=False)
    cols = _parquet_columns(pf, schema)
    # One row group at a time: a single iter_batches over the whole file keeps growing Arrow's
    # buffers with the number of row groups (measured: peak RSS +60% from 1 to 4 row groups),
    # whereas reading group by group keeps the peak at about one group.
    for i in range(pf.num_row_groups):
        if pf.metadata.row_group(i).num_rows <= chunk_rows:
            yield pf.read_row_group(i, columns=cols).to_pandas()  # threads: lower peak here (310 vs 474 MB)
        else:
            for batch in pf.iter_batches(batch_size=chunk_rows, columns=cols, row_groups=[i],
                                         use_threads=False):
                yield batch.to_pandas()


def _parquet_error(path, exc) -> InputDataError:
    return InputDataError(f"cannot read {path} as PARQUET: {str(exc).splitlines()[0] if str(exc) else exc}")


def _parquet_columns(pf, schema) -> list | None:
    """The schema's columns present in the file (None: all); a missing one is reported by the encoding."""
    if schema is None:
        return None
    present = set(pf.schema_arrow.names)
    return [c for c in schema.names if c in present]


def parquet_row_group_spans(path: str | Path, schema=None, target_bytes: int = 64 * 2**20) -> list[list[int]]:
    """Consecutive runs of a Parquet file's row groups of about ``target_bytes`` (uncompressed, the
    schema's columns only), in file order, from the footer alone; row groups without records are
    left out (a file without records gives no run). A row group larger than the target is a run of its own."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        meta = pf.metadata
        cols = _parquet_columns(pf, schema)
        wanted = None if cols is None else set(cols)
        spans, run, size = [], [], 0
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            if rg.num_rows == 0:
                continue
            b = sum(rg.column(j).total_uncompressed_size for j in range(rg.num_columns)
                    if wanted is None or rg.column(j).path_in_schema in wanted)
            if run and size + b > target_bytes:
                spans.append(run)
                run, size = [], 0
            run.append(i)
            size += b
        if run:
            spans.append(run)
        return spans
    except (OSError, ValueError) as exc:
        raise _parquet_error(path, exc) from None


def read_parquet_row_groups(path: str | Path, row_groups: list[int], schema=None) -> pd.DataFrame:
    """The records of ``row_groups`` of a Parquet file (the schema's columns), in file order."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, pre_buffer=False)
        return pf.read_row_groups(row_groups, columns=_parquet_columns(pf, schema), use_threads=False).to_pandas()
    except (OSError, ValueError) as exc:
        raise _parquet_error(path, exc) from None


def table_columns(path: str | Path, sep: str | None = None, encoding: str | None = None) -> list[str]:
    """The column names of a CSV (its header) or Parquet file (its metadata), without reading records."""
    path = Path(path)
    try:
        if input_format(path)[0] == "parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        return [str(c) for c in pd.read_csv(path, nrows=0, skipinitialspace=True,
                                            **csv_options(path, sep, encoding)).columns]
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, ValueError, EOFError,
            zlib.error):
        return []  # the reading pass reports the problem


def count_rows(path: str | Path, schema=None, chunk_rows: int = 200_000, sep: str | None = None,
               encoding: str | None = None) -> int:
    """Number of records (Parquet: from the metadata; CSV: one parsing pass)."""
    path = Path(path)
    if input_format(path)[0] == "parquet":
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
            n = pf.metadata.num_rows
        except (OSError, ValueError) as exc:
            raise _parquet_error(path, exc) from None
        _check_unique(list(pf.schema_arrow.names), path)
        return n
    return sum(len(c) for c in iter_table_chunks(path, schema, chunk_rows, sep, encoding))


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "wb"):
    """Write to a temporary file beside ``path`` and move it into place only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual permissions
    try:
        with os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_table(df: pd.DataFrame, path: str | Path) -> None:
    """Write a table atomically as CSV or Parquet (by extension)."""
    fmt = table_format(path)
    with atomic_write(path, "wb") as fh:
        if fmt == "csv":
            compression = "gzip" if str(path).lower().endswith(".gz") else None
            df.to_csv(fh, index=False, compression=compression)
        else:
            df.to_parquet(fh, index=False)


def frame_sha256(df: pd.DataFrame) -> str:
    """sha256 of a table held in memory: its column names, then pandas' 64-bit hash of every row
    (values and dtypes, not the index). Identifies the input of an in-memory release without
    writing it out as text first."""
    h = hashlib.sha256("\x1f".join(map(str, df.columns)).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
