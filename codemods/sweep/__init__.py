"""What is left: the last stage reads the migrated module for anything the target lacks that no
rule rewrote or reported (detection, its wording, the findings LSO100-LSO104)."""
