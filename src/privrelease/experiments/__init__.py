"""Paper reproductions: one runner per figure or table, our numbers beside the paper's."""

from .registry import get_reproduction, list_reproductions

__all__ = ["get_reproduction", "list_reproductions"]
