"""Keras 3 only: one loss scale optimizer shared by several models, as Keras 2 shared it.

Keras 2's optimizers (TF 2.4-2.10's, and TF 2.11-2.15's `legacy` ones) created a variable's slots
at its first step, so one optimizer could train several models: a GAN whose generator and
discriminator are both compiled with one loss scale optimizer trains both, with one step counter
(`iterations`, which Adam's bias correction reads), one loss scale, and each variable's own
slots. A Keras 3 optimizer creates the slots of the variables it is built with, at its first step,
and refuses any other ("Unknown variable: ..."), at the second model's first step (TF 2.11-2.15's
default optimizers did too: KeyError).

`add_unseen_variables` gives a built Keras 3 optimizer what Keras 2 would have created at that
step: the slots of each variable it has not seen, made by the optimizer's own `build`, so with
its own initial values; its step counter and everything else stay as they are. The shim's class
calls it in `apply` (`update_rule.py`), so a model trained after another keeps training on the
same optimizer, and the numbers are the ones the optimizer gives when built for both models at
once (Keras 3's own way to share one, `optimizer.build(a_variables + b_variables)`), which are
Keras 2's (tests/old_code/test_gan_project.py).

Keras 3 has no public way to add variables to a built optimizer. Its `build(variables)` is run on
the unseen variables alone, and what it assigns is appended to what the optimizer held: the list
of variables it knows and their indices (private `_trainable_variables`,
`_trainable_variables_indices`, Keras 3.0-3.15) and each list of slots, one per variable. An
optimizer whose `build` assigns anything else (Nadam's running momentum product), or that averages
or accumulates over all its variables (`use_ema`, `gradient_accumulation_steps`), is left as it
was and refused with `NotShareable`, which says what to do instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import keras
import tensorflow as tf

FIX = (
    "Keras 2's optimizers created each variable's slots at its first step, so one optimizer "
    "could train several models; a Keras 3 optimizer only trains the variables it was built for. "
    "Build it for all of them before training, optimizer.build(model_a.trainable_variables + "
    "model_b.trainable_variables) (the same numbers: one step counter, one loss scale), or give "
    "each model an optimizer of its own (other numbers: a step counter and loss scale each)"
)


class NotShareable(ValueError):
    """A built optimizer met variables it was not built for, and cannot add them."""


def add_unseen_variables(optimizer: Any, variables: Sequence[Any]) -> None:
    """Give a built Keras 3 `optimizer` the slots of those of `variables` it has not seen."""
    indices = optimizer._trainable_variables_indices
    unseen: dict[Any, Any] = {}
    for variable in variables:
        key = optimizer._var_key(variable)
        if key not in indices:
            unseen.setdefault(key, variable)
    if not unseen:
        return
    new = list(unseen.values())
    for setting in ("use_ema", "gradient_accumulation_steps"):
        if getattr(optimizer, setting, None):
            _refuse(optimizer, new, f"it has {setting}={getattr(optimizer, setting)!r}")
    before = dict(vars(optimizer))
    known = len(optimizer._trainable_variables)
    variables_before = len(optimizer._variables)
    optimizer.built = False
    try:
        with tf.init_scope(), keras.name_scope(optimizer.name, caller=optimizer):
            optimizer.build(new)
        appended = _appended(optimizer, before, known, len(new))
    except BaseException as error:
        _put_back(optimizer, before, unseen, variables_before)
        if isinstance(error, _Unexpected):
            _refuse(optimizer, new, str(error))
        raise
    finally:
        optimizer.built = True
    for name, (old, added) in appended.items():
        if isinstance(old, list):  # the object Keras tracks under this name, extended
            object.__setattr__(optimizer, name, old)
            old.extend(added)
        else:  # a tuple (the variables `build` was given), which Keras does not track
            object.__setattr__(optimizer, name, [*old, *added])
    for offset, key in enumerate(unseen):
        indices[key] = known + offset


class _Unexpected(Exception):
    pass


def _appended(
    optimizer: Any, before: dict[str, Any], known: int, added: int
) -> dict[str, tuple[Any, Any]]:
    """{attribute: (the list it held, what build(new) put there)}, for each list (or tuple)
    `build` replaced with one of a length per new variable; _Unexpected for anything else."""
    appended = {}
    for name, value in vars(optimizer).items():
        old = before.get(name)
        if value is old or name == "built":
            continue
        if isinstance(old, (list, tuple)) and isinstance(value, (list, tuple)):
            if len(old) == known and len(value) == added:
                appended[name] = (old, list(value))
                continue
            if not old and not value:  # a slot list this optimizer's settings leave empty
                appended[name] = (old, [])
                continue
        raise _Unexpected(f"its build() keeps {name!r} for all its variables together")
    return appended


def _put_back(
    optimizer: Any, before: dict[str, Any], unseen: dict[Any, Any], variables_before: int
) -> None:
    for name in set(vars(optimizer)) - set(before):
        object.__delattr__(optimizer, name)
    for name, value in before.items():
        if vars(optimizer).get(name) is not value:
            object.__setattr__(optimizer, name, value)
    for key in unseen:
        optimizer._trainable_variables_indices.pop(key, None)
    del optimizer._variables[variables_before:]


def _refuse(optimizer: Any, new: list[Any], why: str) -> None:
    names = ", ".join(getattr(v, "path", None) or v.name for v in new[:3])
    more = f" and {len(new) - 3} more" if len(new) > 3 else ""
    raise NotShareable(
        f"{type(optimizer).__name__} was built for other variables than {names}{more} (another "
        f"model's, which shares it), and cannot add them: {why}. {FIX}"
    )
