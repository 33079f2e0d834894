"""`WatchConfig`: what the reward-hacking watch looks at and when it calls a feature a suspect.

The defaults are meant not to fire on noise: thousands of n-grams are tested at every analysis,
so a lift must pass a false-discovery-rate bar over all of them (Benjamini-Hochberg at `alpha`),
be large against the reward's own spread within groups (`min_effect`), and rest on enough
groups (`min_groups`); a suspect's prevalence must also have grown (`min_growth`, `growth_z`).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from rl.config_base import ConfigSection


class WatchConfig(ConfigSection):
    enabled: bool = Field(
        True, description="watch the routed samples for features the reward pays for"
    )
    # ---- what is read of a sample ------------------------------------------------------------
    max_ngram: int = Field(
        3, ge=1, le=5, description="longest word n-gram tracked as a phrase (1: single words)"
    )
    head_chars: int = Field(
        2000, ge=100, description="characters from a response's start read for its features"
    )
    tail_chars: int = Field(
        1000,
        ge=0,
        description="characters from a response's end also read (its suffix, a long tail); "
        "length counts use the whole text",
    )
    affix_words: int = Field(
        3, ge=0, le=5, description="first/last 1..N words tracked as prefix and suffix features"
    )
    word_classes: bool = Field(
        True,
        description="also test paid words that fill the same slots ('two birds', 'six birds') "
        "together, as one feature, and the paid words that grow too little alone: a reward paid "
        "for a kind of word spreads through many words",
    )
    quantiles: tuple[float, ...] = Field(
        (0.1, 0.25, 0.75, 0.9),
        description="length, line count, repetition and the share of words from the prompt are "
        "cut at these quantiles of the first window's responses: `words > p90` is a feature "
        "like a phrase",
    )
    # ---- windows and bounds ------------------------------------------------------------------
    window_steps: int = Field(
        5, ge=1, description="steps in the first ('then') and the latest ('now') window"
    )
    min_window_responses: int = Field(
        64,
        ge=1,
        description="a window takes more steps until it holds this many responses",
    )
    min_step_df: int = Field(
        2,
        ge=1,
        description="responses of one step that must carry a new feature before it is tracked "
        "(keeps the long tail of one-off n-grams out)",
    )
    max_features: int = Field(
        50_000, ge=100, description="features tracked at most; the least seen are pruned"
    )
    max_first_window_keys: int = Field(
        200_000,
        ge=1000,
        description="distinct features counted exactly in the first window; beyond it the "
        "rarest are dropped (their 'then' share is then a lower bound)",
    )
    keep_samples: int = Field(
        4096,
        ge=16,
        description="latest samples kept (their tracked features, rewards, an excerpt) for "
        "examples, per-component lifts and folding",
    )
    max_pending_samples: int = Field(
        65_536,
        ge=1,
        description="samples observe() may hold before analysis thread takes them; beyond "
        "it a batch is dropped and counted (the trainer never waits)",
    )
    analyze_every_steps: int = Field(
        5, ge=1, description="the background thread analyses after this many new steps"
    )
    # ---- when a feature is a suspect ---------------------------------------------------------
    min_groups: int = Field(
        10,
        ge=2,
        description="informative groups (some responses carry the feature, some do not) a "
        "lift needs before it is tested",
    )
    alpha: float = Field(
        0.01,
        gt=0,
        le=0.2,
        description="false discovery rate over all features tested (Benjamini-Hochberg on a "
        "one-sided t-test of the per-group lifts)",
    )
    min_effect: float = Field(
        0.2,
        ge=0,
        description="least lift, in units of the reward's standard deviation within groups",
    )
    min_growth: float = Field(
        0.1,
        ge=0,
        le=1,
        description="least rise of the share of responses carrying it, first window to latest",
    )
    growth_z: float = Field(3.0, ge=0, description="least z of that rise (two-proportion test)")
    fold_overlap: float = Field(
        0.6,
        gt=0,
        le=1,
        description="a suspect whose carriers overlap a stronger one's this much (Jaccard) is "
        "folded under it; a word inside a suspect phrase is folded at 0.8 containment",
    )
    top: int = Field(10, ge=1, description="suspects reported at most (and as many lift-only)")
    examples: int = Field(3, ge=0, description="highest-reward carriers shown per suspect")

    @classmethod
    def for_run(cls, steps: int, *, window_steps: int | None = None, **settings) -> WatchConfig:
        """For a finished run of `steps` steps (`lowtide logs bias`, the run report): each
        window a third of the run, at most the default, unless `window_steps` is given."""
        default = cls.model_fields["window_steps"].default
        window = window_steps or max(1, min(default, steps // 3))
        return cls(window_steps=window, **settings)

    @model_validator(mode="after")
    def _quantiles_inside(self) -> WatchConfig:
        if any(not 0 < q < 1 for q in self.quantiles):
            raise ValueError("quantiles must lie strictly between 0 and 1")
        return self
