"""The ecosystem check behind `python bench/ecosystem.py` (docs/ecosystem.md).

The codemod on real repositories it was not tuned on, as ruff's ecosystem check runs ruff on real
projects: `manifest.toml` names each repository (facts only: commit, paths, blob ids, licence,
the forms its files show), a folder the developer fills with clones or snapshots provides the
code, and nothing of it is ever copied into this repository.

- `manifest`: the manifest, read and checked, and the split into a tuning and a check half;
- `snapshots`: where a repository lives in the folder, and its files at the pinned commit;
- `measure`: the codemod on those files for one target, and what came out (crashes, broken
  outputs, second-run changes, findings, names left silent);
- `resolve`: the loss-scaling names an output still spells, resolved against the installed
  TensorFlow;
- `timing`: `--check` against a plain libcst parse of the same files;
- `report`: figures per repository and per half, the baseline and what changed against it.
"""
