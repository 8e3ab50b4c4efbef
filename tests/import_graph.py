"""The import graph of the `serq` package, read from the source with `ast`,
and the layer contracts of pyproject.toml's `[tool.importlinter]` checked on
it (tests/test_architecture.py).

Every `import` counts, at module level or inside a function; an import under
`if TYPE_CHECKING:` does not (it never runs). `from pkg import name` is an
import of the module `pkg.name` when there is one, else of `pkg`.
"""
from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass
from typing import Iterator, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Import:
    """One import statement's target, where it is written, and how."""

    source: str       # the importing module
    target: str       # the imported module
    line: int
    in_function: bool


def modules(root: str = ROOT, package: str = "serq") -> dict[str, str]:
    """Dotted module name -> file, for every module of `package` under `root`."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(os.path.join(root, package)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                parts = os.path.relpath(os.path.join(folder, f), root)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                out[".".join(parts)] = os.path.join(folder, f)
    return out


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(module: str, path: str, known: dict[str, str]) -> Iterator[Import]:
    """The imports of one module (TYPE_CHECKING blocks left out)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]

    def visit(node: ast.AST, in_function: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child.test):
                for other in child.orelse:
                    yield from visit_one(other, in_function)
                continue
            yield from visit_one(child, in_function)

    def visit_one(node: ast.AST, in_function: bool) -> Iterator[Import]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, node.lineno, in_function)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield Import(module, sub if sub in known else base, node.lineno, in_function)
        else:
            yield from visit(node, in_function or isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    yield from visit(tree, False)


def graph(root: str = ROOT) -> tuple[dict[str, str], list[Import]]:
    """The modules of `serq` under `root` and their imports of each other."""
    known = modules(root)
    edges = [i for m, p in known.items() for i in imports_of(m, p, known)
             if i.target in known and i.target != m]
    return known, edges


def cycles(known: dict[str, str], edges: list[Import]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module."""
    succ: dict[str, set[str]] = {m: set() for m in known}
    for e in edges:
        succ[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(known) + 100))

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(succ[v]):
            if w not in index:
                connect(w)
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
                out.append(sorted(comp))

    try:
        for v in sorted(known):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def contracts(root: str = ROOT) -> list[dict]:
    """The `[[tool.importlinter.contracts]]` of `root`'s pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
        return tomllib.load(fh)["tool"]["importlinter"]["contracts"]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _where(module: str, groups: list[list[str]]) -> Optional[tuple[int, str]]:
    for i, group in enumerate(groups):
        for package in group:
            if _inside(module, package):
                return i, package
    return None


def violations(contract: dict, edges: list[Import]) -> list[str]:
    """The imports that break one contract (`layers`, `independence` or
    `forbidden`, with import-linter's meaning), as readable lines."""
    kind = contract["type"]
    out = []
    for e in edges:
        why = None
        if kind == "layers":
            groups = [[p.strip() for p in layer.replace(":", "|").split("|")]
                      for layer in contract["layers"]]
            a, b = _where(e.source, groups), _where(e.target, groups)
            if a and b and a[0] > b[0]:
                why = f"layer {b[1]} is above {a[1]}"
            elif a and b and a[0] == b[0] and a[1] != b[1] and "|" in contract["layers"][a[0]]:
                why = f"{a[1]} and {b[1]} are independent"
        elif kind == "independence":
            a = next((p for p in contract["modules"] if _inside(e.source, p)), None)
            b = next((p for p in contract["modules"] if _inside(e.target, p)), None)
            if a and b and a != b:
                why = f"{a} and {b} are independent"
        elif kind == "forbidden":
            if any(_inside(e.source, p) for p in contract["source_modules"]) and \
                    any(_inside(e.target, p) for p in contract["forbidden_modules"]):
                why = "forbidden"
        else:
            raise ValueError(f"contract type {kind!r}")
        if why:
            where = " (inside a function)" if e.in_function else ""
            out.append(f"{e.source}:{e.line} imports {e.target}{where}: {why}")
    return out
