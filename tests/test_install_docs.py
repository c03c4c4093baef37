"""Every install line in the README and the docs works from a clone, and names refs that exist.

compat-lso is not on a package index, so `pip install compat-lso` cannot work: the README and docs
install from a clone (`pip install .`, `pip install ".[extra]"`, a checkout at `./compat-lso`) or
from the repository's URL at the release tag. Extras must be declared in setup.cfg, and every tag
the docs name (pre-commit's `rev`, a workflow's `ref`, a git URL's `@`) is `v` + the version the
package reports, which is the tag a release creates. `nox -s package` installs the built wheel
and sdist into bare venvs and runs both commands.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import compat_lso

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PAGES = [p for p in PAGES if p.name != "changelog.md"]
TAG = f"v{compat_lso.__version__}"

_config = configparser.ConfigParser()
_config.read(ROOT / "setup.cfg")
EXTRAS = set(_config["options.extras_require"])
NOXFILE = (ROOT / "noxfile.py").read_text()

# What may follow `pip install`: the clone, or a checkout beside the user's code, with extras;
# or the repository's URL at the release tag.
_FROM_A_CLONE = re.compile(r'^"?(\.|\./compat-lso)(\[(?P<extra>[a-z]+)\])?"?$')
_FROM_THE_URL = re.compile(r'^"compat-lso(\[(?P<extra>[a-z]+)\])? @ git\+URL@(?P<tag>[^"]+)"$')
# A pin of a library compat-lso runs on, from the package index (docs/support.md's reproductions).
_A_PINNED_LIBRARY = re.compile(r"^(tensorflow|keras|tf-keras)==[0-9.]+$")


def _install_lines() -> list[tuple[str, str]]:
    lines = []
    for page in PAGES:
        # `!pip install` / `%pip install` are notebook cells the codemod docs quote, not installs.
        text = page.read_text()
        for match in re.finditer(r"(?<![!%])pip install ([^`\n#]*?)\s*(?:`|#|\n|$)", text):
            lines.append((page.name, match[1].strip()))
    return lines


INSTALL_LINES = _install_lines()


def test_the_readme_and_docs_have_install_lines():
    assert {page for page, _ in INSTALL_LINES} >= {"README.md", "index.md"}


@pytest.mark.parametrize(("page", "arguments"), INSTALL_LINES, ids=[a for _, a in INSTALL_LINES])
def test_each_install_line_works_from_a_clone(page, arguments):
    into = re.match(r"^-p \S+ (.+)$", arguments)  # `uv pip install -p ENV ...`: into that env
    if into:
        arguments = into[1]
    if arguments.startswith("-"):  # pip's own options (--upgrade pip, -e .) are not installs of us
        pytest.fail(f"{page}: unexpected pip option in `pip install {arguments}`")
    pinned = _A_PINNED_LIBRARY.match(arguments)
    if pinned:
        assert f'"{arguments}"' in NOXFILE, f"{page}: `pip install {arguments}`: not a matrix pin"
        return
    match = _FROM_A_CLONE.match(arguments) or _FROM_THE_URL.match(arguments)
    assert match, f"{page}: `pip install {arguments}` does not install from a clone or the URL"
    if match["extra"]:
        assert match["extra"] in EXTRAS, f"{page}: extra {match['extra']!r} is not in setup.cfg"
    if "tag" in match.groupdict():
        assert match["tag"] == TAG, f"{page}: names {match['tag']}, the release tag is {TAG}"


def test_refs_in_the_docs_are_the_release_tag():
    refs = [
        (page.name, ref)
        for page in PAGES
        for ref in re.findall(r"\b(?:rev|ref): (v[0-9][^\s,}]*)", page.read_text())
    ]
    assert refs, "no pre-commit rev or workflow ref found"
    assert all(ref == TAG for _, ref in refs), refs


# `pip install ".[tf]"  # ... TensorFlow 2.12-2.21`: the range a page promises for the tf extra.
_TF_EXTRA_RANGE = re.compile(r'pip install "?\.\[tf\]"?[^\n]*?TensorFlow (\d+\.\d+)-(\d+\.\d+)')


def test_the_tf_extras_range_in_the_docs_is_setup_cfgs():
    claims = [
        (page.name, match[1], match[2])
        for page in PAGES
        for match in _TF_EXTRA_RANGE.finditer(page.read_text())
    ]
    assert claims, 'no page says which TensorFlow `pip install ".[tf]"` gives'
    requirement = Requirement(_config["options.extras_require"]["tf"].strip())
    assert requirement.name == "tensorflow"
    for page, low, high in claims:
        major, minor = (int(part) for part in high.split("."))
        low_major, low_minor = (int(part) for part in low.split("."))
        # Exactly the minors from `low` to `high`, every patch release of each.
        assert requirement.specifier.contains(f"{low}.0"), (page, low, requirement)
        assert not requirement.specifier.contains(f"{low_major}.{low_minor - 1}.99"), (
            page,
            low,
            requirement,
        )
        assert requirement.specifier.contains(f"{high}.99"), (page, high, requirement)
        assert not requirement.specifier.contains(f"{major}.{minor + 1}.0"), (
            page,
            high,
            requirement,
        )
