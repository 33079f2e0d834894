"""torchrun support: one process per device. Every collective lowtide runs goes through here, so
that its bytes and time are counted (rl.comm.COMM)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from rl.comm import COMM


@dataclass(frozen=True)
class World:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    owns_group: bool = False  # lowtide joined the process group, so lowtide leaves it

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def init_world(device: torch.device) -> World:
    """Join the process group when launched by torchrun (WORLD_SIZE > 1); else a world of one."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size == 1:
        return World()
    owns_group = not dist.is_initialized()
    if owns_group:
        # On a GPU, gradients go over NCCL; the small CPU tensors of metric reductions and stop
        # votes over gloo (a group of NCCL alone refuses CPU tensors).
        dist.init_process_group(backend="cpu:gloo,cuda:nccl" if device.type == "cuda" else "gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    world = World(dist.get_rank(), dist.get_world_size(), local_rank, owns_group)
    if device.type == "cuda":
        torch.cuda.set_device(world.local_rank)
    return world


def device_for(world: World, device: torch.device) -> torch.device:
    return torch.device("cuda", world.local_rank) if device.type == "cuda" else device


def all_reduce(tensor: torch.Tensor, op: dist.ReduceOp.RedOpType = dist.ReduceOp.SUM) -> None:
    """In place, on every rank of the default group."""
    with COMM.timed(tensor):
        dist.all_reduce(tensor, op=op)


def gather_floats(values: torch.Tensor, world: World) -> torch.Tensor:
    """All ranks' 1-D float tensors (same length on every rank), concatenated in rank order."""
    if not world.distributed:
        return values
    parts = [torch.empty_like(values) for _ in range(world.world_size)]
    values = values.contiguous()
    with COMM.timed(values):
        dist.all_gather(parts, values)
    return torch.cat(parts)


def any_rank(flag: bool, world: World) -> bool:
    """True on every rank when it is true on any rank (every rank must call it)."""
    if not world.distributed:
        return flag
    vote = torch.tensor([float(flag)])
    all_reduce(vote, dist.ReduceOp.MAX)
    return bool(vote.item())


def shutdown(world: World) -> None:
    """Leave the process group lowtide joined (one the caller set up stays theirs)."""
    if world.owns_group and dist.is_initialized():
        dist.destroy_process_group()
