"""The pipeline's first look at a file: can it hold anything to migrate? Bytes only, no parse.

A `--check` over a big tree must cost a small fraction of a libcst parse, so every file is first
searched for the words the table says any migration needs (codemods/table/); only a file that
has them is decoded, parsed and analysed.
"""

from __future__ import annotations

from codemods import table


def may_contain_targets(data: bytes, target: table.Target) -> bool:
    """The text prefilter: whether a file can contain anything to migrate (derived from the table).

    Plain substring tests (memchr-fast in CPython) rather than one regex with `.*?`, which would
    rescan the file for every occurrence of its first word.
    """
    if any(word.encode() in data for word in table.PREFILTER_ALONE[target]):
        return True
    if (
        target in table.DTYPE_NAME_TARGETS
        and table.DTYPE_NAME_WORD.encode() in data
        and any(word.encode() in data for word in table.MIXED_PRECISION_WORDS)
    ):
        return True  # LSO018
    if table.CONTRIB_WORD.encode() in data and b"mixed_precision" in data:
        return True  # LSO028: TF 1's tf.contrib.mixed_precision
    if any(word.encode() in data for word in table.LR_WORDS) and any(
        word.encode() in data for word in table.MIXED_PRECISION_WORDS
    ):
        return True  # LSO026: Keras 2's lr= in a Keras optimizer's constructor or config
    if (
        target != "keras2"
        and b"mixed_float16" in data
        and any(word.encode() in data for word in table.SURFACE_WORDS)
    ):
        return True  # LSO019: Keras 2's optimizer forms on compile()'s loss scale optimizer
    return all(word.encode() in data for word in table.PREFILTER_ALL) and any(
        word.encode() in data for word in table.PREFILTER_ANY
    )
