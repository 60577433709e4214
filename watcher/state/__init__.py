"""What runs leave behind: state files, run records, the warm record."""
