"""fit through a Keras optimizer that the graph rewrite wrapped: the TF 2.4-2.15 twin of
tf21/graph_rewrite_keras_fit.py.

Pattern: tensorflow/tensorflow@13447e843a229f7a73400d1f211f79c41a369bc4,
tensorflow/python/training/experimental/mixed_precision.py (the docstring's example:
`opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())`,
then `model.compile(loss="mse", optimizer=opt)` and `model.fit`), written as what TF 2.4-2.8's
function did with a Keras optimizer (that file at v2.8.0): wrap it in Keras's LossScaleOptimizer
(the default dynamic scale) and turn on grappler's auto_mixed_precision pass. The sixth sample
is 1e30, inf in the float16 layer: that step is skipped and the scale halves (fit's loss, a mean
over the epoch, is nan from there on; the weights show the steps after it). The pass changes
nothing on a CPU; it is turned off again at the end, as the old code's
disable_mixed_precision_graph_rewrite() did.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(opt.loss_scale))
        self.iterations.append(int(opt.iterations.numpy()))


model = small_model()
opt = tf.keras.optimizers.SGD(learning_rate=2**-8)
tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})
opt = tf.keras.mixed_precision.LossScaleOptimizer(opt)
model.compile(loss="mse", optimizer=opt)
x, y = data(steps=8, inf_at=5, seed=3)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})

report(
    losses=record.losses, scales=record.scales, iterations=record.iterations, weights=weights(model)
)
