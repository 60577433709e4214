"""Stale-verification issues (SPEC 6.2): filed by `sync.sync_issues`, one per affected note."""
