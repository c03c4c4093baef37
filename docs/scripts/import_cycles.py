"""Print the import cycles inside a package, read from the source (nothing is imported).

    python docs/scripts/import_cycles.py [--type-checking] [PACKAGE_DIR ...]
    (default: compat_lso codemods)

Every `import` and `from ... import` counts, at module level and inside functions (an import
moved into a function to dodge a cycle is still a cycle), and `importlib.import_module("a.b")`
with a literal name. Imports under `if TYPE_CHECKING:` never run and are left out, unless
`--type-checking` is given. `from package import name` is an edge to
`package.name` where that is a module, else to the package's `__init__`. A package's `__init__`
running before its modules is not counted as an edge. Exit status 1 if there is a cycle.
Imports inside functions are listed too, each with the line it is on, so that their reasons can
be checked by eye.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path


def modules(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under `package_dir`."""
    root = package_dir.parent
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


WITH_TYPE_CHECKING = "--type-checking" in sys.argv


def _imports(
    tree: ast.AST, in_function: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node) and not WITH_TYPE_CHECKING:
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), in_function)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            # `importlib.import_module("a.b")` with a literal name: the same as `import a.b`.
            yield ast.Import(names=[ast.alias(node.args[0].value)], lineno=node.lineno), in_function
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        yield from _imports(node, inside)


def edges(known: dict[str, Path]) -> dict[str, dict[str, list[tuple[int, bool]]]]:
    """module -> imported module -> [(line, inside a function)], for modules in `known`."""
    graph: dict[str, dict[str, list[tuple[int, bool]]]] = {name: {} for name in known}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        for node, lazy in _imports(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")
                    anchor = anchor if is_package else anchor[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.append(submodule if submodule in known else base)
            for imported in targets:
                # `import a.b.c` imports a.b.c; the nearest module of ours that the name is in.
                target = imported
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].setdefault(target, []).append((node.lineno, lazy))
    return graph


def cycles(graph: dict[str, dict[str, list[tuple[int, bool]]]]) -> list[list[str]]:
    """Each strongly connected component of more than one module (Tarjan), "|", one cycle in it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [
        [*component, "|", *_one_cycle(graph, set(component), component[0])]
        for component in components
    ]


def _one_cycle(
    graph: dict[str, dict[str, list[tuple[int, bool]]]], members: set[str], start: str
) -> list[str]:
    # Breadth-first from `start` back to itself, inside the component.
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node]):
            if target == start:
                return [*paths[node], start]
            if target in members and target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    return [start]


def main(argv: list[str]) -> int:
    found_cycle = False
    for package_dir in [Path(a) for a in argv if not a.startswith("--")] or [
        Path("compat_lso"),
        Path("codemods"),
    ]:
        known = modules(package_dir)
        graph = edges(known)
        found = cycles(graph)
        found_cycle = found_cycle or bool(found)
        count = sum(len(targets) for targets in graph.values())
        print(
            f"{package_dir.name}: {len(known)} modules, {count} import edges, {len(found)} cycles"
        )
        for found_component in found:
            split = found_component.index("|")
            print("  cycle among: " + ", ".join(found_component[:split]))
            print("    e.g. " + " -> ".join(found_component[split + 1 :]))
        for name in sorted(graph):
            for target, uses in sorted(graph[name].items()):
                lines = [str(line) for line, lazy in uses if lazy]
                if lines:
                    print(f"  inside a function: {name} -> {target} (line {', '.join(lines)})")
    return 1 if found_cycle else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
