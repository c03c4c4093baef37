"""The pipeline's first look at a file: can it hold anything to migrate? Bytes only, no parse.

A `--check` over a big tree must cost a small fraction of a libcst parse, so every file is first
searched for the words the table says any migration needs (codemods/table/); only a file that
has them is decoded, parsed and analysed. Plain substring tests (memchr-fast in CPython) rather
than one regex with `.*?`, which would rescan the file for every occurrence of its first word.
"""

from __future__ import annotations

from codemods import table


def _encoded(words: tuple[str, ...] | frozenset[str]) -> tuple[bytes, ...]:
    return tuple(word.encode() for word in sorted(words))


_ALONE = {target: _encoded(table.PREFILTER_ALONE[target]) for target in table.TARGETS}
_MIXED_PRECISION = _encoded(table.MIXED_PRECISION_WORDS)
_LR = _encoded(table.LR_WORDS)
_SURFACE = _encoded(table.SURFACE_WORDS)
_ALL = _encoded(table.PREFILTER_ALL)
_ANY = _encoded(table.PREFILTER_ANY)
_DTYPE_NAME = table.DTYPE_NAME_WORD.encode()
_CONTRIB = table.CONTRIB_WORD.encode()


def _needed(target: table.Target) -> tuple[bytes, ...]:
    """Words one of which every way into `may_contain_targets` needs (a word that contains
    another of them left out): tested first, they turn most files away after a few scans."""
    groups = [_ALONE[target], _MIXED_PRECISION, (b"mixed_precision",), _ANY]
    if target != "keras2":
        groups.append((b"mixed_float16",))
    words = {word for group in groups for word in group}
    return tuple(sorted(w for w in words if not any(o != w and o in w for o in words)))


# Shorter words many needed ones contain: a file without any of these has none of those, and four
# scans of a big notebook cost half of eight.
_SHORTER = (b"mixed_", b"olicy", b"loss_scale", b"LossScale")


def _scanned(needed: tuple[bytes, ...]) -> tuple[bytes, ...]:
    """The words to scan for: the shorter words that cover some needed one, and each needed word
    none of them covers. A file has one of these whenever it has a needed word."""
    shorter = [short for short in _SHORTER if any(short in word for word in needed)]
    return (*shorter, *(w for w in needed if not any(short in w for short in shorter)))


_NEEDED = {target: _scanned(_needed(target)) for target in table.TARGETS}


def may_contain_targets(data: bytes, target: table.Target) -> bool:
    """Whether a file can contain anything to migrate (derived from the table)."""
    if not any(word in data for word in _NEEDED[target]):
        return False
    if any(word in data for word in _ALONE[target]):
        return True
    if (
        target in table.DTYPE_NAME_TARGETS
        and _DTYPE_NAME in data
        and any(word in data for word in _MIXED_PRECISION)
    ):
        return True  # LSO018
    if _CONTRIB in data and b"mixed_precision" in data:
        return True  # LSO028: TF 1's tf.contrib.mixed_precision
    if any(word in data for word in _LR) and any(word in data for word in _MIXED_PRECISION):
        return True  # LSO026: Keras 2's lr= in a Keras optimizer's constructor or config
    if target != "keras2" and b"mixed_float16" in data and any(word in data for word in _SURFACE):
        return True  # LSO019: Keras 2's optimizer forms on compile()'s loss scale optimizer
    return all(word in data for word in _ALL) and any(word in data for word in _ANY)
