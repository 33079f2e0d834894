"""The reward-hacking watch: response features whose presence raises the reward within a
prompt's group and whose prevalence grows over steps (see `analysis` for the statistics)."""

from sampling.selection.hacking.config import WatchConfig
from sampling.selection.hacking.features import Feature
from sampling.selection.hacking.suspects import Example, Suspect, WatchReport, share_text
from sampling.selection.hacking.watch import HackingWatch, analyze_rows

__all__ = [
    "Example",
    "Feature",
    "HackingWatch",
    "Suspect",
    "WatchConfig",
    "WatchReport",
    "analyze_rows",
    "share_text",
]
