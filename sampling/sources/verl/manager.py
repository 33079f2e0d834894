"""The verl reward manager that routes: it wraps the manager verl would use, returns exactly
what that one returns (an exception propagates as it is), and hands each scored request to the
adapter (`sampling.sources.verl.adapter`). The public class, built from the `lowtide` section
of verl's config, is `lowtide.verl.LowtideRewardManager`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verl import DataProto
from verl.experimental.reward_loop.reward_manager import register
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
from verl.experimental.reward_loop.reward_manager.registry import REWARD_MANAGER

from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, Router
from sampling.sources.verl.adapter import RewardRouting


@dataclass(frozen=True)
class Routing:
    """What the wrapper needs besides verl's own arguments."""

    wrapped: type[RewardManagerBase]  # the manager whose scores verl trains on
    router: Router
    info: BatchInfo  # run, rank, model, generation; the step is set per batch
    flush_idle_s: float = 1.0


class RoutingRewardManager(RewardManagerBase):
    """A verl reward manager that returns what the wrapped one returns and routes each scored
    sample. Subclasses supply `Routing` (lowtide.verl.LowtideRewardManager reads it from the
    `lowtide` section of verl's config)."""

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any = None,
        *,
        routing: Routing,
        **wrapped_kwargs: Any,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        self.wrapped = routing.wrapped(
            config=config, tokenizer=tokenizer, compute_score=compute_score, **wrapped_kwargs
        )
        self.batcher = RewardRouting(
            routing.router, routing.info, self._decode, flush_idle_s=routing.flush_idle_s
        )

    async def run_single(self, data: DataProto) -> Any:
        result = await self.wrapped.run_single(data)
        self.batcher.add(data, result)
        return result

    def flush(self) -> None:
        """Route what is waiting now (a round of its own), and wait for it."""
        self.batcher.flush()

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        self.batcher.close(deadline_s)

    def _decode(self, ids: Any) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)


def register_manager(name: str, manager: type[RoutingRewardManager]) -> None:
    """`manager` in verl's reward-manager registry as `name`. The registry refuses a second
    class under one name: a module loaded again by file path (`module.path:
    /.../lowtide/verl.py`) keeps the first registration."""
    if name not in REWARD_MANAGER:
        register(name)(manager)
