"""TF 2.1-2.8 experimental API: `enable_mixed_precision_graph_rewrite` on a Keras optimizer,
then compile() and fit().

Pattern: tensorflow/tensorflow@13447e843a229f7a73400d1f211f79c41a369bc4,
tensorflow/python/training/experimental/mixed_precision.py (the docstring's example:
`opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(tf.keras.optimizers.SGD())`,
`model.compile(loss="mse", optimizer=opt)`, `model.fit(...)`). TF 2.4-2.8's function wrapped a
Keras optimizer in the experimental LossScaleOptimizer and turned on grappler's
auto_mixed_precision pass. The same program as ../graph_rewrite_keras_fit.py (TF215_TWIN), whose
TF 2.15 numbers are this script's reference.
"""

import tensorflow as tf

from common import data, number, report, small_model, weights

TF215_TWIN = "graph_rewrite_keras_fit.py"  # the TF 2.4-2.15 spelling of this program, one folder up


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(opt.loss_scale()))
        self.iterations.append(int(opt.iterations.numpy()))


model = small_model()
opt = tf.keras.optimizers.SGD(learning_rate=2**-8)
opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)
model.compile(loss="mse", optimizer=opt)
x, y = data(steps=8, inf_at=5, seed=3)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])
tf.train.experimental.disable_mixed_precision_graph_rewrite()

report(
    losses=record.losses, scales=record.scales, iterations=record.iterations, weights=weights(model)
)
