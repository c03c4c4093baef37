"""The training part of a differential program, one writer per `scaling` option.

Each writer gets the axes, the inner optimizer's expression and the one that builds the loss
scale optimizer from `inner` (empty where `compile()` builds it), and returns the module's tail:
the model, the optimizer, `STEPS` steps over `FACTORS`, each recorded.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.differential.generator import Axes

LOSS = "tf.reduce_mean(tf.square(model(x) - y))"


def _scale(axes: Axes) -> str:
    if axes.reads_scale != "yes":
        return ""
    # TF 2.1-2.3 read the experimental class's scale by calling it; TF 2.4 made it a tensor.
    return ", float(opt.loss_scale())" if axes.era == "experimental" else ", float(opt.loss_scale)"


def _build(inner: str, build: str, indent: str = "") -> str:
    return f"{indent}model = make_model()\n{indent}inner = {inner}\n{indent}opt = {build}\n"


def _scaled_step(body_indent: str, scaled: bool) -> str:
    i = body_indent
    if not scaled:
        return (
            f"{i}with tf.GradientTape() as tape:\n"
            f"{i}    loss = {LOSS}\n"
            f"{i}grads = tape.gradient(loss, model.trainable_variables)\n"
        )
    return (
        f"{i}with tf.GradientTape() as tape:\n"
        f"{i}    loss = {LOSS}\n"
        f"{i}    scaled_loss = opt.get_scaled_loss(loss)\n"
        f"{i}scaled_grads = tape.gradient(scaled_loss, model.trainable_variables)\n"
        f"{i}grads = opt.get_unscaled_gradients(scaled_grads)\n"
    )


def tape(axes: Axes, inner: str, build: str, scaled: bool = True) -> str:
    return (
        _build(inner, build)
        + "\n\n@tf.function\ndef train_step(x, y):\n"
        + _scaled_step("    ", scaled)
        + "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
        + "    return loss\n\n\n"
        + "for factor in FACTORS:\n"
        + "    loss = train_step(X * factor, Y)\n"
        + f"    record(loss, model{_scale(axes)})\n"
    )


def none(axes: Axes, inner: str, build: str) -> str:
    return tape(axes, inner, build, scaled=False)


def minimize(axes: Axes, inner: str, build: str) -> str:
    return (
        _build(inner, build)
        + "\n\nfor factor in FACTORS:\n"
        + "    x, y = X * factor, Y\n"
        + f"    loss = {LOSS}\n"
        + f"    opt.minimize(lambda: {LOSS}, model.trainable_variables)\n"
        + f"    record(loss, model{_scale(axes)})\n"
    )


def compile_fit(axes: Axes, inner: str, build: str) -> str:
    if build:
        head = _build(inner, build) + 'model.compile(optimizer=opt, loss="mse")\n'
    else:  # compile() wraps the optimizer itself, by the global policy
        head = f'model = make_model()\nmodel.compile(optimizer={inner}, loss="mse")\n'
    return (
        head + "\nfor factor in FACTORS:\n"
        "    loss = model.train_on_batch(X * factor, Y)\n"
        "    record(np.ravel(loss)[0], model)\n"
    )


def accumulation(axes: Axes, inner: str, build: str) -> str:
    return (
        _build(inner, build)
        + "\n\n@tf.function\ndef _gradients(x, y):\n"
        + _scaled_step("    ", True)
        + "    return loss, grads\n\n\n"
        + "for factor in FACTORS:\n"
        + "    total = None\n"
        + "    for half in (slice(0, 4), slice(4, 8)):\n"
        + "        loss, grads = _gradients(X[half] * factor, Y[half])\n"
        + "        total = grads if total is None else [a + b for a, b in zip(total, grads)]\n"
        + "    opt.apply_gradients(zip([g / 2 for g in total], model.trainable_variables))\n"
        + f"    record(loss, model{_scale(axes)})\n"
    )


def distribute(axes: Axes, inner: str, build: str) -> str:
    return (
        'strategy = tf.distribute.MirroredStrategy(["/cpu:0"])\n'
        "with strategy.scope():\n"
        + _build(inner, build, indent="    ")
        + "\n\n@tf.function\ndef train_step(x, y):\n"
        + "    def step_fn(x, y):\n"
        + _scaled_step("        ", True)
        + "        opt.apply_gradients(zip(grads, model.trainable_variables))\n"
        + "        return loss\n\n"
        + "    return strategy.run(step_fn, args=(x, y))\n\n\n"
        + "for factor in FACTORS:\n"
        + "    loss = train_step(X * factor, Y)\n"
        + f"    record(loss, model{_scale(axes)})\n"
    )


LOOPS: dict[str, Callable[[Axes, str, str], str]] = {
    "tape": tape,
    "none": none,
    "minimize": minimize,
    "compile": compile_fit,
    "wrap": compile_fit,
    "accumulation": accumulation,
    "distribute": distribute,
}
