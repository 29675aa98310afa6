"""Sufficient statistics: in memory, streamed in chunks, or distributed."""

from .stats import SufficientStats
from .streaming import stream_stats

__all__ = ["SufficientStats", "stream_stats"]
