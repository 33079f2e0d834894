"""Checkpoints: weights via save_pretrained, plus optimizer, scheduler, step and RNG state, so a
resumed run takes exactly the step an uninterrupted run would have taken."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import torch

from rl.models.quiet import quiet_progress_bars

LATEST = "latest"


def checkpoints_dir(run_dir: Path) -> Path:
    return run_dir / "checkpoints"


def save_checkpoint(
    run_dir: Path,
    step: int,
    *,
    models: dict[str, Any],  # name -> object with save_pretrained (policy, tokenizer, critic)
    trainer_state: dict[str, Any],
) -> Path:
    root = checkpoints_dir(run_dir)
    final = root / f"step-{step:06d}"
    partial = root / f".step-{step:06d}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    with quiet_progress_bars():  # no tqdm bars in the middle of the trainer's progress bar
        for name, model in models.items():
            target = partial / ("policy" if name == "tokenizer" else name)
            model.save_pretrained(target)
    torch.save({**trainer_state, "rng": rng_state()}, partial / "trainer_state.pt")
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)  # a half-written checkpoint is never the latest one
    (root / LATEST).write_text(final.name)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    pointer = checkpoints_dir(run_dir) / LATEST
    if not pointer.exists():
        return None
    path = checkpoints_dir(run_dir) / pointer.read_text().strip()
    return path if (path / "trainer_state.pt").exists() else None


def load_trainer_state(checkpoint: Path) -> dict[str, Any]:
    """The step, optimizer, scheduler and RNG state: tensors and plain values only. A run
    directory may be anyone's, and a full unpickling runs whatever code the file names."""
    path = checkpoint / "trainer_state.pt"
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # a cut file, or one naming code: torch's errors vary by cause
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(
            f"{path}: cannot read this checkpoint ({first[:200]}); delete the checkpoint "
            "folder to resume from the one before, or start without trainer.resume"
        ) from None
    if not isinstance(state, dict):
        raise ValueError(f"{path}: not a trainer state (a {type(state).__name__})")
    return state


def rng_state() -> dict[str, Any]:
    state = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
