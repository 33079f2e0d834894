"""`lowtide model tiny` writes models that load through from_pretrained like any hub model."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

from rl.models.generation import sample_completions
from tests.conftest import invoke, run_cli

pytestmark = pytest.mark.integration


def test_model_tiny_command_output_loads_and_generates(tmp_path: Path) -> None:
    out = tmp_path / "tiny"
    result = run_cli("model", "tiny", "--out", str(out), "--sft-steps", "5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert str(out / "policy") in result.stderr
    tokenizer = AutoTokenizer.from_pretrained(out / "policy")
    model = AutoModelForCausalLM.from_pretrained(out / "policy")
    assert tokenizer.pad_token and tokenizer.eos_token and tokenizer.padding_side == "left"
    assert 1_000_000 <= sum(p.numel() for p in model.parameters()) <= 5_000_000
    reward_model = AutoModelForSequenceClassification.from_pretrained(out / "reward_model")
    assert reward_model.config.num_labels == 1
    completions = sample_completions(out / "policy", ["Name a color.", "Hi."], max_new_tokens=8)
    assert len(completions) == 2 and all(isinstance(text, str) for text in completions)
    again = sample_completions(out / "policy", ["Name a color.", "Hi."], max_new_tokens=8)
    assert again == completions  # seeded


def test_model_tiny_rejects_a_negative_step_count(tmp_path: Path) -> None:
    result = run_cli("model", "tiny", "--out", str(tmp_path), "--sft-steps", "-1", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_an_out_directory_that_cannot_be_made_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any command: an OSError about a path the user gave is that path and the reason."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    # No SFT steps: the models are made in a second, then saving them fails on the path.
    code, _, err = invoke(
        capsys, "model", "tiny", "--out", str(blocker / "tiny"), "--sft-steps", "0"
    )
    assert code == 1
    (line,) = err.strip().splitlines()  # the path where making it failed, and why
    assert line.startswith(f"error: {blocker / 'tiny'}") and line.endswith(": Not a directory")
