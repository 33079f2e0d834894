"""Prompt sources: inline list, YAML file, JSONL, a datasets directory; and the batch order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rl.config import DataConfig
from rl.data import DataError, PromptSampler, load_prompts

pytestmark = pytest.mark.unit


def test_inline_yaml_and_jsonl(tmp_path: Path) -> None:
    assert load_prompts(DataConfig(prompts=["a", "b"])) == ["a", "b"]
    (tmp_path / "p.yaml").write_text("prompts:\n  - one\n  - two\n")
    assert load_prompts(DataConfig(path=str(tmp_path / "p.yaml"))) == ["one", "two"]
    rows = [{"question": "q1"}, {"question": "q2"}]
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    config = DataConfig(path=str(tmp_path / "p.jsonl"), prompt_field="question")
    assert load_prompts(config) == ["q1", "q2"]


def test_datasets_directory(tmp_path: Path) -> None:
    import datasets

    dataset = datasets.DatasetDict(
        {"train": datasets.Dataset.from_dict({"prompt": ["x", "y", "z"]})}
    )
    dataset.save_to_disk(str(tmp_path / "ds"))
    assert load_prompts(DataConfig(path=str(tmp_path / "ds"))) == ["x", "y", "z"]
    with pytest.raises(DataError, match=r"data\.split: 'test' not in"):
        load_prompts(DataConfig(path=str(tmp_path / "ds"), split="test"))


@pytest.mark.parametrize(
    "content, config, message",
    [
        (None, {"path": "missing.jsonl"}, "not found"),
        ("{not json}\n", {"path": "p.jsonl"}, "p.jsonl:1: not valid JSON"),
        ('{"text": "a"}\n', {"path": "p.jsonl"}, "p.jsonl:1: no 'prompt' field"),
        ("", {"path": "p.yaml"}, "must hold a list"),
        ("prompts: []\n", {"path": "p.yaml"}, "empty"),
        (None, {}, "no prompts"),
    ],
)
def test_bad_sources_say_what_is_wrong(tmp_path: Path, content, config, message) -> None:
    if content is not None:
        (tmp_path / config["path"]).write_text(content)
    if "path" in config:
        config = {**config, "path": str(tmp_path / config["path"])}
    with pytest.raises(DataError, match=message):
        load_prompts(DataConfig(**config))


def test_sampler_covers_every_prompt_once_per_epoch_and_splits_ranks() -> None:
    prompts = [f"p{i}" for i in range(8)]
    single = PromptSampler(prompts, 4, seed=0, shuffle=True)
    epoch0 = single.batch(0, 0) + single.batch(0, 1)
    assert sorted(epoch0) == sorted(prompts)
    assert single.batch(1, 0) + single.batch(1, 1) != epoch0  # reshuffled per epoch
    assert single.batch(0, 1) == PromptSampler(prompts, 4, seed=0, shuffle=True).batch(0, 1)
    ranks = [PromptSampler(prompts, 2, seed=0, shuffle=True, rank=r, world_size=2) for r in (0, 1)]
    step0 = ranks[0].batch(0, 0) + ranks[1].batch(0, 0)
    assert len(set(step0)) == 4  # disjoint shards
