"""How long the CLI takes to answer the commands people run all the time.

Config commands must stay light (no torch import). Baseline: a bare Python start, measured in the
same run, interleaved. Prints medians and ratios; run with `make bench` (OMP_NUM_THREADS=1).
`config check` reads configs/quickstart.yaml with its model pointed at tiny models built for the
run (the check wants the directory to exist). Knob: BENCH_RUNS (7).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from _quick import announce, knob, tiny_models

REPO = Path(__file__).resolve().parent.parent
RUNS = knob("RUNS", 7, 1)


def commands(policy: Path) -> dict[str, list[str]]:
    return {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "lowtide --help": [sys.executable, "-m", "lowtide", "--help"],
        "lowtide config check": [
            sys.executable, "-m", "lowtide", "config", "check", "--config",
            "configs/quickstart.yaml", f"--model.actor.model_name_or_path={policy}",
        ],
        "import torch + transformers": [sys.executable, "-c", "import torch, transformers"],
    }  # fmt: skip


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[1:])} failed:\n{result.stderr[-3000:]}")
    return time.perf_counter() - start


def main() -> None:
    announce()
    with tiny_models(sft_steps=0, any_weights=True) as models:  # only its directory is checked
        measured = commands(models.policy)
        samples: dict[str, list[float]] = {name: [] for name in measured}
        for _ in range(RUNS):  # interleaved: machine noise hits every command alike
            for name, command in measured.items():
                samples[name].append(timed(command))
    baseline = statistics.median(samples["python -c pass (baseline)"])
    print(f"{'command':32} {'median s':>9} {'x baseline':>11}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:32} {median:9.3f} {median / baseline:10.1f}x")
    config_check = statistics.median(samples["lowtide config check"])
    heavy = statistics.median(samples["import torch + transformers"])
    print(f"config check / torch+transformers import: {config_check / heavy:.2f}")


if __name__ == "__main__":
    main()
