# LSO011 on keras3: one loss scale optimizer unscales every gradient, but the dense half is
# applied by a second optimizer; beside it, a plain one-optimizer step.
import tensorflow as tf


def sparse_dense_step(model, x, y, table_opt, dense_opt, amp, strategy):
    def replica(x, y):
        loss = model.loss(y, model(x))
        if amp:
            loss = table_opt.get_scaled_loss(loss)
        table_vars, dense_vars = model.split_variables()
        grads = tf.gradients(loss, table_vars + dense_vars)
        table_grads, dense_grads = grads[:len(table_vars)], grads[len(table_vars):]
        if amp:
            dense_grads = table_opt.get_unscaled_gradients(dense_grads)
            table_grads = table_opt.get_unscaled_gradients(table_grads)
        first = table_opt.apply_gradients(zip(table_grads, table_vars))
        second = dense_opt.apply_gradients(zip(dense_grads, dense_vars))
        return first, second

    return strategy.run(replica, args=(x, y))


def plain_step(model, x, y, opt):
    scaled = opt.get_scaled_loss(model.loss(y, model(x)))
    grads = opt.get_unscaled_gradients(tf.gradients(scaled, model.trainable_variables))
    return opt.apply_gradients(zip(grads, model.trainable_variables))


def setup(amp):
    if amp:
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16")
        tf.keras.mixed_precision.experimental.set_policy(policy)
