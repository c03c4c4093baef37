"""What the code means: names and imports, reaching assignments, value flow, gradient flow and
version gates, over Python's own `ast`. Knows no rule; the rules read it."""
