"""Sufficient statistics: in memory, streamed in chunks, or distributed; one per-record map for all."""

from .preprocess import apply_steps, scale_rows_to_ball
from .record_map import EncodedChunk, RecordMap
from .stats import SufficientStats
from .streaming import stream_stats
from .threads import release_threads

__all__ = ["SufficientStats", "RecordMap", "EncodedChunk", "stream_stats", "apply_steps", "scale_rows_to_ball",
           "release_threads"]
