"""Shared by the benchmarks: quick mode, and the tiny models they train and time.

`BENCH_QUICK=1` shrinks every bench's runs, steps and sizes so that it ends in seconds to about a
minute, through the same code paths and printing the same lines; its figures mean nothing (each
bench says so, first and last), and a noise-floor repeat (`<run>_again`) reuses its base's run
(`repeat_or_measure`). tests/test_benches.py runs every bench this way. A knob set in
the environment (`BENCH_RUNS=3`) wins over both sizes.

`BENCH_TINY_MODELS=DIR` reuses the tiny models in DIR (`lowtide model tiny --out DIR`: 100 SFT
steps, seed 0) where a bench wants those (or needs only their shapes), instead of building them
again (~10 s) in a temporary directory.
Files whose name starts with `_` are helpers like this one, not benches (`make bench` and the
test run `bench/[!_]*.py`).
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

REPO = Path(__file__).resolve().parent.parent
if "--quick" in sys.argv[1:]:  # a bench's own flag (loop_value, review_scale): the same mode,
    os.environ["BENCH_QUICK"] = "1"  # its children included, and the note first and last
QUICK = os.environ.get("BENCH_QUICK", "").strip().lower() not in ("", "0", "false", "no")
N = TypeVar("N", int, float)
NOTE = "BENCH_QUICK=1: quick mode, a smoke run; the figures are not meaningful"


def knob(name: str, full: N, quick: N, *, minimum: N | None = None) -> N:
    """`BENCH_<name>` when set, else `quick` in quick mode, else `full`. A set value is read as
    the type of `full` and must be at least `minimum` (by default 1 for a count, above 0 for a
    number): anything else ends the bench with one line on stderr and exit status 2, before it
    starts anything."""
    raw = os.environ.get(f"BENCH_{name}")
    if not raw:
        return quick if QUICK else full
    kind = type(full)
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if minimum is not None:
        fine, bound = value is not None and value >= minimum, f">= {minimum}"
    elif kind is int:
        fine, bound = value is not None and value >= 1, ">= 1"
    else:  # nan and inf compare false or are refused here too
        fine, bound = value is not None and math.isfinite(value) and value > 0, "> 0"
    if not fine:
        what = "a whole number" if kind is int else "a number"
        print(f"BENCH_{name}={raw!r}: must be {what} {bound}", file=sys.stderr)
        sys.exit(2)
    return value  # type: ignore[return-value]


def sized(full: Any, quick: Any) -> Any:
    """`quick` in quick mode, else `full`: for sizes that have no knob of their own."""
    return quick if QUICK else full


def repeat_or_measure(kind: str, results: dict[str, Any], measure: Callable[[str], Any]) -> Any:
    """`measure(kind)`, kept in `results`. A noise-floor repeat (`<base>_again`: the same code as
    `<base>`, measured again) is, in quick mode, the base's result: quick figures mean nothing,
    and the repeat's process runs no code the base did not."""
    base = kind.removesuffix("_again")
    if QUICK and base != kind and base in results:
        results[kind] = results[base]
    else:
        results[kind] = measure(kind)
    return results[kind]


def announce() -> None:
    """In quick mode, say so now and again at exit, where the figures end (on stdout, with
    them). Children of a bench print JSON for their parent, so only a bench's main calls this."""
    if QUICK:
        print(NOTE, flush=True)
        atexit.register(lambda: print(f"\n({NOTE})", flush=True))


class TinyModels(NamedTuple):
    policy: Path
    reward_model: Path


@contextlib.contextmanager
def tiny_models(sft_steps: int = 100, seed: int = 0, *, any_weights: bool = False) -> Iterator[Any]:
    """The tiny policy and reward model (rl.models.tiny): those in BENCH_TINY_MODELS when it is
    set and they are what is asked for (100 SFT steps, seed 0; or `any_weights`: a bench that
    needs the files, shapes and tokenizer, not these weights), else built into a temporary
    directory that goes at the end."""
    given = os.environ.get("BENCH_TINY_MODELS")
    if given and (any_weights or (sft_steps, seed) == (100, 0)):
        paths = TinyModels(Path(given) / "policy", Path(given) / "reward_model")
        if not (paths.policy / "config.json").exists():
            sys.exit(f"BENCH_TINY_MODELS={given} holds no tiny models (lowtide model tiny --out)")
        yield paths
        return
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from rl.models.tiny import build_tiny_models  # torch: only when building

    with tempfile.TemporaryDirectory() as tmp:
        yield build_tiny_models(Path(tmp), sft_steps=sft_steps, seed=seed)


def run_with_out(args: Any, name: str, run: Callable[[Any], int]) -> int:
    """`run(args)` with `args.out` set: a quick run given no `--out` writes to a temporary
    directory (a smoke run leaves nothing behind); else `--out`, or outputs/bench/<name>."""
    if args.out is None and args.quick and QUICK:
        with tempfile.TemporaryDirectory() as out:
            args.out = Path(out)
            return run(args)
    args.out = args.out or REPO / "outputs" / "bench" / name
    return run(args)
