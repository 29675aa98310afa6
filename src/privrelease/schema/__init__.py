"""Schema and encoding: the declared public description of a table."""

from .dates import DatetimeColumn
from .encoding import EncodedDomain, EncodedTable, Encoder
from .drafting import draft_schema, draft_schema_dict
from .schema import CategoricalColumn, NumericColumn, Schema

__all__ = ["Schema", "NumericColumn", "CategoricalColumn", "DatetimeColumn", "Encoder", "EncodedTable",
           "EncodedDomain", "draft_schema", "draft_schema_dict"]
