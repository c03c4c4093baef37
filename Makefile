# The two commands of the README. Each bootstraps its own tools (nox, uv) into .tools/ on first
# use, so a fresh machine with Python 3.11 and make needs nothing else.

PYTHON ?= python3
TOOLS := .tools
NOX := $(TOOLS)/bin/nox

.PHONY: demo test

# Migrate-and-compare run of the bundled legacy project on TF 2.21 (tf.keras = Keras 3).
demo: $(NOX)
	$(NOX) -s "demo(tf221)"

# The whole suite on TF 2.15 (Keras 2) and TF 2.21 (Keras 3): noxfile.py's MAKE_TEST. CI adds
# TF 2.21 + tf_keras and the matrix's edges (.ci/run).
test: $(NOX)
	$(NOX)

$(NOX):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check "nox>=2024.10" "uv>=0.4"
