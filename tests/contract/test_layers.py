"""The package's layers point downward, and every module imports on its own (no import cycles).

Layers, lowest first: errors; schema, io, datasets; linalg and estimation (post-processing that sees only
released measurements); noise; dp, accounting and the
engine's per-chunk pieces (``engine.stats``, ``engine.preprocess``, ``engine.record_map`` and the pass
executors of ``engine.passes``: plain numpy/pandas, the maps every engine and every mechanism share); mechanisms; engine and release; evaluation and the
synthesizer API; experiments; cli. A module may import from its own layer or below, never above
(imports inside functions included).
"""

import ast
import subprocess
import sys
from pathlib import Path

import privrelease

SRC = Path(privrelease.__file__).parent
LAYERS = [
    {"_version", "errors"},
    {"schema", "io", "datasets"},
    {"linalg", "estimation"},
    {"noise"},
    {"dp", "accounting", "engine.stats", "engine.preprocess", "engine.record_map", "engine.passes"},
    {"mechanisms"},
    {"engine", "release"},
    {"evaluation", "audit", "synthesizer"},
    {"experiments"},
    {"cli"},
]


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> list[tuple[str, Path]]:
    return sorted((_module(p), p) for p in SRC.rglob("*.py"))


def _rank(module: str) -> int | None:
    rest = module.split(".")[1:]
    for depth in (2, 1):
        key = ".".join(rest[:depth])
        for i, layer in enumerate(LAYERS):
            if key in layer:
                return i
    return None


def _imports(module: str, path: Path):
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                names = [target + "." + a.name for a in node.names] if not node.module else [target]
            else:
                names = [node.module]
            yield from ((n, node.lineno) for n in names if n.startswith("privrelease"))
        elif isinstance(node, ast.Import):
            yield from ((a.name, node.lineno) for a in node.names if a.name.startswith("privrelease"))


def test_every_top_level_module_has_a_layer():
    missing = {m for m, _ in _modules() if m != "privrelease" and _rank(m) is None}
    assert not missing, f"modules with no layer: {sorted(missing)}"


def test_imports_point_downward():
    upward = []
    for module, path in _modules():
        if module == "privrelease":
            continue
        for target, line in _imports(module, path):
            if target == "privrelease":
                continue
            if _rank(target) > _rank(module):
                upward.append(f"{path.relative_to(SRC.parent)}:{line} imports {target}")
    assert not upward, "imports pointing to a higher layer:\n" + "\n".join(upward)


def test_every_module_imports_on_its_own():
    """Each module imported first, in a fresh set of privrelease modules: an import cycle fails here."""
    code = (
        "import importlib, sys\n"
        f"mods = {[m for m, _ in _modules()]!r}\n"
        "bad = []\n"
        "for m in mods:\n"
        "    for k in [k for k in sys.modules if k == 'privrelease' or k.startswith('privrelease.')]:\n"
        "        del sys.modules[k]\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except ImportError as e:\n"
        "        bad.append(f'{m}: {e}')\n"
        "print('\\n'.join(bad))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(SRC.parent)})
    assert out.returncode == 0, out.stdout + out.stderr


def _top_level_graph() -> dict[str, set[str]]:
    """Module -> the privrelease modules it imports when it is imported (module body and its try blocks)."""
    modules = dict(_modules())
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        body = list(tree.body) + [n for s in tree.body if isinstance(s, ast.Try) for n in s.body]
        at_import = {n.lineno for n in body if isinstance(n, (ast.Import, ast.ImportFrom))}
        for target, line in _imports(module, path):
            if line not in at_import:
                continue  # inside a function: not run at import time
            while target not in modules and "." in target:
                target = target.rpartition(".")[0]
            if target != module and target in modules:
                graph[module].add(target)
    return graph


def test_no_import_cycles_at_module_level():
    graph = _top_level_graph()
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"
