"""Applying the edits: run the rules on one module, settle the imports of old names, add the
shim's import, splice the text, and hand the migrated text to the sweep."""
