"""Trial driver for chansoopark98/Tensorflow-Keras-GAN (keras_gan.py): one loss scale optimizer
shared by the discriminator, the generator and the combined GAN, each compiled with it, trained
with train_on_batch as the repository's loop does, on seeded synthetic images.

The repository sets no dtype policy in keras_gan.py, and its generator's loss (a float32 mean
squared error plus a float16 SSIM) cannot run under mixed_float16 on any release: the driver
builds the discriminator under mixed_float16 and the rest under float32, so the shared
optimizer steps both kinds of model. The discriminator's float16 gradients overflow at the
initial dynamic scale (2**15), so the skip-and-halve path runs. Run: python gan.py [SNAPSHOT_DIR]
"""

import _trial_stubs as _stubs

_stubs.root()
_stubs.stub_missing("tensorflow_datasets", "tensorflow_io", "skimage", "matplotlib.pyplot", "torch")

import keras_gan  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

_build_dis = keras_gan.create_model_dis


def _dis_in_float16(*args, **kwargs):
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        return _build_dis(*args, **kwargs)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


keras_gan.create_model_dis = _dis_in_float16

SIZE = 176  # the smallest multiple of 16 that tf.image.ssim_multiscale's five scales accept
BATCH = 1
STEPS = 4

model_gen, model_dis, model_gan = keras_gan.create_models(
    input_shape_gen=(SIZE, SIZE, 1),
    input_shape_dis=(SIZE, SIZE, 3),
    output_channels=2,
    lr=2e-4,
    momentum=0.5,
    loss_weights=[1, 100],
)

rng = np.random.default_rng(0)
# The patch discriminator's output shape (Keras 3 does not broadcast a (BATCH, 1) target).
PATCH = (BATCH, SIZE // 16, SIZE // 16, 1)
fake_y = tf.zeros(PATCH)
real_y = tf.fill(PATCH, 0.95)
for step in range(STEPS):
    rgb = tf.constant(rng.uniform(-1, 1, (BATCH, SIZE, SIZE, 3)), tf.float32)
    gray, colour = rgb[..., :1], rgb[..., 1:]
    pred = model_gen.predict(gray, verbose=0)
    d_real = model_dis.train_on_batch(rgb, real_y)
    d_fake = model_dis.train_on_batch(tf.concat([gray, pred], axis=-1), fake_y)
    model_dis.trainable = False
    gan = model_gan.train_on_batch(gray, [tf.ones(PATCH), rgb])
    model_dis.trainable = True
    losses = [float(np.ravel(v)[0]) for v in (d_real, d_fake, gan)]
    print(f"step {step}: discriminator real/fake, gan:", losses)
