"""Rollouts through OpenRLHF's own `SingleTurnAgentExecutor.execute()`, run in OpenRLHF's
virtualenv: `python openrlhf_rollouts.py SPEC.json OUT.json`.

Only vLLM's generation is replaced (it needs a GPU): `ScriptedEngine.generate` answers like
`RolloutRayActor.generate`, with the token ids of scripted responses (plus eos) instead of
sampled ones. Tokenization, the prompt/response stitching, the query decoding, the reward file
loading, the thread offload, the HTTP calls with their retries and the error handling are
OpenRLHF's. The tokenizer is lowtide's tiny one (its chat template writes a bos token).

SPEC: {"endpoints": {name: reward file or URL}, "bursts": [[{"prompt": text, "label": str,
"responses": [text, ...]}, ...], ...], "pause_s": seconds after each burst}. For each burst and
endpoint, every prompt gets len(responses) samples at once, as `generate_responses` asks for
`n_samples_per_prompt`. OUT: {name: [per sample: prompt, label, query, reward, scores,
extra_logs, reward_type]} in a fixed order.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from openrlhf.utils.agent import SingleTurnAgentExecutor

from rl.models.tiny import load_corpus, train_tokenizer


class ScriptedEngine:
    """Stands in for vLLM: the k-th request for a prompt gets that prompt's k-th response."""

    def __init__(self, tokenizer: Any, responses: dict[tuple[int, ...], list[str]]) -> None:
        self.tokenizer = tokenizer
        self.responses = responses
        self.served: dict[tuple[int, ...], int] = defaultdict(int)

    async def generate(
        self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
    ) -> SimpleNamespace:
        key = tuple(prompt_token_ids)
        text = self.responses[key][self.served[key] % len(self.responses[key])]
        self.served[key] += 1
        await asyncio.sleep(0)  # a real engine yields while it generates
        ids = self.tokenizer(text=text, add_special_tokens=False)["input_ids"]
        ids = [*ids, self.tokenizer.eos_token_id]
        output = SimpleNamespace(token_ids=ids, text=text, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[output])


def jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    return value


async def run_burst(
    executor: SingleTurnAgentExecutor, tokenizer: Any, burst: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    prompts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": item["prompt"]}],
            tokenize=False,
            add_generation_prompt=True,
        )
        for item in burst
    ]
    script = {
        tuple(tokenizer(text=prompt, add_special_tokens=False)["input_ids"]): item["responses"]
        for prompt, item in zip(prompts, burst, strict=True)
    }
    engine = ScriptedEngine(tokenizer, script)
    params = SimpleNamespace(max_tokens=64, logprobs=None)  # vLLM's SamplingParams, the fields read
    calls = [
        executor.execute(prompt, item["label"], params, 256, tokenizer, engine)
        for prompt, item in zip(prompts, burst, strict=True)
        for _ in item["responses"]
    ]
    outputs = await asyncio.gather(*calls)
    return [
        {
            "prompt": output["prompt"],
            "label": output["label"],
            "query": tokenizer.decode(output["observation_tokens"], skip_special_tokens=False),
            "reward": jsonable(output["reward"]),
            "reward_type": type(output["reward"]).__name__,
            "scores": jsonable(output["scores"]),
            "extra_logs": jsonable(output["extra_logs"]),
        }
        for output in outputs
    ]


async def main(spec: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    tokenizer = train_tokenizer(load_corpus())
    executors = {
        name: SingleTurnAgentExecutor(remote_rm_url=endpoint)
        for name, endpoint in spec["endpoints"].items()
    }
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in executors}
    for burst in spec["bursts"]:
        for name, executor in executors.items():
            results[name] += await run_burst(executor, tokenizer, burst)
        time.sleep(spec.get("pause_s", 0))
    return results


if __name__ == "__main__":
    spec_path, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    found = asyncio.run(main(json.loads(spec_path.read_text())))
    out_path.write_text(json.dumps(found))
