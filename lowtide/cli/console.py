"""The two consoles: results on stdout, progress and messages on stderr."""

from rich.console import Console

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # messages stay one line each
