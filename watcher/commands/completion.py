"""`watch completion SHELL`: shtab's script for the parser, with install lines that say
what docs/editors.md says (shtab's own header suggests other paths)."""

from __future__ import annotations

import argparse
import re

# Where docs/editors.md installs each script; the shell finds it there on its own.
INSTALL = {
    "bash": "watch completion bash > ~/.local/share/bash-completion/completions/watch",
    "zsh": 'watch completion zsh > "${fpath[1]}/_watch"',
    "tcsh": "watch completion tcsh > ~/.tcsh_completion_watch, then in ~/.tcshrc: "
    "source ~/.tcsh_completion_watch",
}
_USAGE = re.compile(r"^# Usage:\n(?:#.*\n)*?(?=# See also|[^#]|\n)", re.MULTILINE)


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for `shell`, its usage lines replaced by ours."""
    import shtab

    text = shtab.complete(parser, shell=shell)
    usage = f"# Install (docs/editors.md):\n#   {INSTALL[shell]}\n"
    return _USAGE.sub(lambda _: usage, text, count=1)
