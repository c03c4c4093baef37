"""mkdocs hook: the rule catalogue page is rendered from `codemods.table` at build time.

`codemods.io.catalogue.render()` is the same function that writes docs/rules.md (and the codemod's
tests check that file against it), so the page always shows the table the code runs on.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

PAGE = "rules.md"


def _render() -> str:
    from codemods.io import catalogue

    return catalogue.render()


def on_files(files: Files, config: Any) -> Files:
    if files.get_file_from_path(PAGE) is None:
        files.append(File.generated(config, PAGE, content=_render()))
    return files


def on_page_read_source(page: Any, config: Any) -> str | None:
    if page.file.src_uri == PAGE:
        return _render()
    return None
