"""The run config: sections from every package composed, loaded and explained."""

from lowtide.config.run_config import RunConfig, dump_run_config, load_run_config

__all__ = ["RunConfig", "dump_run_config", "load_run_config"]
