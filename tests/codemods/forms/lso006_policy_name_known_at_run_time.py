# LSO006 through tensorflow.compat.v2 beside a TF1 `tf`: a Policy whose name is a parameter and
# whose loss_scale=None turns loss scaling off (what that means depends on the name).
import tensorflow.compat.v1 as tf
import tensorflow.compat.v2 as tf2


def set_precision(name, scale_loss):
    tf.logging.info("precision policy %s", name)
    if scale_loss:
        policy = tf2.keras.mixed_precision.experimental.Policy(name)
    else:
        policy = tf2.keras.mixed_precision.experimental.Policy(name, loss_scale=None)
    tf2.keras.mixed_precision.experimental.set_policy(policy)
