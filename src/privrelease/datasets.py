"""Bundled example data and locators for the real data sets used by reproductions."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import pandas as pd

from .errors import InputDataError
from .io.tables import csv_read_options
from .schema import Schema

EXAMPLES = {"adult": ("adult_train.csv.gz", "adult.yaml")}


def data_path(name: str) -> Path:
    return Path(str(resources.files("privrelease") / "data" / name))


def example_names() -> list[str]:
    return sorted(EXAMPLES)


def load_example(name: str, part: str = "train") -> tuple[pd.DataFrame, Schema]:
    """Load a bundled example (``adult``): its table (``train`` or ``test``) and its public schema."""
    if name not in EXAMPLES:
        raise InputDataError(f"unknown example '{name}'; available: {example_names()}")
    file, schema_file = EXAMPLES[name]
    if part == "test":
        file = file.replace("train", "test")
    schema = Schema.from_yaml(data_path(schema_file))
    df = pd.read_csv(data_path(file), **csv_read_options(schema))
    return df, schema


def example_paths(name: str, part: str = "train") -> tuple[Path, Path]:
    if name not in EXAMPLES:
        raise InputDataError(f"unknown example '{name}'; available: {example_names()}")
    file, schema_file = EXAMPLES[name]
    if part == "test":
        file = file.replace("train", "test")
    return data_path(file), data_path(schema_file)


def shared_datasets_dir() -> Path | None:
    """The real data sets folder: ``$PRIVRELEASE_DATA`` or ``../shared/datasets`` beside the project."""
    env = os.environ.get("PRIVRELEASE_DATA")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve()
    candidates += [p / "shared" / "datasets" for p in here.parents] + [Path.cwd().parent / "shared" / "datasets"]
    for c in candidates:
        if c.is_dir():
            return c
    return None


def require_dataset(folder: str) -> Path:
    """Path of a real data set folder, or a clear error saying where it was looked for."""
    base = shared_datasets_dir()
    if base is None or not (base / folder).is_dir():
        raise InputDataError(
            f"data set '{folder}' not found: set PRIVRELEASE_DATA to the folder holding it "
            f"(e.g. ../shared/datasets) or pass --data-dir"
        )
    return base / folder
