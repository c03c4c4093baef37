"""compat-lso: the TF 2.4 loss-scale-optimizer API on every supported TensorFlow/Keras generation."""

__version__ = "0.1.0"
