"""`lowtide config show|check|reference`: the resolved run config (secrets masked), what `train`
would refuse in it, and the reference of every key."""

from __future__ import annotations

from pathlib import Path

import typer

from lowtide.cli.usage import RUN_CONFIG, reads
from lowtide.config import dump_run_config, load_run_config
from lowtide.console import err, out

app = typer.Typer(help="Show or check a run config; list every key.", no_args_is_help=True)
READS_RUN_CONFIG = reads(*RUN_CONFIG)  # --config and --section.key=value overrides
ConfigOption = typer.Option(None, "--config", "-c", help="YAML run config", show_default=False)


@app.command(cls=READS_RUN_CONFIG)
def show(ctx: typer.Context, config: Path | None = ConfigOption) -> None:
    """Print the resolved config (file + environment + --dotted.key=value flags), secrets masked."""
    out.print(dump_run_config(load_run_config(config, ctx.args)), end="", markup=False)


@app.command(cls=READS_RUN_CONFIG)
def check(ctx: typer.Context, config: Path | None = ConfigOption) -> None:
    """Check everything `train` checks before its first step, without loading a model: exit 0
    and say what was checked, or print every problem and exit 2."""
    from lowtide.config.preflight import require_runnable

    report = require_runnable(load_run_config(config, ctx.args), config, ctx.args)
    lines = [f"{config or 'defaults'}: ok", *(f"  {line}" for line in report.checked)]
    err.print("\n".join(lines), markup=False)


@app.command()
def reference() -> None:
    """Print every config key with its type, default and meaning (Markdown: docs/config.md)."""
    from lowtide.config.reference import render

    out.print(render(), end="", markup=False, emoji=False)
