"""The one walk over a site's folders (notes/, rules/, state/): safe whatever is in them.

A folder may hold names that are not UTF-8, links that loop (`notes/a -> .`), a file
where a folder belongs and a folder named like a file. The walk never follows a link to
a folder (as `Path.rglob` does not, so the loaders and the warm fingerprint read the
same files; and a loop is then impossible), never enters one folder twice (a bind
mount or a hard-linked folder would), lists only regular files (a link to a file counts,
as the file), and skips what it cannot read. Names stay `str` with the bytes that are not
UTF-8 kept by `surrogateescape` (`os.fsencode` gives them back); `shown` makes such a
name readable in a message, a report or a JSON document.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple


class Found(NamedTuple):
    """A regular file below the walked folder."""

    path: str  # the folder's path joined with `name`
    name: str  # below the folder, `/`-separated
    info: os.stat_result  # of the file (a link followed)


def files(folder: Path | str, suffix: str = "", skip: tuple[str, ...] = ()) -> list[Found]:
    """Every regular file below `folder` whose name ends with `suffix`, in the order of
    their names' parts (as `sorted(folder.rglob(...))`); `skip` names entries directly
    in `folder` that are left out (a file, or a folder and all below it)."""
    root = os.fspath(folder)
    found: list[tuple[tuple[str, ...], Found]] = []
    seen: set[tuple[int, int]] = set()
    pending: list[tuple[str, tuple[str, ...]]] = [(root, ())]
    while pending:
        top, parts = pending.pop()
        try:
            info = os.stat(top)
            if (info.st_dev, info.st_ino) in seen:
                continue  # a folder met again: a loop, or a second way in
            seen.add((info.st_dev, info.st_ino))
            with os.scandir(top) as entries:
                listed = list(entries)
        except OSError:  # gone, unreadable, or not a folder after all
            continue
        for entry in listed:
            if not parts and entry.name in skip:
                continue
            where = (*parts, entry.name)
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, where))
                elif entry.name.endswith(suffix) and (file := _regular(entry)) is not None:
                    found.append((where, Found(entry.path, "/".join(where), file)))
            except OSError:
                continue
    return [item for _, item in sorted(found, key=lambda pair: pair[0])]


def _regular(entry: os.DirEntry[str]) -> os.stat_result | None:
    """The file's `stat` when it is a regular file (through a link), else None: a link
    to a folder, a dangling link, a pipe or a socket is not read."""
    info = entry.stat()  # follows a link
    return info if stat.S_ISREG(info.st_mode) else None


def shown(name: str) -> str:
    """`name` with the bytes that are not UTF-8 written `\\xNN`: printable, and valid
    in JSON, Markdown and a terminal."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = name.encode("utf-8", "surrogateescape")  # the bytes of the name
        except UnicodeEncodeError:  # a lone surrogate that stands for no byte
            return name.encode("utf-8", "backslashreplace").decode("utf-8")
        return raw.decode("utf-8", "backslashreplace")
    return name
