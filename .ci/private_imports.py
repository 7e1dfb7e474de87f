"""Fail on imports of an underscore name from another module: `from X import _name`.

A name that starts with one underscore is private to the module that defines it; another
module that needs it needs a public name (ruff's PLC2701 does not help here: it exempts
imports within the same top-level package, i.e. all of ours). Exempt: dunder names
(`__version__`), and private modules or packages imported as such (`from .. import _core`,
`from ._core import jit`), which are private to their parent package, not to a module.

    python .ci/private_imports.py [PATH ...]      # default: src/attnphase

Prints one line per import, `path:line: from MODULE import NAME`, and exits 1 if there is any.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path


def module_parts(path: Path) -> tuple[list[str], Path] | None:
    """The dotted name of `path` as a list, and the directory holding its top-level package
    (None for a file outside a package)."""
    parts = [path.stem] if path.name != "__init__.py" else []
    parent = path.parent
    while (parent / "__init__.py").exists():
        parts.insert(0, parent.name)
        parent = parent.parent
    return (parts, parent) if parts else None


def resolve(node: ast.ImportFrom, path: Path) -> tuple[str, Path | None]:
    """The absolute module name of a `from ... import` and the directory of its top-level
    package when the import is relative (None: absolute, looked up on the search path)."""
    if not node.level:
        return node.module or "", None
    found = module_parts(path)
    if found is None:
        return "." * node.level + (node.module or ""), None
    parts, root = found
    package = parts if path.name == "__init__.py" else parts[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else [])), root


def is_module(dotted: str, roots: list[Path]) -> bool:
    """True if `dotted` is a module or package under one of `roots`."""
    rel = Path(*dotted.split("."))
    return any(
        (r / rel).with_suffix(".py").exists() or (r / rel / "__init__.py").exists() for r in roots
    )


def findings(path: Path, roots: list[Path]) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        module, root = resolve(node, path)
        search = [root] if root is not None else roots
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                continue
            if is_module(f"{module}.{name}", search):
                continue  # a private module imported as such
            shown = "." * node.level + (node.module or "")
            out.append(f"{os.path.relpath(path)}:{node.lineno}: from {shown} import {name}")
    return out


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parents[1]
    targets = [Path(a) for a in argv] or [here / "src" / "attnphase"]
    roots = [here / "src"]
    files = sorted(
        f
        for t in targets
        for f in ([t] if t.is_file() else t.rglob("*.py"))
        if "__pycache__" not in f.parts
    )
    found = [line for f in files for line in findings(f, roots)]
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} import(s) of a private name from another module", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
