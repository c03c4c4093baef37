"""In and out: which files to read, their bytes and notebooks, and how results leave (writes,
`--diff` patches, findings in every output format, positions, the rule catalogue)."""
