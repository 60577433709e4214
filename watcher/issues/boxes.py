"""The dashboard's checkboxes (Renovate-style): a maintainer ticks one in GitHub's web UI,
and the next `watch action` run carries it out.

- **accept**: the note was re-verified; `watch fix --accept` re-bases it on HEAD and the
  change is opened as a pull request (with the `files` sink: pushed as a branch for
  review; or committed, `[issues] accept = "commit"`).
- **snooze 30 days**: `snooze_until` is set in the note's front matter (committed to the
  branch), which mutes its issue until then.

Each box carries a hidden marker naming its action and note, so a tick is read back
exactly, whatever the text around it says. Only a box GitHub draws as a checkbox counts:
a line inside a fenced (``` or ~~~) or indented code block, an HTML comment or another
HTML block (`<pre>`, `<details>`...) is text that merely looks like one (pasted into the
body, it must tick nothing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from watcher.issues import markdown as md

SNOOZE_DAYS = 30
_BOX = re.compile(
    r"^ {0,3}[-*] \[(?P<tick>[ xX])\] <!-- watch:(?P<what>accept|snooze)=(?P<note>[\w.-]+) -->"
)
_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})")
# CommonMark's HTML blocks: these run to their end tag; any other to a blank line.
_RAW = re.compile(r"^ {0,3}<(?P<tag>pre|script|style|textarea)(?:\s|>|$)", re.IGNORECASE)
_HTML = re.compile(r"^ {0,3}</?[A-Za-z!?]")


@dataclass(frozen=True)
class Tick:
    what: str  # "accept" | "snooze"
    note: str


def ticked(body: str | None) -> list[Tick]:
    """The boxes ticked in a dashboard body, in order, each once."""
    return read(body)[0]


def read(body: str | None) -> tuple[list[Tick], list[Tick]]:
    """The boxes ticked in a dashboard body (in order, each once), and the ticked boxes
    that sit inside code blocks or HTML, where they count for nothing."""
    found: dict[tuple[str, str], Tick] = {}
    hidden: list[Tick] = []
    for line, shown in _lines(body or ""):
        match = _BOX.match(line) if shown else _BOX.match(line.strip())
        if not match or match.group("tick") not in "xX":
            continue
        tick = Tick(match.group("what"), match.group("note"))
        if not shown:
            hidden.append(tick)
            continue
        found.setdefault((tick.what, tick.note), tick)
    return list(found.values()), hidden


def _lines(body: str) -> list[tuple[str, bool]]:
    """Each line, and whether GitHub renders it as text (outside code and comments).

    Conservative: a fence opens at any indentation and an unclosed one runs to the end;
    a line indented by a tab or four spaces is code (ours are never indented).
    """
    out: list[tuple[str, bool]] = []
    fence = ""  # the open fence's characters, "" outside one
    until = ""  # what ends the open HTML block: "-->", "</pre>"..., "" (a blank line)
    html = False
    for line in body.splitlines():
        opened = _FENCE.match(line)
        if fence:
            closes = (
                opened and opened["fence"][0] == fence[0] and len(opened["fence"]) >= len(fence)
            )
            out.append((line, False))
            fence = "" if closes and not line.strip().strip(fence[0]) else fence
        elif html:
            out.append((line, False))
            html = until.lower() not in line.lower() if until else bool(line.strip())
        elif opened:
            fence = opened["fence"]
            out.append((line, False))
        elif _HTML.match(line):
            raw = _RAW.match(line)
            until = "-->" if line.lstrip().startswith("<!--") else ""
            until = f"</{raw['tag']}>" if raw else until
            html = until.lower() not in line.lower() if until else True
            out.append((line, False))
        else:
            out.append((line, not line.startswith(("\t", "    "))))
    return out


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
