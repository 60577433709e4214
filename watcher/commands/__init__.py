"""One module per command: explicit arguments in, an exit code out."""
