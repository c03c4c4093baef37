"""`import compat_lso` for a module the shim target rewrote, placed where isort or ruff would.

The import joins the module's import block in the third-party section (after `from __future__`,
after the docstring and the standard library), sorted among the plain `import x` lines as ruff's
isort rules sort them (by module name, ignoring case; `import x` before `from x import y`). Where
the block has no third-party import it starts that section after the standard library's imports.
A module whose first import block holds only the standard library and sets something up before
importing TensorFlow (`import os; os.environ[...] = ...; import tensorflow as tf`) gets it next to
`import tensorflow`: the block holding the first third-party import is the one it joins.

`compat_lso.install()`, where a rewrite needs it (`Fix.installs`: what `python -m compat_lso run`
does, for compile()'s wrapping and a policy's loss scale), goes right after that block, once.
"""

from __future__ import annotations

import ast
import sys

from codemods import table
from codemods.meaning.names import Analysis
from codemods.rules.compile_loss_scale_optimizer import installs_at_start

__all__ = ["has_shim_import", "install_edit", "installs_at_start", "shim_import_edit"]
from codemods.source import Edit, Source, end_of

_FUTURE, _STANDARD, _THIRD_PARTY, _LOCAL = range(4)


def has_shim_import(names: Analysis) -> bool:
    """Whether the module already binds the shim's module at module level (`import compat_lso`)."""
    return any(
        isinstance(b.node, ast.alias)
        and b.name == table.SHIM_MODULE
        and b.qualified == table.SHIM_MODULE
        for b in names.module_scope.bindings.get(table.SHIM_MODULE, [])
    )


def shim_import_edit(source: Source, tree: ast.Module) -> Edit:
    """The edit that inserts `import compat_lso` into the module's import block."""
    module = table.SHIM_MODULE
    statement = f"import {module}"
    blocks = _import_blocks(tree.body)
    block = next((b for b in blocks if any(_section(s) == _THIRD_PARTY for s in b)), None)
    if block is not None:
        third_party = [s for s in block if _section(s) == _THIRD_PARTY]
        plain = [s for s in third_party if isinstance(s, ast.Import)]
        later = next((s for s in plain if _sort_key(s) > module.lower()), None)
        if later is not None:
            return _before(source, later, statement)
        if plain:
            return _after(source, plain[-1], statement)
        return _before(source, third_party[0], statement)  # `from x import y` sorts last
    if blocks:
        # No third-party section yet: it starts after the standard library's, a blank line apart.
        standard = [s for s in blocks[0] if _section(s) == _STANDARD]
        if standard:
            return _after(source, standard[-1], "\n" + statement)
        return _before(source, blocks[0][0], statement + "\n")  # only local imports follow
    return _at_the_top(source, tree.body, statement)


def install_edit(source: Source, tree: ast.Module) -> Edit:
    """`compat_lso.install()` after the import block `import compat_lso` joins (or at the top)."""
    statement = f"{table.SHIM_MODULE}.install()"
    blocks = _import_blocks(tree.body)
    block = next((b for b in blocks if any(_section(s) == _THIRD_PARTY for s in b)), None)
    if block is None and blocks:
        block = blocks[0]
    if block is not None:
        # At the end of the last import's line, before its line break: in a notebook that line
        # break is where the import's cell ends, and an insertion after it opens the next cell.
        end_line = end_of(block[-1])[0]
        if end_line >= len(source.line_starts):
            return Edit(len(source.text), len(source.text), 2 * source.newline + statement)
        position = source.line_starts[end_line]
        while position > 0 and source.text[position - 1] in "\r\n":
            position -= 1
        return Edit(position, position, 2 * source.newline + statement)  # a blank line before
    return _at_the_top(source, tree.body, statement)


_Import = ast.Import | ast.ImportFrom


def _import_blocks(body: list[ast.stmt]) -> list[list[_Import]]:
    """The runs of module-level imports (`from __future__` aside) no other statement splits."""
    blocks: list[list[_Import]] = []
    current: list[_Import] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _section(node) != _FUTURE:
            current.append(node)
            continue
        if current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def _section(node: _Import) -> int:
    if isinstance(node, ast.ImportFrom):
        if node.level:
            return _LOCAL
        if node.module == "__future__":
            return _FUTURE
        name = node.module or ""
    else:
        name = node.names[0].name
    return _STANDARD if name.partition(".")[0] in sys.stdlib_module_names else _THIRD_PARTY


def _sort_key(node: ast.Import) -> str:
    return node.names[0].name.lower()


def _before(source: Source, node: ast.stmt, statement: str) -> Edit:
    statement = statement.replace("\n", source.newline)
    position = source.line_starts[node.lineno - 1]
    return Edit(position, position, statement + source.newline)


def _after(source: Source, node: ast.stmt, statement: str) -> Edit:
    statement = statement.replace("\n", source.newline)
    end_line = end_of(node)[0]
    if end_line < len(source.line_starts):  # a line break follows it
        position = source.line_starts[end_line]
        return Edit(position, position, statement + source.newline)
    return Edit(len(source.text), len(source.text), source.newline + statement + source.newline)


def _at_the_top(source: Source, body: list[ast.stmt], statement: str) -> Edit:
    """No import block: after the docstring and `from __future__`, or the leading comments; code
    right below is set apart by the blank lines ruff puts after an import block."""
    after: ast.stmt | None = None
    following: ast.stmt | None = None
    for index, node in enumerate(body):
        docstring = (
            index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if docstring or (isinstance(node, ast.ImportFrom) and _section(node) == _FUTURE):
            after = node
        else:
            following = node
            break
    if after is not None:
        next_line = end_of(after)[0] + 1
    else:  # after the leading comments (a shebang, an encoding cookie, a licence)
        next_line = 1
        while next_line <= len(source.line_starts) and source.line(next_line).lstrip().startswith(
            "#"
        ):
            next_line += 1
    if following is not None and following.lineno == next_line:
        definition = isinstance(following, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        statement += "\n" * (2 if definition else 1)
    if after is not None:
        # After `from __future__` the third-party section starts, a blank line apart.
        future = isinstance(after, ast.ImportFrom)
        return _after(source, after, ("\n" if future else "") + statement)
    statement = statement.replace("\n", source.newline)
    if next_line > len(source.line_starts):
        position = len(source.text)
    else:
        position = source.line_starts[next_line - 1]
    prefix = "" if position == 0 or source.text[position - 1] in "\r\n" else source.newline
    return Edit(position, position, prefix + statement + source.newline)
