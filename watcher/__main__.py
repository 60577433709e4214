"""`python -m watcher` is the `watch` command."""

from watcher.cli import main

raise SystemExit(main())
