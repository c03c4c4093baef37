"""What every part of the shim shares, below all of them: argument checks, config forms, the
deprecation warning, and which Keras package and version are behind `tf.keras`.

Nothing here imports another part of compat_lso, and nothing here imports TensorFlow at import
time (`compat_lso.testing` uses `arguments` and `config` without TensorFlow).
"""
