"""Build the bundled UCI Adult example from ../shared/datasets/adult.

Keeps the original train/test split and every column, drops records with a missing
value ('?'), as Jiang et al. 2013 sec. 4 do (30,162 train / 15,060 test records), and
strips the trailing '.' of the test file's income labels. Output: gzip CSV with
mtime 0 so that the bytes are reproducible.
"""

import gzip
import io
import sys
from pathlib import Path

import pandas as pd

src = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/datasets/adult")
dst = Path(__file__).resolve().parents[1] / "src" / "privrelease" / "data"
for part in ("train", "test"):
    df = pd.read_csv(src / f"adult_{part}.csv.gz", dtype=str)
    df = df[~(df == "?").any(axis=1)].copy()
    df["income"] = df["income"].str.rstrip(".")
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    with open(dst / f"adult_{part}.csv.gz", "wb") as fh:
        with gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
            gz.write(buf.getvalue().encode())
    print(part, len(df))
