"""torchrun support: one process per device, gloo on CPU, nccl on GPU."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class World:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

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
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    world = World(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))
    if device.type == "cuda":
        torch.cuda.set_device(world.local_rank)
    return world


def device_for(world: World, device: torch.device) -> torch.device:
    return torch.device("cuda", world.local_rank) if device.type == "cuda" else device


def gather_floats(values: torch.Tensor, world: World) -> torch.Tensor:
    """All ranks' 1-D float tensors (same length on every rank), concatenated in rank order."""
    if not world.distributed:
        return values
    parts = [torch.empty_like(values) for _ in range(world.world_size)]
    dist.all_gather(parts, values.contiguous())
    return torch.cat(parts)


def barrier(world: World) -> None:
    if world.distributed:
        dist.barrier()


def shutdown(world: World) -> None:
    if world.distributed and dist.is_initialized():
        dist.destroy_process_group()
