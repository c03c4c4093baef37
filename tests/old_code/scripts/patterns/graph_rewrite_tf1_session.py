"""A tf.compat.v1 optimizer through the graph rewrite, trained in a TF1 graph and Session: the TF
2.4-2.15 twin of tf21/graph_rewrite_tf1_session.py.

Pattern: NVIDIA/DeepLearningExamples@ddbcd54056e8d1bc1c4d5a8ab34cb570ebea1947,
TensorFlow/Segmentation/VNet/utils/model_fn.py (`tf.train.RMSPropOptimizer(...)`, then
`tf.train.experimental.enable_mixed_precision_graph_rewrite(optimizer, loss_scale='dynamic')`),
written with the function TF 2.4-2.8's called for a tf.compat.v1 optimizer and TF 2.15 still
exports: `tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite`. It wraps the
optimizer in TensorFlow's TF1 MixedPrecisionLossScaleOptimizer (dynamic scale 2**15). The matrix
product runs in float16, written as casts (grappler's pass changes nothing on a CPU), and the
targets overflow its gradient at the initial scale: the first steps are skipped while the scale
halves, and the global step does not advance. In a graph of its own, so that the other scripts
of a batch keep eager execution; the pass is turned off again at the end.
"""

import numpy as np
import tensorflow as tf

from common import number, overflowing_data, report

x_data, y_data = overflowing_data(steps=8, seed=5)
with tf.Graph().as_default():
    x = tf.compat.v1.placeholder(tf.float32, shape=(1, 1))
    y = tf.compat.v1.placeholder(tf.float32, shape=(1, 1))
    w = tf.compat.v1.get_variable("w", initializer=np.array([[0.25, -0.25, 0.5, -0.5]], "float32"))
    v = tf.compat.v1.get_variable(
        "v", initializer=np.array([[0.5], [0.25], [-0.5], [0.75]], "float32")
    )
    hidden = tf.cast(tf.matmul(tf.cast(x, tf.float16), tf.cast(w, tf.float16)), tf.float32)
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(hidden), v) - y))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=2**-10)
    optimizer = tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(
        optimizer, loss_scale="dynamic"
    )
    step = tf.compat.v1.train.get_or_create_global_step()
    train = optimizer.minimize(loss, global_step=step)
    scale = optimizer._loss_scale()
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        losses, scales, iterations = [], [], []
        for i in range(8):
            feed = {x: x_data[i : i + 1], y: y_data[i : i + 1]}
            step_loss, _ = session.run([loss, train], feed)
            losses.append(number(step_loss))
            scales.append(float(session.run(scale)))
            iterations.append(int(session.run(step)))
        weights = [session.run(w).ravel().tolist(), session.run(v).ravel().tolist()]
tf.compat.v1.mixed_precision.disable_mixed_precision_graph_rewrite()

report(losses=losses, scales=scales, iterations=iterations, weights=weights)
