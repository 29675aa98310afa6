"""Reading and writing tables: CSV/Parquet, chunked streaming, atomic output, hashes."""

from .tables import (atomic_write, file_sha256, iter_table_chunks, read_table, table_format,
                     warn_extra_columns, write_table)

__all__ = ["read_table", "iter_table_chunks", "write_table", "atomic_write", "file_sha256", "table_format",
           "warn_extra_columns"]
