# LSO011/LSO022 on keras3: TF 2.4's class in a step a strategy runs per replica, one of whose
# two apply_gradients calls passes experimental_aggregate_gradients.
import tensorflow as tf


def fit(strategy, build, batches, global_batch):
    with strategy.scope():
        model = build()
        opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(0.1))

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            per_example = model.loss(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
            scaled = opt.get_scaled_loss(loss)
        table, rest = model.split_variables()
        table_grads, rest_grads = tape.gradient(scaled, [table, rest])
        table_grads = opt.get_unscaled_gradients(table_grads)
        rest_grads = opt.get_unscaled_gradients(rest_grads)
        opt.apply_gradients(zip(table_grads, table), experimental_aggregate_gradients=False)
        opt.apply_gradients(zip(rest_grads, rest))
        return loss

    for x, y in batches:
        per_replica = strategy.run(step, args=(x, y))
        print(strategy.reduce("sum", per_replica, axis=None))
