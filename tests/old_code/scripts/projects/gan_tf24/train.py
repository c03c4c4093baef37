"""The GAN project's driver, ../gan/train.py, run over this folder's models.py (TF 2.15's twin)."""

import pathlib
import runpy

runpy.run_path(str(pathlib.Path(__file__).parents[1] / "gan" / "train.py"), run_name="__main__")
