"""Shared test set-up: quiet TensorFlow, and tell tests which Keras generation `tf.keras` is."""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
