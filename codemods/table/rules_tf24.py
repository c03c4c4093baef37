"""The rules for TF 2.4-2.15 code on the non-experimental class with Keras 2's meaning, which
Keras 3 misreads: LSO011, LSO015-LSO017; and LSO018, Keras 2's `x.dtype.name`, which Keras 3's
string dtypes lack. One module each under codemods/rules/."""

from __future__ import annotations

from typing import Final

from codemods.table.base import (
    KERAS3_FIXED,
    MANUAL,
    NOTE,
    SAFE,
    SHIM_IMPORT,
    SHIM_LSO,
    TF_IMPORT,
    Rule,
)

_TRAIN_STEP = (
    TF_IMPORT + "class Model(tf.keras.Model):\n"
    "    def train_step(self, data):\n"
    "        x, y = data\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = self.compiled_loss(y, self(x, training=True))\n"
    "            scaled_loss = self.optimizer.{scale}(loss)\n"
    "        scaled_grads = tape.gradient(scaled_loss, self.trainable_variables)\n"
    "        grads = {unscale}\n"
    "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
    "        return {{'loss': loss}}\n"
)
_LSO011_BEFORE = _TRAIN_STEP.format(
    scale="get_scaled_loss", unscale="self.optimizer.get_unscaled_gradients(scaled_grads)"
)
_LSO015_BEFORE = (
    TF_IMPORT
    + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(), True, "
    "1024, 500)\n"
)
_LSO016_BEFORE = (
    TF_IMPORT + "class ScaledOptimizer(tf.keras.mixed_precision.LossScaleOptimizer):\n    pass\n"
)
_LSO017_BEFORE = (
    TF_IMPORT + "opt = tf.keras.mixed_precision.LossScaleOptimizer(sgd)\ntf.print(opt.loss_scale)\n"
)
_LSO018_BEFORE = (
    TF_IMPORT + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
    "outputs = tf.keras.layers.Dense(10)(tf.keras.Input((784,)))\n"
    "print('Outputs dtype: %s' % outputs.dtype.name)\n"
)
_LSO018_AFTER = _LSO018_BEFORE.replace(
    "outputs.dtype.name", 'getattr(outputs.dtype, "name", outputs.dtype)'
)

TF24_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        code="LSO011",
        name="manual-loss-scaling",
        summary=(
            "get_scaled_loss / get_unscaled_gradients -> scale_loss, with the gradients passed "
            "still scaled to apply_gradients"
        ),
        # keras2: a note only where the old code divides gradients of a loss never scaled.
        action={"keras2": NOTE, "keras3": SAFE, "shim": MANUAL},
        instruction=(
            "call opt.scale_loss(loss) and pass the still-scaled gradients to "
            "opt.apply_gradients, or use --target shim"
        ),
        details=(
            "Keras 3 has no get_scaled_loss/get_unscaled_gradients: use "
            "opt.scale_loss(loss) and pass the still-scaled gradients to opt.apply_gradients, "
            "which unscales them itself (do not unscale twice), or use --target shim. On "
            "--target shim: on Keras 3, compile() under mixed_float16 wraps a plain optimizer in "
            "Keras 3's own LossScaleOptimizer, which has no "
            "get_scaled_loss/get_unscaled_gradients: give compile() "
            "compat_lso.LossScaleOptimizer(optimizer) yourself, or run the program with `python "
            "-m compat_lso run` (or call compat_lso.install() first), after which compile() "
            "wraps with compat_lso's class. On --target keras3: call opt.scale_loss(loss) and "
            "pass the still-scaled gradients straight to opt.apply_gradients, which unscales "
            "them itself (--explain LSO011 for clipping, logging and all-reduce in between); an "
            "apply_gradients given experimental_aggregate_gradients or name: drop it and rerun, "
            "the codemod then writes the unscaling out (Keras 3 sums gradients over replicas "
            "again: divide gradients the code all-reduced by num_replicas_in_sync); "
            "Keras 3's dynamic loss-scale rule differs from TF 2.4's (compat-lso-migrate "
            "--explain LSO022); --target shim keeps TF 2.4's."
        ),
        instructions={
            "shim": (
                "give compile() compat_lso.LossScaleOptimizer(optimizer), or run under `python "
                "-m compat_lso run`"
            ),
            "keras3": (
                "call opt.scale_loss(loss), pass the still-scaled gradients straight to "
                "opt.apply_gradients (--explain LSO011)"
            ),
        },
        example=_LSO011_BEFORE,
        example_after={
            "keras2": _LSO011_BEFORE,
            "keras3": _TRAIN_STEP.format(scale="scale_loss", unscale="scaled_grads"),
            "shim": None,
        },
        note=(
            "On keras3 the two calls are rewritten together or not at all (one Fix): per "
            "function and receiver (`self.optimizer`, `opt`, ... as written), every "
            "get_scaled_loss(x) becomes scale_loss(x) and the one get_unscaled_gradients(g) is "
            "dropped, but only where its result flows straight into the same receiver's "
            "apply_gradients(zip(grads, vars)) (directly, through one name, or through one "
            "`grads_and_vars = zip(...)`) and is read nowhere else. Where code in between reads "
            "the unscaled gradients (clipping, logging, a loop over them, accumulation within "
            "the function), both halves are written out instead, each equal to Keras 2's: "
            "get_unscaled_gradients(g) becomes each gradient times 1 / opt.scale_loss(1.0) "
            "(tf.math.scalar_mul, which keeps IndexedSlices), and every apply_gradients they "
            "reach multiplies each gradient by opt.scale_loss(1.0), which Keras 3's division "
            "takes back exactly for a power-of-two scale (a note at the apply_gradients where "
            "a loss scale optimizer of the file is given a scale that may not be one). That "
            "is done only where codemods/meaning/gradient_uses.py follows the unscaled "
            "gradients to read-only uses and to apply_gradients calls of the same receiver in "
            "the same function, and that function has no other. Where they leave the function "
            "(codemods/rules/_optimizer_wide.py), the same halves are written optimizer-wide: "
            "every get_unscaled_gradients of the receiver, and every apply_gradients of it in "
            "its home (the class of `self._opt`, the function or module binding `opt`) scales "
            "back whatever it gets, so each applies what TF 2.15's did, accumulated sums "
            "included. codemods/meaning/gradient_reach.py must see every place they go: "
            "returns of a private or nested function, to the module's calls of it (only the "
            "returned tuple's element that holds them, skipping a call under `else` of the same "
            "side-effect-free test whose `if` holds the return), an accumulator built here by a "
            "class call (`acc = GradientAccumulator()`, `self._acc = ...`) whose every read "
            "carries them, parameters of the module's functions, closures, TensorFlow calls "
            "(which keep nothing). A note goes at a scale_loss traced apart from every "
            "apply_gradients: Keras 3's scale_loss reads `built` when traced, and a tf.function "
            "traced before the first apply_gradients keeps initial_scale, so which steps "
            "overflow may differ. Where they go out of its sight (returned by a public function, "
            "stored, held by a parameter or a public attribute, handed to a function not "
            "followed), the halves are still written out, since the explicit unscaling gives "
            "Keras 2's own values to whatever reads them, provided EVERY apply_gradients of the "
            "module is on the same receiver and can be scaled back (pairs only, no call in the "
            "receiver, no tf.compat.v1, TensorFlow Addons or tf_keras optimizer built in the "
            "file): each is scaled back (Keras 2's meaning whatever it gets, LSO021's note), "
            "one the drop-both rewrite made excepted (it gets its own still-scaled gradients), "
            "and a note goes at each place they are lost from sight: an apply_gradients of "
            "Keras 3's class in another module divides them again, so they must be scaled back "
            "there (tests/old_code/scripts/tf24/returned_gradients.py shows TF 2.15's numbers "
            "kept). `self.x()` of a class of the file that defines `x` (a wrapper whose method "
            "calls the optimizer's) is the class's own method: a note, nothing changed. Anything "
            "else (applied by another optimizer, an apply_gradients with Keras 2's arguments) "
            "is reported at every call with what is in the way. The "
            "receiver cannot be typed statically (`self.optimizer` in a train_step); the method "
            "names are unique to the loss scale optimizer. `opt.minimize(...)` where `opt` may "
            "hold a TF 2.4 or experimental LossScaleOptimizer made in the file (bound to it, "
            "or handed on by a factory, an attribute, a container) is reported too: Keras 3 "
            "optimizers have no minimize. keras2 and shim keep these methods; on shim a call on "
            "`self.optimizer` or `model.optimizer` in a file that constructs no loss scale "
            "optimizer is reported, since that optimizer may be compile()'s wrapping, which is "
            "Keras 3's own class on Keras 3 unless compat_lso.install() ran (in a file that "
            "sets a policy that may be 'mixed_float16', LSO023 passes compat_lso's class to "
            "that compile() where it can, else adds compat_lso.install(), and nothing is "
            "reported). On keras3, in a file that "
            "builds no loss scale optimizer, the rewrite carries a note: Keras 3's rule runs "
            "it, and no LSO022 note at a constructor says so. "
            "By hand on keras3: Keras 3's apply_gradients checks the still-scaled gradients for "
            "inf/nan, divides them by the loss scale and updates it; code that needs unscaled "
            "gradients before that moves into the inner optimizer (clipping: its clipnorm=, "
            "global_clipnorm= or clipvalue=, applied after the division) or works on a copy "
            "divided by opt.dynamic_scale (logging); an all-reduce (Horovod, tf.distribute) "
            "takes the still-scaled gradients. A get_unscaled_gradients with no "
            "get_scaled_loss in its function is reported with what "
            "codemods/meaning/gradients.py saw. "
            "Where it divides gradients of a loss that was never scaled, the old code has a bug "
            "of its own: on TF 2.15 too it trains at gradients / loss scale (32768 by default). "
            "Every target says so at the call (keras3: reported, left as it is; keras2 and "
            "shim: a note), and so does the audit of `python -m compat_lso run --audit` "
            "(unscaled-twice), on Keras 2 too: keeping or fixing it is the user's choice. To "
            "keep today's numbers: on keras3 drop the call (Keras 3's apply_gradients divides "
            "by the scale), on keras2 and shim keep it. To fix it: take the gradients of the "
            "scaled loss (opt.scale_loss(loss) on keras3, opt.get_scaled_loss(loss) before): "
            "the numbers change."
        ),
        partly=frozenset({"keras3"}),
    ),
    Rule(
        code="LSO015",
        name="tf24-loss-scale-optimizer-call",
        summary=(
            "TF 2.4-2.15 LossScaleOptimizer(inner_optimizer, dynamic, initial_scale, "
            "dynamic_growth_steps) calls, which Keras 3 misreads"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": SAFE},
        instruction=(
            "call compat_lso.LossScaleOptimizer with the same arguments: TF 2.4's signature on "
            "every backend"
        ),
        details=(
            "Call compat_lso.LossScaleOptimizer with the same arguments: it keeps TF "
            "2.4's signature and Keras 2's meaning on every backend. On --target keras3: pass "
            "initial_scale= and dynamic_growth_steps= by keyword and drop `dynamic`; a fixed "
            "scale N becomes the inner optimizer's loss_scale_factor=N, or use --target shim; "
            "Keras 3's dynamic loss-scale rule differs from TF 2.4's (--explain LSO022); --target "
            "shim keeps TF 2.4's. A fixed scale rewritten to loss_scale_factor gives TF 2.4's "
            "fixed mode's numbers (every step the loss multiplied and the gradients divided by "
            "N), but the optimizer is no longer a LossScaleOptimizer: an isinstance check on it, "
            "or on model.optimizer, in another file no longer matches (the rewrite's help says so)."
        ),
        instructions={
            "keras3": (
                "pass initial_scale= and dynamic_growth_steps= by keyword and drop `dynamic` (a "
                "fixed scale: --explain LSO015)"
            ),
        },
        example=_LSO015_BEFORE,
        example_after={
            "keras2": _LSO015_BEFORE,
            "keras3": _LSO015_BEFORE.replace(
                "True, 1024, 500", "initial_scale=1024, dynamic_growth_steps=500"
            ),
            "shim": SHIM_IMPORT
            + _LSO015_BEFORE.replace("tf.keras.mixed_precision.", "compat_lso."),
        },
        note=(
            "A call is TF 2.4 code when it passes `dynamic` (by keyword or as a bool literal in "
            "second place); Keras 3 code when it passes `name=` or a number in second place; "
            "otherwise (keywords only, or a run-time second argument) the file decides: it is "
            "Keras 3 code when it shows Keras 3's API (scale_loss, dynamic_scale, "
            "loss_scale_factor, keras.optimizers.LossScaleOptimizer, a Keras 3 call) and none "
            "of TF 2.4's (get_scaled_loss, get_unscaled_gradients, dynamic_counter, a TF 2.4 "
            "call, the experimental API), and TF 2.4 code otherwise. Keras 3 code is left alone "
            "on every target. "
            "keras3: positional arguments become keywords, dynamic=True and None defaults are "
            "dropped; dynamic=False, initial_scale=N becomes the inner optimizer's "
            "loss_scale_factor=N "
            "(`LossScaleOptimizer(tf.keras.optimizers.SGD(0.1), dynamic=False, "
            "initial_scale=128)` -> `tf.keras.optimizers.SGD(0.1, loss_scale_factor=128)`) "
            "where the inner optimizer is a Keras optimizer constructed in the call and the "
            "result goes only to compile() (given `auto_scale_loss=False`, or under "
            "'mixed_float16' it would be wrapped in a dynamic LossScaleOptimizer that switches "
            "loss_scale_factor off) and to the optimizer's own apply_gradients, scale_loss, "
            "get_scaled_loss, get_unscaled_gradients, iterations and learning_rate; otherwise "
            "(stored on self, returned, passed on, read as a LossScaleOptimizer) it is reported. "
            "A run-time `dynamic` or second positional argument is reported. "
            "shim: the class moves to compat_lso.LossScaleOptimizer with the arguments as "
            "written; a call TF 2.4's class refused too (an unexpected keyword such as the "
            "experimental loss_scale=) is reported instead. keras2: nothing to do. By hand on "
            "keras3: Keras 3's LossScaleOptimizer(inner_optimizer, initial_scale=2**15, "
            "dynamic_growth_steps=2000, name=None) takes no `dynamic` and reads a second "
            "positional argument as initial_scale; a fixed scale (dynamic=False, initial_scale=N) "
            f"has no LossScaleOptimizer: {KERAS3_FIXED}."
        ),
        partly=frozenset({"keras3", "shim"}),
    ),
    Rule(
        code="LSO016",
        name="tf24-loss-scale-optimizer-reference",
        summary=(
            "any other use of the TF 2.4-2.15 LossScaleOptimizer class in TF 2.4 code "
            "(subclassing, aliases, passing it around)"
        ),
        action={"keras2": "none", "keras3": MANUAL, "shim": SAFE},
        instruction=(
            "use compat_lso.LossScaleOptimizer, which keeps TF 2.4's signature and Keras 2's "
            "meaning on every backend"
        ),
        details=(
            "Use compat_lso.LossScaleOptimizer, which keeps TF 2.4's signature and "
            "Keras 2's meaning on every backend. On --target keras3: a subclass of Keras 3's "
            "LossScaleOptimizer gets Keras 3's constructor (inner_optimizer, initial_scale, "
            "dynamic_growth_steps, name) and its methods: pass "
            "initial_scale=/dynamic_growth_steps= by keyword to super().__init__, drop "
            "`dynamic`, and move overrides of get_scaled_loss/get_unscaled_gradients to "
            "scale_loss/apply; or subclass compat_lso.LossScaleOptimizer (--target shim); Keras "
            "3's dynamic loss-scale rule differs from TF 2.4's (compat-lso-migrate --explain "
            "LSO022); --target shim keeps TF 2.4's."
        ),
        instructions={
            "keras3": (
                "pass initial_scale=/dynamic_growth_steps= by keyword to super().__init__ "
                "(--explain LSO016), or use --target shim"
            ),
        },
        example=_LSO016_BEFORE,
        example_after={
            "keras2": _LSO016_BEFORE,
            "keras3": None,
            "shim": SHIM_IMPORT
            + "class ScaledOptimizer(compat_lso.LossScaleOptimizer):\n    pass\n",
        },
        note=(
            "shim: in TF 2.4 code (as LSO015 decides it) every reference to the class other "
            "than a call moves to compat_lso.LossScaleOptimizer: base classes, aliases "
            "(`LSO = tf.keras.mixed_precision.LossScaleOptimizer`, re-pointed once, their uses "
            "follow), arguments, `.from_config`. isinstance/issubclass checks and annotations "
            "keep the native class, which accepts the shim's objects on every backend (the "
            "shim's class subclasses it) and also the ones compile() wraps under "
            "'mixed_float16'; checking against compat_lso.LossScaleOptimizer would reject "
            "those. keras3: a subclass is reported, its help naming what its body reads that "
            "Keras 3's class lacks (`self._optimizer`, `self.loss_scale`, ...); other "
            "references mean the same class there. keras2: nothing to do."
        ),
        partly=frozenset({"shim"}),
    ),
    Rule(
        code="LSO017",
        name="loss-scale-optimizer-state",
        summary=(
            "opt.loss_scale / opt.dynamic_counter / opt.dynamic reads, which Keras 3 does not have"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": "none"},
        instruction="read the state through compat_lso.LossScaleOptimizer (--target shim)",
        details=(
            "Read the state through compat_lso.LossScaleOptimizer (--target shim). On "
            "--target keras3: Keras 3's LossScaleOptimizer has no loss_scale, dynamic_counter or "
            "dynamic: the current scale is tf.convert_to_tensor(opt.dynamic_scale if opt.built "
            "else opt.initial_scale, tf.float32) (dynamic_scale exists once the optimizer is "
            "built), the counter is opt.step_counter (int32, from the first step), and every "
            "Keras 3 LossScaleOptimizer is dynamic; a fixed scale is the inner optimizer's "
            "loss_scale_factor; Keras 3's dynamic loss-scale rule differs from TF 2.4's "
            "(compat-lso-migrate --explain LSO022); --target shim keeps TF 2.4's."
        ),
        instructions={
            "keras3": (
                "read Keras 3's state: dynamic_scale (initial_scale until built), step_counter "
                "(--explain LSO017)"
            ),
        },
        example=_LSO017_BEFORE,
        example_after={
            "keras2": _LSO017_BEFORE,
            "keras3": _LSO017_BEFORE.replace(
                "opt.loss_scale",
                "tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, "
                "tf.float32)",
            ),
            # LSO015 moves the constructor; the read then works as written.
            "shim": SHIM_IMPORT
            + _LSO017_BEFORE.replace("tf.keras.mixed_precision.LossScaleOptimizer", SHIM_LSO),
        },
        note=(
            "keras3, where `opt` is, in the same scope, last bound to a dynamic TF 2.4 "
            "LossScaleOptimizer call: `opt.loss_scale` -> "
            "`tf.convert_to_tensor(opt.dynamic_scale if opt.built else opt.initial_scale, "
            "tf.float32)` (a float32 tensor holding the scale at the time of the read, as "
            "TF 2.4's was; `dynamic_scale` alone is a variable that changes afterwards and "
            "exists only once the optimizer is built), `opt.dynamic_counter` -> "
            "`opt.step_counter` (the same values; int32 instead of int64, and only once built), "
            "`opt.dynamic` -> `True`. Reads on an untyped receiver: `.dynamic_counter` (a name "
            "only the loss scale optimizer has) is rewritten the same way, and so is "
            "`.loss_scale` on a receiver the module calls get_scaled_loss or "
            "get_unscaled_gradients on through the same binding, or compile()'s wrapper "
            "(`model.optimizer` in a mixed_float16 file, whose `lr` LSO019 renames: a receiver "
            "is a loss scale optimizer for every member or for none; a fixed-scale one then "
            "fails loudly: Keras 3's has no dynamic_scale), and `.dynamic` there -> "
            "`isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer)` (Keras 3's is "
            "dynamic, a fixed scale became loss_scale_factor on a plain optimizer); other "
            "`.loss_scale` reads on "
            "something named like an optimizer "
            "(`self.optimizer`, `opt`, `model.optimizer`) are reported, as is any read on a "
            "fixed-scale optimizer or where no `tensorflow` import is in scope. "
            "`opt.loss_scale()` is LSO010. In a file that builds no loss "
            "scale optimizer (compile()'s, a parameter) the counter's rewrite carries a note: "
            "it follows Keras 3's rule, and no LSO022 note at a constructor says so."
        ),
        partly=frozenset({"keras3"}),
    ),
    Rule(
        code="LSO018",
        name="dtype-name",
        summary=(
            "x.dtype.name in a module using mixed precision: on Keras 3 a KerasTensor's or a "
            "variable's dtype is a string, which has no .name"
        ),
        action={"keras2": "none", "keras3": SAFE, "shim": SAFE},
        instruction=(
            "write tf.as_dtype(<dtype>).name, which gives the same name on Keras 2 and Keras 3"
        ),
        details=(
            'The rewrite, getattr(x.dtype, "name", x.dtype), gives the same string for a '
            "tf.DType and a NumPy dtype (both have .name) and for Keras 3's string dtype (the "
            "name itself), so it changes nothing on any generation. tf.as_dtype(x.dtype).name "
            "would read better, but `x` may be a NumPy array, and tf.as_dtype names NumPy's "
            "object and str dtypes 'string' and refuses datetime64. The rewrite reads x.dtype "
            "twice, so where `x` is a call or a subscript (model(x).dtype.name) the line stays "
            "reported: the fix is "
            "tf.as_dtype(<dtype>).name where the dtype is a TensorFlow or Keras one."
        ),
        example=_LSO018_BEFORE,
        example_after={
            "keras2": _LSO018_BEFORE,
            "keras3": _LSO018_AFTER,
            # The policy gets compat_lso.install() for compile() (LSO023).
            "shim": SHIM_IMPORT
            + _LSO018_AFTER.replace(TF_IMPORT, TF_IMPORT + "\ncompat_lso.install()\n", 1),
        },
        note=(
            "Only modules that use mixed precision (mixed_precision, mixed_float16, "
            "mixed_bfloat16 or LossScaleOptimizer in the text) are looked at. TensorFlow's "
            "mixed-precision guide prints outputs.dtype.name; under `python -m compat_lso run` "
            "on Keras 3 it fails there until that line is changed"
        ),
    ),
)
