"""Find a cited construct in a parsed file, or a rule's target."""
