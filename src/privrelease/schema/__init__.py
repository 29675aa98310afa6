"""Schema and encoding: the declared public description of a table."""

from .dates import DatetimeColumn
from .encoding import EncodedDomain, EncodedTable, Encoder
from .schema import CategoricalColumn, NumericColumn, Schema, draft_schema

__all__ = ["Schema", "NumericColumn", "CategoricalColumn", "DatetimeColumn", "Encoder", "EncodedTable",
           "EncodedDomain", "draft_schema"]
