"""fit with a loss scale optimizer, its learning rate set through `model.optimizer.lr`.

Pattern: horovod/horovod@27deeb996c4d07b307cb6da68100212d73047237,
examples/elastic/tensorflow2/tensorflow2_keras_mnist_elastic.py
(`tf.keras.backend.set_value(state.model.optimizer.lr, 0.001 * hvd.size())` on the compiled
model's optimizer), with the model compiled with an explicit loss scale optimizer as
tensorflow/docs@945a448704b25a0897ed24abd45ab4d0b0d6f3c2, site/en/guide/mixed_precision.ipynb
shows. `hvd` is a one-process stand-in (hvd.py). Dynamic scale growing every 2 steps.
"""

import tensorflow as tf

import hvd
from common import data, number, report, small_model, weights


class Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.losses, self.scales, self.iterations = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(number(logs["loss"]))
        self.scales.append(float(self.model.optimizer.loss_scale))
        self.iterations.append(int(self.model.optimizer.iterations.numpy()))


hvd.init()
model = small_model()
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
    tf.keras.optimizers.SGD(learning_rate=0.5), initial_scale=2**8, dynamic_growth_steps=2
)
model.compile(optimizer=optimizer, loss="mse")
tf.keras.backend.set_value(model.optimizer.lr, 2**-4 * hvd.size())
x, y = data(steps=5)
record = Record()
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0, callbacks=[record])

report(
    learning_rate=float(tf.keras.backend.get_value(model.optimizer.lr)),
    losses=record.losses,
    scales=record.scales,
    iterations=record.iterations,
    weights=weights(model),
)
