"""Render docs/architecture.md from the code: each package's layout and a picture of its imports.

Reads the sources only (`ast`, no import of either package, no TensorFlow):

    python docs/scripts/architecture.py > docs/architecture.md

tests/test_architecture.py checks that the committed page is this script's output, and uses
`import_graph`, `cycles`, `line_counts`, `upward_imports` and `top_level_modules` to hold both
packages to the house rules: no import circle, no module over 400 lines, stages import only
downward (STAGES, top to bottom), at most 4 modules beside `__init__`/`__main__` at the top.

An import counts wherever it is written (a function-level import is a dependency all the same,
only a later one), except under `if TYPE_CHECKING:`, which never runs. Only imports of the
package's own modules count.
"""

from __future__ import annotations

import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("codemods", "compat_lso")

# What each package's picture is about, in the page's words.
_INTRO = {
    "codemods": (
        "The codemod (`compat-lso-migrate`, `python -m libcst.tool codemod`), one folder a "
        "stage. Data flows one way: the CLI and `io/` read the files, `apply/` parses each "
        "module, asks `meaning/` what it means, runs `rules/` and splices their edits, and "
        "`sweep/` reads the result for anything left; each stage hands its result down, and "
        "what several stages share (`source`: the text, edits, findings, the result; "
        "`table/`: every old name and rule) sits below them all."
    ),
    "compat_lso": (
        "The shim, which never imports libcst: the Keras 2 and Keras 3 generations of the "
        "loss scale optimizer, what `install()` puts in place on each, the TF 2.1-2.3 "
        "experimental API, checkpoints and the CI helpers."
    ),
}


# Each package's stages, top to bottom: a folder or a top-level module each, with what it answers.
# A stage imports only the stages below it; a folder or module not listed here fails the test
# (tests/test_architecture.py), so that each new one is placed in the pipeline on purpose.
STAGES: dict[str, list[tuple[str, str]]] = {
    "codemods": [
        ("__main__", "`python -m codemods`"),
        ("commands", "the same migration for `python -m libcst.tool codemod`"),
        ("cli", "the command: arguments, the run over the files, exit codes"),
        ("guarantee", "the guarantee as a function: nothing that breaks is left unreported"),
        ("io", "in and out: discovery, prefilter, notebooks, writes, patches, formats, positions"),
        ("apply", "applying the edits: run the rules, settle imports, the shim's import, splice"),
        ("sweep", "what is left: what the target lacks that no rule rewrote or reported"),
        ("rules", "what changes: one module per rule, driven by the table"),
        ("meaning", "what the code means: names, assignments, values, gradients, version gates"),
        ("table", "every old spelling and rule per target (data)"),
        ("source", "what the stages hand each other: the text, edits, findings, the result"),
        ("__init__", "the package's docstring; imports nothing"),
    ],
    "compat_lso": [
        ("__main__", "`python -m compat_lso`: run, verify, trace, autoinstall, check-config"),
        ("_startup", "the start-up hook files of 0.1.0 import this"),
        ("pytest_plugin", "the CI helpers as a pytest fixture"),
        ("verify", "old against migrated: sides, comparison, report"),
        ("trace", "one JSON line per optimizer step"),
        ("installer", "`run` and install(): the removed names back, compile()'s wrapping"),
        ("audit", "`run --audit`: where Keras 3's own class would train differently"),
        ("experimental", "the deprecated experimental module"),
        ("legacy", "the TF 2.1-2.3 experimental API: LossScale classes, policies"),
        ("checkpoint", "old checkpoints"),
        ("testing", "config equivalence for CI"),
        ("__init__", "the public names"),
        ("_backend", "the one backend switch: Keras 2 or Keras 3"),
        ("keras3", "the shim class on Keras 3"),
        ("keras2", "the shim class on Keras 2"),
        ("core", "shared by every generation: arguments, configs, versions, forms, import hook"),
    ],
}


def stage_of(package: str, module: str) -> str:
    """The stage a module belongs to: its folder, or itself at the top (`__init__` for the
    package's own)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(package: str, root: pathlib.Path = ROOT) -> list[str]:
    """Every import that goes up or sideways between stages, and every stage not in STAGES."""
    order = {name: rank for rank, (name, _) in enumerate(STAGES[package])}
    graph = import_graph(package, root)
    wrong = sorted(
        {f"{stage_of(package, m)}: not in STAGES" for m in graph}
        - {f"{name}: not in STAGES" for name in order}
    )
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = stage_of(package, module), stage_of(package, target)
            if here != there and here in order and there in order and order[here] >= order[there]:
                wrong.append(f"{module} -> {target}")
    return wrong


def top_level_modules(package: str, root: pathlib.Path = ROOT) -> list[str]:
    """The modules at the package's top, besides `__init__.py` and `__main__.py`."""
    return sorted(
        path.stem
        for path in (root / package).glob("*.py")
        if path.stem not in ("__init__", "__main__")
    )


def modules(package: str, root: pathlib.Path = ROOT) -> dict[str, pathlib.Path]:
    """Dotted module name -> its file, for every module of `package` under `root`."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
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


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in `tree`, skipping the bodies of `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
            continue
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph(package: str, root: pathlib.Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    known = modules(package, root)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                prefix = here[: len(here) - node.level + 1]
                base = ".".join([*prefix, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in known else base)
        graph[name] = {target for target in targets if target in known and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each strongly connected group of two or more modules, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm; packages are small, recursion is fine
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def line_counts(package: str, root: pathlib.Path = ROOT) -> dict[str, int]:
    return {
        name: len(path.read_text(encoding="utf-8").splitlines())
        for name, path in modules(package, root).items()
    }


# -- the page --------------------------------------------------------------------------------------


def _group(name: str) -> str:
    """The node a module is drawn as: a module of the package's top level, or its folder."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else name


def _label(package: str, group: str, folders: set[str]) -> str:
    short = group.removeprefix(package + ".") if group != package else "__init__"
    return short + "/" if group in folders else short


def _reduced(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Only the arrows no longer path implies: `a -> c` goes when `a -> b -> c` is drawn."""

    def reaches(start: str, goal: str, skip: tuple[str, str]) -> bool:
        seen, todo = {start}, [start]
        while todo:
            node = todo.pop()
            for successor in graph.get(node, ()):
                if (node, successor) == skip or successor in seen:
                    continue
                if successor == goal:
                    return True
                seen.add(successor)
                todo.append(successor)
        return False

    return {
        node: {t for t in targets if not reaches(node, t, (node, t))}
        for node, targets in graph.items()
    }


def mermaid(package: str, root: pathlib.Path = ROOT) -> list[str]:
    """The package's imports as a mermaid flowchart: a folder is one node; an arrow `a --> b`
    reads "a uses b" (directly, or through the modules drawn between them)."""
    graph = import_graph(package, root)
    folders = {_group(n) for n in graph if _group(n) != n or (root / n.replace(".", "/")).is_dir()}
    folders.discard(package)
    grouped: dict[str, set[str]] = {}
    for name, targets in graph.items():
        source = _group(name)
        grouped.setdefault(source, set()).update(
            _group(t) for t in targets if _group(t) != source and _group(t) != package
        )
    grouped.pop(package, None)  # the package's __init__: its public names, drawn apart
    reduced = _reduced(grouped)
    ids = {group: re.sub(r"\W", "_", group) for group in grouped}
    lines = ["```mermaid", "flowchart TD"]
    for group in sorted(grouped):
        lines.append(f'    {ids[group]}["{_label(package, group, folders)}"]')
    for group in sorted(reduced):
        for target in sorted(reduced[group]):
            lines.append(f"    {ids[group]} --> {ids[target]}")
    lines.append("```")
    return lines


def _summary(path: pathlib.Path) -> str:
    """The first sentence of a module's docstring, for the layout table."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    match = re.match(r"(.+?\.)(\s|$)", paragraph)
    sentence = match.group(1) if match else paragraph
    return sentence.replace("|", "\\|") or "(no docstring)"


def layout(package: str, root: pathlib.Path = ROOT) -> list[str]:
    lines = ["| module | what it holds |", "| --- | --- |"]
    for path in modules(package, root).values():
        shown = path.relative_to(root).as_posix()
        lines.append(f"| `{shown}` | {_summary(path)} |")
    return lines


def render(root: pathlib.Path = ROOT) -> str:
    lines = [
        "# Architecture",
        "",
        "Generated from the code by `python docs/scripts/architecture.py > "
        "docs/architecture.md`; do not edit by hand. tests/test_architecture.py checks that "
        "this page is up to date, that neither package has an import circle, that no "
        "module is over 400 lines, and that each stage imports only the stages below it.",
        "",
        "In each picture a box is a module, or a folder drawn as one (`rules/`), and an arrow "
        "`a --> b` means that `a` imports `b`, directly or through the boxes between them: an "
        "arrow that a longer path implies is left out, so the picture reads top to bottom as "
        "the order of the layers.",
    ]
    for package in PACKAGES:
        lines += ["", f"## `{package}/`", "", _INTRO[package], ""]
        lines += ["| stage, top to bottom | what it holds |", "| --- | --- |"]
        lines += [f"| `{name}` | {what} |" for name, what in STAGES[package]]
        lines += ["", *mermaid(package, root)]
        lines += ["", *layout(package, root)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
