"""`python -m compat_lso verify`: train the old code and the migrated code, compare step by step.

cli.py parses the command and runs it; sides.py prepares and runs the two processes (the old code
at a git REF through `run --audit`, the working tree through `trace`); trace_file.py reads their
traces; compare.py finds the first step that differs; explain.py finds the audit's records and
the codemod's findings at that step's line; report.py prints the table and the verdict, and
writes --json and --plot; seed.py seeds both runs alike. See docs/verify.md.

Importing this package imports nothing heavy (no TensorFlow, no codemod).
"""
