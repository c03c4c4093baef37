"""install() on Keras 3 gives every optimizer Keras 2's `lr` (keras3/keras2_lr.py): `lr=` in the
constructor (and in a config) is the learning rate, `opt.lr` reads and sets it, each with a
DeprecationWarning at the user's line; code that never says `lr` sees no change, and uninstall()
takes it back. On Keras 2 backends nothing is replaced.

The reference is Keras 2's own behaviour, measured on TF 2.15 and written down here: TF 2.4-2.10's
optimizers, like TF 2.15's `tf.keras.optimizers.legacy.SGD(learning_rate=0.1, lr=0.7)`, took
`kwargs.get("lr", learning_rate)` (0.7: `lr` wins); `opt.lr` was the tf.Variable behind the rate,
and `opt.lr = x` or `K.set_value(opt.lr, x)` set it. The GAN project
(test_gan_project.py) checks `Adam(lr=...)` end to end against TF 2.15's numbers.
"""

from __future__ import annotations

import inspect
import pathlib
import warnings

import pytest
import tensorflow as tf

import compat_lso
from tests.shim.backend import IS_KERAS_2, number

keras3_only = pytest.mark.skipif(IS_KERAS_2, reason="Keras 2 has `lr` itself: nothing replaced")
THIS_FILE = pathlib.Path(__file__).name
# Every optimizer Keras 3 exports but the wrappers, which take no learning rate of their own.
_WRAPPERS = ("LossScaleOptimizer", "MultiOptimizer", "Optimizer")


def _classes() -> list[type]:
    import keras

    return [
        value
        for name, value in vars(keras.optimizers).items()
        if isinstance(value, type)
        and issubclass(value, keras.optimizers.Optimizer)
        and name not in _WRAPPERS
    ]


@pytest.fixture
def installed():
    compat_lso.install()
    yield
    compat_lso.uninstall()


def _next_line() -> int:
    return inspect.currentframe().f_back.f_lineno + 1  # type: ignore[union-attr]


def _one_deprecation(caught: list[warnings.WarningMessage], line: int) -> str:
    found = [
        w for w in caught if issubclass(w.category, DeprecationWarning) and "lr" in str(w.message)
    ]
    assert len(found) == 1, [str(w.message) for w in caught]
    warning = found[0]
    # The user's line, as the warning's location and in its text.
    assert (pathlib.Path(warning.filename).name, warning.lineno) == (THIS_FILE, line)
    assert f"{THIS_FILE}:{line}" in str(warning.message)
    return str(warning.message)


@pytest.mark.skipif(not IS_KERAS_2, reason="Keras 3's base class is patched; tested below")
def test_keras_2_backends_keep_their_optimizers(installed):
    for value in vars(tf.keras.optimizers.Optimizer).values():
        function = getattr(value, "fget", value)
        assert not str(getattr(function, "__module__", "")).startswith("compat_lso")


@keras3_only
def test_every_keras_3_optimizer_takes_lr_as_the_learning_rate(installed):
    classes = _classes()
    # Those of every Keras 3 (others, such as Lamb and Muon, only in later releases).
    every = {"Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Nadam"}
    assert every | {"RMSprop", "SGD"} <= {cls.__name__ for cls in classes}, classes
    for cls in classes:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = _next_line()
            optimizer = cls(lr=0.5)
        assert number(optimizer.learning_rate) == 0.5, cls
        message = _one_deprecation(caught, line)
        assert f"Replace it with: {cls.__name__}(learning_rate=0.5)" in message
        assert "TF 2.11-2.15's default optimizers ignored it" in message


@keras3_only
def test_lr_wins_over_learning_rate_as_in_keras_2(installed):
    # TF 2.15's legacy SGD(learning_rate=0.1, lr=0.7): 0.7 (module docstring).
    with pytest.warns(DeprecationWarning, match=r"kept learning_rate=0\.1\)"):
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, lr=0.7)
    assert number(optimizer.learning_rate) == pytest.approx(0.7)


@keras3_only
def test_a_config_with_lr_builds_through_from_config_get_and_deserialize(installed):
    config = {"class_name": "Adam", "config": {"lr": 0.25, "beta_1": 0.5}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _next_line()
        built = tf.keras.optimizers.get(config)
    _one_deprecation(caught, line)
    assert (number(built.learning_rate), number(built.beta_1)) == (0.25, 0.5)
    with pytest.warns(DeprecationWarning):
        assert number(tf.keras.optimizers.deserialize(config).learning_rate) == 0.25
    with pytest.warns(DeprecationWarning):
        assert number(tf.keras.optimizers.Adam.from_config({"lr": 0.125}).learning_rate) == 0.125


@keras3_only
def test_the_lr_attribute_reads_and_sets_the_learning_rate(installed):
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _next_line()
        rate = optimizer.lr
    assert "reads the learning rate" in _one_deprecation(caught, line)
    assert isinstance(rate, tf.Variable) and number(rate) == 0.5  # Keras 2's was a tf.Variable
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _next_line()
        optimizer.lr = 0.25
    assert "sets the learning rate" in _one_deprecation(caught, line)
    assert number(optimizer.learning_rate) == 0.25
    with pytest.warns(DeprecationWarning):
        tf.keras.backend.set_value(optimizer.lr, 0.125)  # Keras 2 callbacks' spelling
    assert number(optimizer.learning_rate) == 0.125


@keras3_only
def test_tensorflow_reading_lr_while_it_saves_a_model_does_not_warn(installed, tmp_path):
    # SavedModel's walk reads every attribute of the optimizer, `lr` included: not user code.
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    model.compile(tf.keras.optimizers.Adam(learning_rate=0.1), loss="mse")
    model.fit(tf.ones((2, 1)), tf.ones((2, 1)), verbose=0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r".*\.lr is Keras 2", category=DeprecationWarning)
        tf.saved_model.save(model, str(tmp_path / "saved"))


@keras3_only
def test_code_without_lr_sees_no_change_and_uninstall_takes_lr_back():
    import keras

    before = inspect.signature(keras.optimizers.Adam)
    plain = keras.optimizers.Adam(learning_rate=0.5).get_config()
    compat_lso.install()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning where `lr` is not said
            optimizer = keras.optimizers.Adam(learning_rate=0.5)
            assert optimizer.get_config() | {"name": plain["name"]} == plain
        assert inspect.signature(keras.optimizers.Adam) == before
        # The shim's loss scale optimizer keeps its own `lr` (keras2_surface.py), silent.
        wrapped = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            assert number(wrapped.lr) == 0.5
    finally:
        compat_lso.uninstall()
    with pytest.raises(ValueError, match=r"Argument.*not recognized.*'lr'"):
        keras.optimizers.Adam(lr=0.5)  # Keras 3's own refusal is back
    assert not hasattr(optimizer, "lr")
    assert "__init__" not in keras.optimizers.Optimizer.__dict__
