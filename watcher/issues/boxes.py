"""The dashboard's checkboxes (Renovate-style): a maintainer ticks one in GitHub's web UI,
and the next `watch action` run carries it out.

- **accept**: the note was re-verified; `watch fix --accept` re-bases it on HEAD and the
  change is opened as a pull request (with the `files` sink: pushed as a branch for
  review; or committed, `[issues] accept = "commit"`).
- **snooze 30 days**: `snooze_until` is set in the note's front matter (committed to the
  branch), which mutes its issue until then.

Each box carries a hidden marker naming its action and note, so a tick is read back
exactly, whatever the text around it says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from watcher.issues import markdown as md

SNOOZE_DAYS = 30
_BOX = re.compile(
    r"^\s*[-*] \[(?P<tick>[ xX])\] <!-- watch:(?P<what>accept|snooze)=(?P<note>[\w.-]+) -->"
)


@dataclass(frozen=True)
class Tick:
    what: str  # "accept" | "snooze"
    note: str


def ticked(body: str | None) -> list[Tick]:
    """The boxes ticked in a dashboard body, in order, each once."""
    found: dict[tuple[str, str], Tick] = {}
    for line in (body or "").splitlines():
        match = _BOX.match(line)
        if match and match.group("tick") in "xX":
            tick = Tick(match.group("what"), match.group("note"))
            found.setdefault((tick.what, tick.note), tick)
    return list(found.values())


def section(stale: Iterable[str], snoozed: dict[str, str], mode: str) -> str:
    """The boxes for every stale note, and the notes that are snoozed; "" for none.

    `mode` is how an accepted note lands: "pull-request", "branch" (pushed for review,
    where the sink cannot open pull requests) or "commit"."""
    lines: list[str] = []
    for note in sorted(stale):
        landing = {
            "commit": "commit it",
            "branch": f"push it to branch `watch/accept/{note}` for review",
        }.get(mode, "open a pull request")
        if note in snoozed:
            lines.append(f"- {md.code(note, 120)} is snoozed until {md.code(snoozed[note])}")
            continue
        name = md.code(note, 120)
        lines.append(
            f"- [ ] <!-- watch:accept={note} --> **accept** {name}: re-verified; re-base it "
            f"on HEAD (`watch fix --accept`) and {landing}"
        )
        lines.append(f"- [ ] <!-- watch:snooze={note} --> **snooze** {name} for {SNOOZE_DAYS} days")
    if not lines:
        return ""
    head = "### Actions\n\nTick a box; the next `watch action` run carries it out.\n\n"
    return head + "\n".join(lines) + "\n"
