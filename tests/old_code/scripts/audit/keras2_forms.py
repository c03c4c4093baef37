"""Keras 2 forms on a loss scale optimizer that Keras 3's own class lacks, or takes with another
meaning without raising (TF 2.4-2.15 code; TF 2.4's wrapper, TF 2.15's over a legacy optimizer
and the shim give the meaning written here).

On Keras 3's own class: `opt.lr = x` and `opt.momentum = x` leave the rate and momentum as they
were; `opt.clipnorm = x` clips nothing; `opt.variables()` raises; `set_weights` sets the wrapper's
step counter, learning rate and loss scale; `opt.get_gradients` raises. Lines with no marker mean
the same on both.
"""

import tensorflow as tf

var = tf.Variable([3.0, 4.0])
opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0, momentum=0.9))
opt.learning_rate = 0.5
opt.lr = 0.25  # audit: keras2-form lr x1
tf.keras.backend.set_value(opt.lr, 0.125)  # audit: keras2-form lr x1
opt.clipnorm = 1.0  # audit: keras2-form clipnorm x1
opt.momentum = 0.5  # audit: keras2-form momentum= x1
opt.beta_1 = 0.5  # SGD has no beta_1: on the wrapper on every generation
opt.decay = 0.0  # no decay: TF 2.15's SGD ignored it, Keras 3's has none


@tf.function
def step(first):
    with tf.GradientTape() as tape:
        loss = opt.get_scaled_loss(tf.reduce_sum(var * var))  # audit: keras2-form get_scaled_loss x3
    grads = opt.get_unscaled_gradients(tape.gradient(loss, [var]))  # audit: keras2-form get_unscaled_gradients x3
    opt.apply_gradients(zip(grads, [var]))
    if first:  # Horovod's broadcast of the optimizer's variables after the first step
        tf.print("variables", len(opt.variables()))  # audit: keras2-form variables() x1
    return opt.lr * 1.0  # audit: keras2-form lr x3


for number in range(3):
    rate = step(number == 0)
names = [v.name for v in opt.variables()]  # audit: keras2-form variables() x1


@tf.function
def gradients():  # OpenNMT-tf takes them so outside eager execution
    return opt.get_gradients(tf.reduce_sum(var * var), [var])  # audit: keras2-form get_gradients x1


grads = gradients()
try:
    opt.set_weights([tf.zeros([2])])  # audit: keras2-form set_weights() x1
except ValueError:
    pass  # the shim refuses a list that is not the wrapper's own variables
print("RESULT", {"var": var.numpy().tolist(), "rate": float(rate), "clipnorm": opt.clipnorm})  # audit: keras2-form clipnorm x1
