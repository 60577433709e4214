"""watch: keeps compatibility notes honest against moving upstream code."""

__version__ = "0.1.0"
