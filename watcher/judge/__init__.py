"""Judge tracked items: plans, verdicts, relocation, and the worker pool."""
