# LSO011 on keras3: a custom loop whose closures share a gradient accumulator: one adds the
# unscaled gradients, another averages, clips and applies them; the optimizer is the model's.
import tensorflow as tf


def train(model, loss_fn, batches, accumulate):
    optimizer = model.optimizer
    fp16 = isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    acc = GradientAccumulator()

    def one_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
            if fp16:
                scaled = optimizer.get_scaled_loss(loss)
        if fp16:
            grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
        else:
            grads = tape.gradient(loss, model.trainable_variables)
        (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    def add(x, y):
        with tf.GradientTape() as tape:
            scaled = optimizer.get_scaled_loss(loss_fn(y, model(x, training=True)))
        acc.add_gradients(optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables)))

    def apply(count):
        grads = [g / tf.cast(count, g.dtype) for g in acc.gradients]
        (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        acc.reset()

    for i, (x, y) in enumerate(batches):
        if accumulate == 1:
            one_step(x, y)
        else:
            add(x, y)
            if (i + 1) % accumulate == 0:
                apply(accumulate)
        print("lr", optimizer._optimizer._decayed_lr("float32"), "scale", optimizer.loss_scale)
