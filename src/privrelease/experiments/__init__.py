"""Paper reproductions: one runner per figure or table, our numbers beside the paper's."""

from .registry import REPRODUCTIONS, get_reproduction, list_reproductions

__all__ = ["REPRODUCTIONS", "get_reproduction", "list_reproductions"]
