"""The two consoles: results on stdout, progress and messages on stderr."""

import sys

from rich.console import Console

# Piped or captured output is not cut to 80 columns: tables keep whole URLs and paths.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # messages stay one line each
