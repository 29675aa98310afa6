"""Join results files of ``bench_mixed.py`` (runs split by data set, peer or seed) into one, and its report.

    python benchmarks/join_mixed_results.py OUT.json PART.json [PART.json ...] [--markdown OUT.md] [--note TEXT]

The first part gives the configuration; the commands, start times and versions of every part are
kept under ``config.parts``; the runs of a release named in several parts are concatenated (in
seed order) and summarised again. Peer versions are merged by peer.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mixed  # noqa: E402


def join(parts: list[dict]) -> dict:
    out = {"config": dict(parts[0]["config"]), "datasets": {}}
    out["config"]["parts"] = [{k: p["config"].get(k) for k in ("command", "started_utc", "finished_utc", "versions")}
                              for p in parts]
    out["config"]["peer_versions"] = {}
    out["config"]["peers"], out["config"]["ours"] = [], []
    for p in parts:
        out["config"]["peer_versions"].update(p["config"].get("peer_versions", {}))
        for key in ("peers", "ours"):
            out["config"][key] += [x for x in p["config"].get(key, []) if x not in out["config"][key]]
        for ds, entry in p["datasets"].items():
            into = out["datasets"].setdefault(ds, {**entry, "releases": {}})
            for name, rel in entry["releases"].items():
                have = into["releases"].setdefault(name, {**rel, "runs": []})
                have["runs"] = sorted(have["runs"] + rel["runs"], key=lambda r: r["seed"])
                have["summary"] = bench_mixed.summarize(have["runs"])
    seeds = sorted({r["seed"] for e in out["datasets"].values() for rel in e["releases"].values() for r in rel["runs"]})
    out["config"]["seeds"] = seeds
    out["config"]["peer_timeout"] = max(p["config"].get("peer_timeout", 0) for p in parts)
    out["config"]["started_utc"] = min(p["config"]["started_utc"] for p in parts)
    out["config"]["elapsed_seconds"] = max(p["config"].get("elapsed_seconds", 0) for p in parts)
    out["config"].pop("finished_utc", None)
    if all(p["config"].get("finished_utc") for p in parts):
        out["config"]["finished_utc"] = max(p["config"]["finished_utc"] for p in parts)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("parts", type=Path, nargs="+")
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--note", default=None)
    a = ap.parse_args(argv)
    result = join([json.loads(p.read_text()) for p in a.parts])
    if a.note:
        result["config"]["note"] = a.note
    a.out.write_text(json.dumps(result, indent=1, default=float))
    if a.markdown:
        a.markdown.write_text(bench_mixed.markdown(result))


if __name__ == "__main__":
    main()
