"""What a site's maintainers write: notes, quotes, rules, and their schemas."""
