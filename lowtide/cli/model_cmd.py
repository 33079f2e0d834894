"""`lowtide model tiny`: a local policy, tokenizer and reward model for from_pretrained."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from lowtide.console import err

app = typer.Typer(help="Build local models.", no_args_is_help=True)


@app.command()
def tiny(
    out: Path = typer.Option(Path("outputs/tiny"), "--out", help="directory to write into"),
    sft_steps: int = typer.Option(
        100, "--sft-steps", min=0, help="SFT steps on the corpus; 0 = random"
    ),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Train a byte-level BPE tokenizer and a ~1M-parameter Llama-style policy (plus a reward
    model) on the shipped corpus, in seconds on a CPU."""
    from rl.models.tiny import build_tiny_models  # torch import: only when needed

    started = time.perf_counter()
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as progress:
        tasks: dict[str, int] = {}

        def on_progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = progress.add_task(phase, total=total)
            progress.update(tasks[phase], completed=done, total=total)

        paths = build_tiny_models(out, sft_steps=sft_steps, seed=seed, on_progress=on_progress)
    err.print(
        f"Built the tiny models in {time.perf_counter() - started:.1f} s\n"
        f"  policy        {paths.policy}\n"
        f"  reward model  {paths.reward_model}\n"
        f"  use with      --model.actor.model_name_or_path={paths.policy}",
        markup=False,
    )
