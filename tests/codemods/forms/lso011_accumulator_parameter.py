# LSO011 on keras3: a step that accumulates into an object it is given, then clips and applies
# the accumulated sum; the policy and the optimizer are set up in main().
import horovod.tensorflow as hvd
import tensorflow as tf


@tf.function
def step(opt, model, batch, summed, apply_now, amp, norm=1.0):
    with tf.GradientTape() as tape:
        loss = model(batch)
        if amp:
            loss = opt.get_scaled_loss(loss)
    grads = tape.gradient(loss, model.trainable_variables)
    if amp:
        grads = opt.get_unscaled_gradients(grads)
    summed(grads)
    if apply_now:
        averaged = [hvd.allreduce(g) for g in summed.gradients]
        (clipped, _) = tf.clip_by_global_norm(averaged, clip_norm=norm)
        opt.apply_gradients(zip(clipped, model.trainable_variables))
        summed.reset()
    hvd.broadcast_variables(opt.variables(), root_rank=0)
    return loss


def main(config, opt, summed):
    if config.amp:
        policy = tf.keras.mixed_precision.experimental.Policy("mixed_float16", loss_scale="dynamic")
        tf.keras.mixed_precision.experimental.set_policy(policy)
        opt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, "dynamic")
    for batch in config.data:
        step(opt, config.model, batch, summed, True, config.amp)
        print("scale", opt.loss_scale if config.amp else 1)
