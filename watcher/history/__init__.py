"""An item's history: the walk over first-parent versions, and attribution."""
