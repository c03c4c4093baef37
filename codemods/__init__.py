"""The codemod: migrates TensorFlow mixed-precision loss-scaling code (compat-lso-migrate)."""
