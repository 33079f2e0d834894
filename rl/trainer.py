"""The RL trainer: GRPO and PPO on a HuggingFace causal LM, one method per stage.

A step is rollout -> reward -> advantages -> update -> step_end; stage hooks run after each stage
with a read-only view of the per-sample batch and the step's metrics so far.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from rl.algorithms.advantages import gae_advantages, grpo_advantages, token_rewards_from_sequence
from rl.algorithms.kl import kl_per_token
from rl.algorithms.losses import clipped_policy_loss, clipped_value_loss
from rl.algorithms.masked import masked_mean, masked_sum, masked_whiten
from rl.checkpoint import latest_checkpoint, load_trainer_state, restore_rng, save_checkpoint
from rl.comm import COMM
from rl.config import (
    STAGES,
    DataConfig,
    HookSpec,
    ModelConfig,
    ModelRef,
    RewardSpec,
    Stage,
    TrainerConfig,
)
from rl.data import PromptSampler, load_prompts
from rl.distributed import World, any_rank, device_for, gather_floats, init_world, shutdown
from rl.hooks import HookRunner, StageContext, TrainerControl
from rl.metrics import StepMetrics
from rl.models.loading import (
    ValueModel,
    load_causal_lm,
    load_reference,
    load_tokenizer,
    resolve_device,
    resolve_dtype,
)
from rl.rewards import RewardBatch, RewardError, RewardSet
from rl.rewards.combine import NO_REWARDS
from rl.rollout import GenerationSettings, Rollout, generate, token_logprobs, token_values
from rl.samples import Sample
from rl.schedule import lr_lambda
from rl.token_values import with_token_values
from rl.tracking.resources import resource_metrics
from rl.tracking.router import Tracker

StepCallback = Callable[[int, int, Mapping[str, float]], None]


@dataclass
class TrainResult:
    run_id: str
    run_dir: Path
    steps: int
    metrics: dict[str, float]  # the last step's
    history: list[dict[str, float]] = field(default_factory=list)
    stop_reason: str | None = None
    last_checkpoint: Path | None = None
    elapsed_s: float = 0.0


@dataclass
class Advantages:
    per_token: torch.Tensor  # (N, T)
    per_sample: torch.Tensor  # (N,) for hooks and metrics
    returns: torch.Tensor | None  # (N, T) PPO value targets
    token_rewards: torch.Tensor | None = None  # (N, T) PPO: what GAE consumed
    kl: torch.Tensor | None = None  # (N, T) the KL that entered the reward (kl_mode: reward)


class Trainer:
    def __init__(
        self,
        trainer: TrainerConfig,
        model: ModelConfig,
        data: DataConfig,
        rewards: list[RewardSpec],
        hooks: list[HookSpec] | None = None,
        *,
        device: str = "auto",
        run_id: str | None = None,
        hook_resources: Mapping[str, Any] | None = None,
        base_dir: Path | None = None,
    ) -> None:
        if not rewards:  # before joining a process group or loading a model
            raise RewardError(NO_REWARDS)
        self.config = trainer
        self.model_config = model
        requested = resolve_device(device)
        self.world: World = init_world(requested)
        self.device = device_for(self.world, requested)
        self.run_id = run_id or time.strftime("%Y%m%d-%H%M%S")
        self.run_dir = Path(trainer.output_dir) / self.run_id

        checkpoint = latest_checkpoint(self.run_dir) if trainer.resume else None
        if trainer.resume and checkpoint is None:
            raise FileNotFoundError(
                f"trainer.resume: no checkpoint under {self.run_dir} "
                "(pass --run_id=<the run to continue>)"
            )
        self._seed(trainer.seed + self.world.rank)

        dtype = resolve_dtype(model.actor.dtype, self.device)
        actor_ref = _at(checkpoint, "policy", model.actor)
        self.tokenizer = load_tokenizer(model.actor)
        self.policy = load_causal_lm(actor_ref, self.device, dtype)
        self.reference = None
        if trainer.kl_coef > 0:  # the frozen reference is always the starting model
            self.reference = load_reference(model.reference or model.actor, self.device, dtype)
        self.critic = None
        if trainer.algorithm == "ppo":
            critic_ref = _at(checkpoint, "critic", model.critic or model.actor)
            self.critic = ValueModel.load(critic_ref, self.device, torch.float32)

        self.prompts = PromptSampler(
            load_prompts(data, base_dir),
            trainer.rollout_batch_size,
            seed=trainer.seed,
            shuffle=data.shuffle,
            rank=self.world.rank,
            world_size=self.world.world_size,
        )
        self.use_chat_template = data.chat_template
        self.rewards = RewardSet.from_specs(rewards, device=str(self.device))
        resources = {"run_id": self.run_id, **(hook_resources or {})}
        self.hooks = HookRunner.from_specs(hooks or [], resources)
        self._listening = {stage for stage in STAGES if self.hooks.has_hooks(stage)}
        self.generation = GenerationSettings(
            trainer.max_new_tokens, trainer.temperature, trainer.top_p, trainer.samples_per_prompt
        )
        epochs_steps = trainer.num_epochs * self.prompts.steps_per_epoch()
        self.total_steps = min(trainer.max_steps or epochs_steps, epochs_steps)
        self._trainable = [p for m in self._modules() for p in m.parameters()]
        self.optimizer = torch.optim.AdamW(
            self._trainable, lr=trainer.learning_rate, weight_decay=trainer.weight_decay
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lr_lambda(trainer, self._optimizer_steps_per_step() * self.total_steps)
        )
        self.policy_for_update = self._wrap(self.policy)
        self.critic_for_update = self._wrap(self.critic) if self.critic is not None else None
        self.step = 0
        self.epoch = 0
        self.control = TrainerControl()
        # Set by the caller on rank 0 only (it needs the run id chosen here); None: no logging.
        self.tracker: Tracker | None = None
        self._scored_logp: torch.Tensor | None = None
        if checkpoint is not None:
            self._restore(checkpoint)

    # ---- the loop -------------------------------------------------------------------------

    def train(self, on_step: StepCallback | None = None) -> TrainResult:
        started = time.perf_counter()
        history: list[dict[str, float]] = []
        metrics: dict[str, float] = {}
        # A resumed run starts on a saved step; a fresh one has nothing to save before step 1.
        saved_step = self.step
        last_checkpoint = latest_checkpoint(self.run_dir) if self.step else None
        COMM.take()  # communication is counted from the first step on
        stop = False
        try:
            while self.step < self.total_steps and not stop:
                self.step += 1
                metrics = self.train_step()
                history.append(metrics)
                if self._should_save():
                    last_checkpoint, saved_step = self.save(), self.step
                if on_step is not None and self.world.is_main:
                    on_step(self.step, self.total_steps, metrics)
                # Asked by a hook or a signal, on any rank: every rank stops after this step.
                stop = self._agree_to_stop()
            if saved_step != self.step:  # the end of every run is saved, once
                last_checkpoint = self.save()
            self._run_hooks("train_end", (), metrics)
        finally:
            self.hooks.close()
            if self.tracker is not None:
                self.tracker.close()
            self.rewards.close()
            shutdown(self.world)
        return TrainResult(
            run_id=self.run_id,
            run_dir=self.run_dir,
            steps=self.step,
            metrics=metrics,
            history=history,
            stop_reason=self.control.stop_reason,
            last_checkpoint=last_checkpoint,
            elapsed_s=time.perf_counter() - started,
        )

    def train_step(self) -> dict[str, float]:
        metrics = StepMetrics()
        step_started = time.perf_counter()
        epoch, step_in_epoch = divmod(self.step - 1, self.prompts.steps_per_epoch())
        self.epoch = epoch

        with _timed(metrics, "timing_s/rollout", self.device):
            rollout = self.rollout(self.prompts.batch(epoch, step_in_epoch))
        self._rollout_metrics(rollout, metrics)
        self._stage_done("rollout", self._samples(rollout), metrics.reduced())

        with _timed(metrics, "timing_s/reward", self.device):
            rewards, details, nonfinite = self.score(rollout)
            advantages = self.advantages(rollout, rewards)
        self._reward_metrics(rewards, details, nonfinite, advantages, metrics)
        samples = self._samples(rollout, rewards, details, advantages.per_sample)
        self._stage_done("reward", samples, metrics.reduced())

        with _timed(metrics, "timing_s/update", self.device):
            self.update(rollout, rewards, advantages, metrics)
        if samples and self._tokens_logged():
            samples = self._with_token_values(samples, rollout, rewards, advantages)
        self._stage_done("update", samples, metrics.reduced())

        step_s = time.perf_counter() - step_started
        tokens = float(rollout.response_mask.sum())
        metrics.add("timing_s/step", step_s, "max")
        metrics.add("perf/samples_per_s", rollout.size / step_s, "sum")
        metrics.add("perf/tokens_per_s", tokens / step_s, "sum")
        rollout_s = metrics.as_dict()["timing_s/rollout"]
        metrics.add("perf/ms_per_token", 1000 * rollout_s / max(tokens, 1.0))
        metrics.add("step", self.step, "max")
        metrics.add("epoch", epoch, "max")
        comm = COMM if self.world.distributed else None  # nothing to count in one process
        metrics.add_all(resource_metrics(self.device, comm), "max")
        for name, (value, reduce) in sorted(self.control.metrics.items()):
            metrics.add(name, value, reduce)  # what hooks reported during this step
        self.control.metrics.clear()
        reduced = metrics.reduced()
        self._stage_done("step_end", samples, reduced)
        return reduced

    # ---- stages -----------------------------------------------------------------------------

    @torch.no_grad()
    def rollout(self, prompts: list[str]) -> Rollout:
        first_group = (self.step * self.world.world_size + self.world.rank) * len(prompts)
        rollout = generate(
            self.policy,
            self.tokenizer,
            prompts,
            self.generation,
            use_chat_template=self.use_chat_template,
            first_group_id=first_group,
        )
        if self._needs_sampling_logprobs():
            self.policy.eval()
            rollout.old_logp, _ = token_logprobs(self.policy, rollout)
            self.policy.train()
        if self.reference is not None:
            rollout.ref_logp, _ = token_logprobs(self.reference, rollout)
        if self.critic is not None:
            rollout.old_values = token_values(self.critic, rollout)
        return rollout

    def score(self, rollout: Rollout) -> tuple[torch.Tensor, list[dict[str, float]], int]:
        batch = RewardBatch(
            prompts=rollout.prompts,
            responses=rollout.responses,
            truncated=rollout.truncated.tolist(),
        )
        result = self.rewards.score(batch)
        rewards = torch.tensor(result.total, dtype=torch.float32, device=self.device)
        rewards[~torch.isfinite(rewards)] = math.nan  # inf is as unusable as NaN
        return rewards, result.details, int(result.nonfinite_count)

    def advantages(self, rollout: Rollout, rewards: torch.Tensor) -> Advantages:
        config = self.config
        valid = torch.isfinite(rewards)
        mask = rollout.response_mask * valid.unsqueeze(1)
        kl = self._kl(rollout.ref_logp, rollout.old_logp) if config.kl_mode == "reward" else None
        if config.algorithm == "grpo":
            shaped = rewards
            if kl is not None:
                shaped = rewards - config.kl_coef * masked_sum(kl, mask, dim=1)
            per_sample = grpo_advantages(
                torch.nan_to_num(shaped),
                rollout.group_ids,
                valid,
                scale_by_std=config.scale_rewards,
            )
            return Advantages(per_sample.unsqueeze(1) * mask, per_sample, None, kl=kl)
        token_rewards = token_rewards_from_sequence(
            torch.nan_to_num(rewards), mask, kl, config.kl_coef
        )
        advantages, returns = gae_advantages(
            token_rewards, rollout.old_values, mask, gamma=config.gamma, lam=config.gae_lambda
        )
        advantages = masked_whiten(advantages, mask) * mask
        per_sample = masked_mean(advantages, mask, dim=1)
        return Advantages(advantages, per_sample, returns, token_rewards, kl)

    def update(
        self,
        rollout: Rollout,
        rewards: torch.Tensor,
        advantages: Advantages,
        metrics: StepMetrics,
    ) -> None:
        config = self.config
        mask = rollout.response_mask * torch.isfinite(rewards).unsqueeze(1)
        size = rollout.size
        mini = min(config.mini_batch_size or size, size)
        totals: dict[str, float] = {}
        updates = 0
        self._scored_logp = None  # the sampling log-probs, when only the pass below scores them
        if rollout.old_logp is None and self._tokens_logged():
            self._scored_logp = torch.zeros(mask.shape, dtype=torch.float32, device=self.device)
        for _ in range(config.ppo_epochs):
            order = torch.randperm(size, device=self.device)
            for start in range(0, size, mini):
                index = order[start : start + mini]
                stats = self._optimizer_step(rollout, index, mask, advantages)
                for name, value in stats.items():
                    totals[name] = totals.get(name, 0.0) + value
                updates += 1
        for name, value in totals.items():
            metrics.add(name, value / updates)
        metrics.add("learning_rate", self.scheduler.get_last_lr()[0])

    def _optimizer_step(
        self, rollout: Rollout, index: torch.Tensor, mask: torch.Tensor, advantages: Advantages
    ) -> dict[str, float]:
        config = self.config
        self.optimizer.zero_grad(set_to_none=True)
        chunks = index.split(max(1, math.ceil(len(index) / config.gradient_accumulation_steps)))
        stats: dict[str, float] = {}
        for number, chunk in enumerate(chunks):
            last = number == len(chunks) - 1
            with self._no_sync(not last):
                part = self._losses(rollout.rows(chunk), mask[chunk], advantages, chunk)
                (part.pop("loss") * (len(chunk) / len(index))).backward()
            for name, value in part.items():
                stats[name] = stats.get(name, 0.0) + float(value) * len(chunk) / len(index)
        grad_norm = torch.nn.utils.clip_grad_norm_(self._trainable, config.max_grad_norm)
        stats["grad_norm"] = float(grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        return stats

    def _losses(
        self, part: Rollout, mask: torch.Tensor, advantages: Advantages, index: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        config = self.config
        logp, entropy = token_logprobs(self.policy_for_update, part, with_entropy=True)
        # On-policy single pass: the sampling-time log-probs equal these, so they were not
        # computed twice (the ratio is exactly 1 and the gradient is the policy gradient).
        old_logp = part.old_logp if part.old_logp is not None else logp.detach()
        if self._scored_logp is not None and part.old_logp is None:
            self._scored_logp[index] = old_logp.float()  # kept for the logged token values
        policy = clipped_policy_loss(
            logp, old_logp, advantages.per_token[index], mask, clip_range=config.clip_range
        )
        loss = policy.loss
        out = {
            "actor_loss": policy.loss.detach(),
            "clip_fraction": policy.clip_fraction,
            "entropy": masked_mean(entropy.detach(), mask),
        }
        kl = self._kl(part.ref_logp, logp)
        if kl is not None:
            kl_mean = masked_mean(kl, mask)
            out["kl_divergence"] = kl_mean.detach()
            if config.kl_mode == "loss":
                loss = loss + config.kl_coef * kl_mean
        if self.critic_for_update is not None:
            values = token_values(self.critic_for_update, part)
            value = clipped_value_loss(
                values, part.old_values, advantages.returns[index], mask,
                clip_range=config.value_clip_range,
            )  # fmt: skip
            loss = loss + config.vf_coef * value.loss
            out["critic_loss"] = value.loss.detach()
            out["value_clip_fraction"] = value.clip_fraction
        out["loss"] = loss
        return out

    # ---- metrics and hooks --------------------------------------------------------------------

    def _rollout_metrics(self, rollout: Rollout, metrics: StepMetrics) -> None:
        lengths = rollout.response_mask.sum(dim=1)
        metrics.add("response_length/mean", lengths.mean())
        metrics.add("response_length/max", lengths.max(), "max")
        metrics.add("response_length/clip_ratio", rollout.truncated.float().mean())

    def _reward_metrics(
        self,
        rewards: torch.Tensor,
        details: list[dict[str, float]],
        nonfinite: int,
        advantages: Advantages,
        metrics: StepMetrics,
    ) -> None:
        everywhere = gather_floats(rewards.float().cpu(), self.world)
        finite = everywhere[torch.isfinite(everywhere)]
        if finite.numel():
            metrics.add("reward/mean", finite.mean(), "max")  # identical on every rank
            metrics.add("reward/std", finite.std(unbiased=False), "max")
            metrics.add("reward/min", finite.min(), "min")
            metrics.add("reward/max", finite.max(), "max")
        else:
            for name in ("reward/mean", "reward/std", "reward/min", "reward/max"):
                metrics.add(name, math.nan, "max")
        for component in self.rewards.component_names:
            values = [row.get(component, math.nan) for row in details]
            finite_values = [value for value in values if math.isfinite(value)]
            mean = sum(finite_values) / len(finite_values) if finite_values else math.nan
            metrics.add(f"reward/{component}/mean", mean)
        metrics.add("reward/nonfinite_count", nonfinite, "sum")
        valid = torch.isfinite(rewards)
        metrics.add(
            "advantage/mean",
            advantages.per_sample[valid].mean() if valid.any() else 0.0,
        )

    def _samples(
        self,
        rollout: Rollout,
        rewards: torch.Tensor | None = None,
        details: list[dict[str, float]] | None = None,
        advantages: torch.Tensor | None = None,
    ) -> tuple[Sample, ...]:
        wanted_by_tracker = self.tracker is not None and self.tracker.wants_samples(self.step)
        if not (self._listening or wanted_by_tracker):
            return ()
        prompt_ids = [
            ids[mask.bool()].tolist()
            for ids, mask in zip(rollout.prompt_ids, rollout.prompt_mask, strict=True)
        ]
        lengths = rollout.response_mask.sum(dim=1).long().tolist()
        response_ids = rollout.response_ids.tolist()
        rewards_list = rewards.tolist() if rewards is not None else None
        advantages_list = advantages.tolist() if advantages is not None else None
        return tuple(
            Sample(
                index=i,
                group_id=int(rollout.group_ids[i]),
                prompt=rollout.prompts[i],
                response=rollout.responses[i],
                prompt_ids=tuple(prompt_ids[i]),
                response_ids=tuple(response_ids[i][: lengths[i]]),
                truncated=bool(rollout.truncated[i]),
                reward=rewards_list[i] if rewards_list is not None else math.nan,
                reward_details=MappingProxyType(dict(details[i]) if details else {}),
                advantage=advantages_list[i] if advantages_list is not None else math.nan,
            )
            for i in range(rollout.size)
        )

    def _tokens_logged(self) -> bool:
        return self.tracker is not None and self.tracker.wants_tokens(self.step)

    def _with_token_values(
        self, samples: tuple[Sample, ...], rollout: Rollout, rewards: torch.Tensor, adv: Advantages
    ) -> tuple[Sample, ...]:
        """The samples with the per-token values this step's update used (see TokenValues)."""
        logprobs = rollout.old_logp if rollout.old_logp is not None else self._scored_logp
        self._scored_logp = None
        if logprobs is None:
            return samples
        # kl_mode reward: the KL in the reward; loss: the loss's KL on the sampled tokens.
        kl = adv.kl if adv.kl is not None else self._kl(rollout.ref_logp, logprobs)
        token_rewards = adv.token_rewards
        if token_rewards is None:  # GRPO: the sequence reward it normalised, spread per token
            mask = rollout.response_mask * torch.isfinite(rewards).unsqueeze(1)
            token_rewards = token_rewards_from_sequence(
                torch.nan_to_num(rewards), mask, adv.kl, self.config.kl_coef
            )
        return with_token_values(
            samples, self.tokenizer, logprobs=logprobs, kl=kl, rewards=token_rewards,
            advantages=adv.per_token,
        )  # fmt: skip

    def _stage_done(
        self, stage: Stage, samples: tuple[Sample, ...], metrics: Mapping[str, float]
    ) -> None:
        """After a stage: hooks see it first (they may stop the run), then it is logged."""
        self._run_hooks(stage, samples, metrics)
        if self.tracker is not None:
            self.tracker.on_stage(stage, self.step, metrics, samples)
        if stage == "step_end":
            if self.tracker is not None and self.control.tables:
                self.tracker.on_tables(self.step, self.control.tables)
            self.control.tables.clear()

    def _run_hooks(
        self, stage: Stage, samples: tuple[Sample, ...], metrics: Mapping[str, float]
    ) -> None:
        if not self.hooks.has_hooks(stage):
            return
        context = StageContext(
            stage=stage,
            step=self.step,
            epoch=self.epoch,
            run_id=self.run_id,
            rank=self.world.rank,
            world_size=self.world.world_size,
            samples=samples,
            metrics=MappingProxyType(dict(metrics)),
            run_dir=self.run_dir,
            model_name=self.model_config.actor.model_name_or_path,
            generation=MappingProxyType(vars(self.generation)),
            control=self.control,
            reward_weights=MappingProxyType(
                {component.name: component.weight for component in self.rewards.components}
            ),
        )
        self.hooks.run(stage, context)

    def _agree_to_stop(self) -> bool:
        """Whether any rank was asked to stop (a collective: every rank calls it). Called once a
        step, where a stop takes effect: a vote after every stage's hooks would change nothing
        but add collectives."""
        stop = any_rank(self.control.should_stop, self.world)
        if stop and not self.control.should_stop:
            self.control.request_stop("another rank asked to stop")
        return stop

    # ---- checkpoints --------------------------------------------------------------------------

    def _should_save(self) -> bool:
        every = self.config.save_every
        wanted = (every and self.step % every == 0) or self.control.should_save
        self.control.should_save = False
        return bool(wanted)

    def save(self) -> Path | None:
        if not self.world.is_main:
            return None
        models: dict[str, Any] = {"policy": self.policy, "tokenizer": self.tokenizer}
        if self.critic is not None:
            models["critic"] = self.critic
        state = {
            "step": self.step,
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "run_id": self.run_id,
        }
        return save_checkpoint(self.run_dir, self.step, models=models, trainer_state=state)

    def _restore(self, checkpoint: Path) -> None:
        state = load_trainer_state(checkpoint)
        self.step = int(state["step"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        restore_rng(state["rng"])

    # ---- plumbing ---------------------------------------------------------------------------

    def _needs_sampling_logprobs(self) -> bool:
        """Log-probs at sampling time are needed when the policy moves before it is scored again
        (several epochs or minibatches) or when the KL enters the reward."""
        return self._optimizer_steps_per_step() > 1 or (
            self.reference is not None and self.config.kl_mode == "reward"
        )

    def _modules(self) -> list[nn.Module]:
        return [m for m in (self.policy, self.critic) if m is not None]

    def _optimizer_steps_per_step(self) -> int:
        size = self.config.rollout_batch_size * self.config.samples_per_prompt
        mini = min(self.config.mini_batch_size or size, size)
        return self.config.ppo_epochs * math.ceil(size / mini)

    def _wrap(self, module: nn.Module) -> nn.Module:
        if not self.world.distributed:
            return module
        ids = [self.world.local_rank] if self.device.type == "cuda" else None
        wrapped = DistributedDataParallel(module, device_ids=ids)
        wrapped.register_comm_hook(None, COMM.ddp_hook)  # the default all-reduce, measured
        return wrapped

    def _no_sync(self, skip_sync: bool):
        wrapped = [m for m in (self.policy_for_update, self.critic_for_update) if m is not None]
        if not skip_sync or not all(isinstance(m, DistributedDataParallel) for m in wrapped):
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        for module in wrapped:
            stack.enter_context(module.no_sync())
        return stack

    def _kl(self, ref_logp: torch.Tensor | None, logp: torch.Tensor) -> torch.Tensor | None:
        if ref_logp is None:
            return None
        return kl_per_token(logp, ref_logp, self.config.kl_estimator)

    @staticmethod
    def _seed(seed: int) -> None:
        random.seed(seed)
        torch.manual_seed(seed)


def _at(checkpoint: Path | None, name: str, ref: ModelRef) -> ModelRef:
    """The model to load: from the checkpoint when resuming, else as configured."""
    if checkpoint is None:
        return ref
    return ref.model_copy(update={"model_name_or_path": str(checkpoint / name), "revision": None})


@contextlib.contextmanager
def _timed(metrics: StepMetrics, name: str, device: torch.device):
    started = time.perf_counter()
    yield
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    metrics.add(name, time.perf_counter() - started, "max")
