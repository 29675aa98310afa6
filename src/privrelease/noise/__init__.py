"""Noise samplers parameterised by scale; floating-point-safe by default."""

from .samplers import RandomSource, SecureSource, SeededSource, make_source

__all__ = ["RandomSource", "SecureSource", "SeededSource", "make_source"]
