"""The run config: sections from every package composed, loaded and explained."""

from lowtide.config.run_config import (
    RunConfig,
    ServiceConfig,
    dump_run_config,
    load_run_config,
    load_service_config,
)

__all__ = [
    "RunConfig",
    "ServiceConfig",
    "dump_run_config",
    "load_run_config",
    "load_service_config",
]
