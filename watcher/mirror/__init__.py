"""Upstream mirrors: bare, blobless clones, rename histories, release order."""
