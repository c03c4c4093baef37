"""libcst codemod commands (listed in .libcst.codemod.yaml), so `python -m libcst.tool codemod` runs
the same migration as compat-lso-migrate."""
