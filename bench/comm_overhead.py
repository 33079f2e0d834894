"""What measuring communication costs (`system/comm_bytes`, `system/comm_s`): two CPU processes
over gloo, the tiny policy under DDP.

1. a backward pass with DDP's built-in all-reduce vs the same all-reduce as a Python comm hook
   (torch's `allreduce_hook`) vs the measuring hook (rl.comm), in interleaved rounds (goal:
   measuring <= 1.05x built-in);
2. a metric reduction (a float64 vector of 40 values) through rl.distributed.all_reduce vs a
   bare dist.all_reduce.
Knobs: BENCH_ROUNDS (5), BENCH_ITERS (20).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from _quick import announce, knob, sized, tiny_models

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
ROUNDS = knob("ROUNDS", 5, 1)
ITERS = knob("ITERS", 20, 2)
# Quick: the same collectives on a smaller batch, fewer times.
BATCH = sized((8, 48), (2, 8))  # sequences x tokens a backward pass
REDUCTIONS = sized(200, 10)  # metric reductions a timing
WRAPPER_CALLS = sized(10_000, 100)


def worker(rank: int, policy_dir: str, store: str, results: dict) -> None:
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    from torch.nn.parallel import DistributedDataParallel
    from transformers import AutoModelForCausalLM

    from rl.comm import COMM
    from rl.distributed import all_reduce
    from rl.models.quiet import quiet_progress_bars

    torch.set_num_threads(1)
    # a file rendezvous: a probed TCP port can be taken before the store binds it
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    torch.manual_seed(0)
    with quiet_progress_bars():
        models = {
            name: DistributedDataParallel(AutoModelForCausalLM.from_pretrained(policy_dir))
            for name in ("built-in", "python hook", "measuring hook")
        }
    models["python hook"].register_comm_hook(None, allreduce_hook)
    models["measuring hook"].register_comm_hook(None, COMM.ddp_hook)
    batch = torch.randint(3, 200, BATCH)

    def backward_s(model: torch.nn.Module) -> float:
        started = time.perf_counter()
        for _ in range(ITERS):
            model.zero_grad(set_to_none=True)
            model(input_ids=batch, labels=batch).loss.backward()
        return (time.perf_counter() - started) / ITERS

    for model in models.values():  # warm-up (and DDP's bucket rebuild)
        backward_s(model)
    times: dict[str, list[float]] = {name: [] for name in models}
    names = list(models)
    for round_ in range(ROUNDS):  # each variant goes first, second and last in turn
        for name in names[round_ % 3 :] + names[: round_ % 3]:
            times[name].append(backward_s(models[name]))
    seen = COMM.take()

    vector = torch.zeros(40, dtype=torch.float64)

    def reduce_us(reduce) -> float:
        dist.barrier()
        started = time.perf_counter()
        for _ in range(REDUCTIONS):
            reduce(vector)
        return (time.perf_counter() - started) / REDUCTIONS * 1e6

    small: dict[str, list[float]] = {"bare": [], "measured": []}
    for round_ in range(ROUNDS):
        pairs = [("bare", dist.all_reduce), ("measured", all_reduce)]
        for name, reduce in pairs if round_ % 2 else pairs[::-1]:
            small[name].append(reduce_us(reduce))
    started = time.perf_counter()
    for _ in range(WRAPPER_CALLS):
        with COMM.timed(vector):
            pass
    wrapper_us = (time.perf_counter() - started) / WRAPPER_CALLS * 1e6
    if rank == 0:
        results.update(
            {name: statistics.median(values) for name, values in times.items()},
            bytes_per_backward=seen["system/comm_bytes"] / ((ROUNDS + 1) * ITERS),
            small_bare=statistics.median(small["bare"]),
            small_measured=statistics.median(small["measured"]),
            wrapper_us=wrapper_us,
        )
    dist.destroy_process_group()


def main() -> None:
    import tempfile

    import torch.multiprocessing as mp

    announce()
    with tiny_models(sft_steps=0, any_weights=True) as models:  # weights do not change the cost
        policy = models.policy
        manager = mp.Manager()
        results = manager.dict()
        with tempfile.TemporaryDirectory() as rendezvous:
            store = str(Path(rendezvous) / "store")
            mp.spawn(worker, args=(str(policy), store, results), nprocs=2)
    print(f"backward + all-reduce, tiny policy, 2 ranks (median of {ROUNDS} x {ITERS}):")
    for name in ("built-in", "python hook", "measuring hook"):
        ratio = results[name] / results["built-in"]
        print(f"  {name:22} {results[name] * 1000:8.2f} ms  {ratio:6.3f}x")
    print("  (goal: measuring hook <= 1.05x built-in)")
    print(f"  counted per backward     {results['bytes_per_backward'] / 2**20:8.2f} MiB")
    print("metric reduction, 40 float64 values:")
    print(f"  bare dist.all_reduce     {results['small_bare']:8.1f} us")
    print(f"  measured all_reduce      {results['small_measured']:8.1f} us")
    print(f"  ratio                    {results['small_measured'] / results['small_bare']:8.3f}x")
    print(f"  the counting alone       {results['wrapper_us']:8.1f} us (no collective inside)")


if __name__ == "__main__":
    main()
