"""Languages and parsing: grammars, token sequences, definitions."""
