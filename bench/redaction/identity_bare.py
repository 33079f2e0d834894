"""Which identity numbers of `identity_numbers.json` could be found bare, with no word naming
them: for each stdnum module, how many benign texts of the bench (bench/redaction/corpus.py's,
and the adversarial corpus's everyday numbers: orders, invoices, timestamps, prices) hold a run
of letters and digits that passes its check. A module may be found bare only where that count
is 0 over every seed, and a random number of its shape rarely passes (identity_table.py's
`left_out_no_check` lists the worst).

    python bench/redaction/identity_bare.py   # BENCH_SEEDS (0,1,2), BENCH_BENIGN (3000)
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from adversarial import benign_transformed  # noqa: E402
from corpus import benign  # noqa: E402

from sampling.redaction.views import key  # noqa: E402

# A candidate: a run of letters and digits, one separator at most between groups, 6 digits or more.
CANDIDATE = re.compile(r"(?<![\w])[A-Za-z0-9]+(?:[ ./-][A-Za-z0-9]+){0,4}(?![\w])")


def candidates(text: str) -> set[str]:
    found = set()
    for match in CANDIDATE.finditer(key(text)):
        groups = re.split(r"(?<=[A-Za-z0-9])(?=[ ./-])", match.group())
        for first in range(len(groups)):
            for last in range(first + 1, len(groups) + 1):
                value = "".join(groups[first:last]).lstrip(" ./-")
                if sum(char.isdigit() for char in value) >= 6:
                    found.add(value)
    return found


def _valid(module: object, value: str) -> bool:
    try:
        return bool(module.is_valid(value))  # type: ignore[attr-defined]
    except Exception:
        return False


def main() -> None:
    seeds = [int(s) for s in os.environ.get("BENCH_SEEDS", "0,1,2").split(",")]
    count = int(os.environ.get("BENCH_BENIGN", "3000"))
    table = json.loads(
        (HERE.parents[1] / "sampling/redaction/finders/identity_numbers.json").read_text()
    )
    modules = {name: importlib.import_module(f"stdnum.{name}") for name in table["modules"]}
    texts = [t for seed in seeds for t in benign(seed, count)]
    texts += [t for seed in seeds for _, t in benign_transformed(seed, 200)]
    touched: Counter[str] = Counter()
    for text in texts:
        values = candidates(text)
        for name, module in modules.items():
            if any(_valid(module, value) for value in values):
                touched[name] += 1
    print(f"{len(texts)} benign texts, seeds {seeds}; texts holding a bare number that passes:")
    for name in sorted(modules, key=lambda n: (-touched[n], n)):
        print(
            f"  {name:<22} {touched[name]:>5}  {1000 * touched[name] / len(texts):7.2f} per 1,000"
        )
    print("rare (0 texts):", ", ".join(sorted(n for n in modules if not touched[n])))


if __name__ == "__main__":
    main()
