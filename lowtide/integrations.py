"""What every adapter for another trainer (TRL, verl, OpenRLHF, `lowtide ingest`) starts from: a
`Router` built from the run config's `sampling` and `queue` sections, read and checked exactly
as the other commands read them (the file, then REDIS_URL and other variables, then overrides).

The config file comes from the argument, else `LOWTIDE_CONFIG`, else none (defaults + the
environment). A mistake raises `lowtide.errors.UsageError` with one line per problem.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lowtide.config import load_service_config
from lowtide.errors import UsageError
from lowtide.services.credentials import environ_with_env_file
from sampling.config import QueueConfig, SamplingConfig
from sampling.routing import Router
from sampling.wiring import router_for_queue

CONFIG_VAR = "LOWTIDE_CONFIG"


@dataclass(frozen=True)
class RoutingSettings:
    """What a router is built from: the run config's `sampling` and `queue`, and its seed."""

    sampling: SamplingConfig
    queue: QueueConfig
    seed: int


def routing_settings(
    config: str | Path | None = None,
    overrides: list[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    processes: int | None = None,
) -> RoutingSettings:
    """`processes`: how many processes of the run route, as the trainer knows it (verl's reward
    workers): how a review budget is shared when the config does not say."""
    # A trainer's own script reads no `.env` itself: the Redis password `lowtide up` kept there
    # (and the other service variables) are taken from it without touching os.environ. Which
    # config to load never comes from it (environ_with_env_file leaves LOWTIDE_CONFIG alone).
    path = config if config is not None else (environ or os.environ).get(CONFIG_VAR) or None
    environ = environ_with_env_file(os.environ) if environ is None else environ
    loaded = load_service_config(path, overrides, environ)
    sampling, budget = loaded.sampling, loaded.sampling.review_budget
    if processes and budget is not None and budget.processes is None:
        shared = budget.model_copy(update={"processes": processes})
        sampling = sampling.model_copy(update={"review_budget": shared})
    return RoutingSettings(sampling, loaded.queue, loaded.trainer.seed)


def router_from_config(
    config: str | Path | None = None,
    overrides: list[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    processes: int | None = None,
) -> Router:
    """A router with its own producer, from `routing_settings`."""
    settings = routing_settings(config, overrides, environ=environ, processes=processes)
    return router_for_queue(settings.sampling, settings.queue, seed=settings.seed)


@contextmanager
def adapter_setup(router: Router | None = None) -> Iterator[None]:
    """Where an adapter is set up: a mistake in its settings (`AdapterSetupError`, or another
    `ValueError` from what it checks) is raised as `UsageError`, before training starts, and the
    router built for it is closed."""
    try:
        yield
    except ValueError as error:
        if router is not None:
            router.close(deadline_s=0.5)
        raise UsageError(str(error)) from None
