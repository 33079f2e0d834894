"""The run report as one HTML page: inline CSS and inline SVG, no script, nothing to fetch (its
Content-Security-Policy forbids both, so a text that escaped escaping still could not run or
call out). Every text that comes from a rollout goes through `html.escape`: rollouts are
untrusted, and a response holding `<script>` is shown as those characters."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from lowtide.report.charts import Panel, Series, histogram_row, line_chart, number
from lowtide.report.run_data import LoggedSuspects, ReportData, ShownSample, StepStats
from sampling.selection.hacking import Suspect, WatchReport, share_text

TEXT_CHARS = 3000  # of a prompt or response shown; the rest is in the run's files
HISTOGRAM_PANELS = 8
EXAMPLES_SHOWN = 3
SECTIONS = (
    ("curves", "Reward and KL"),
    ("histograms", "Reward distribution over steps"),
    ("length", "Response length"),
    ("suspects", "Reward-hacking suspects"),
    ("lowest", "Lowest-reward samples"),
    ("highest", "Highest-reward samples"),
)
# No script, no network, no frames, no forms: styles inline and images inline only.
POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'none'; base-uri 'none'"
)
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; color: #222; margin: 0 auto; padding: 0 24px 40px;
       max-width: 1240px; }
header { border-bottom: 1px solid #ddd; padding: 16px 0 8px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
h3 { font-size: 14px; margin: 16px 0 6px; }
nav a { margin-right: 14px; color: #1f5fa8; text-decoration: none; }
.meta, .note { color: #666; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts.small { gap: 8px; }
.charts svg { background: #fafafa; border: 1px solid #eee; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border-bottom: 1px solid #eee; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.card .head { font-weight: 600; }
.card .facts { color: #555; font-size: 13px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f7f7; margin: 4px 0;
      padding: 6px 8px; border-radius: 4px; max-height: 14em; overflow: auto;
      font: 12.5px/1.4 ui-monospace, monospace; }
.label { color: #666; font-size: 12px; margin-top: 6px; }
.growing { color: #b22; font-weight: 600; }
.cut { color: #888; font-style: italic; }
"""


def render(data: ReportData) -> str:
    """The whole page."""
    body = [
        _header(data),
        _section("curves", _curves(data)),
        _section("histograms", _histograms(data)),
        _section("length", _lengths(data)),
        _section("suspects", _suspects(data.watch, data.logged_suspects, data.samples)),
        _section("lowest", _samples(data.lowest, "lowest")),
        _section("highest", _samples(data.highest, "highest")),
        _footer(data),
    ]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_t(data.name)}: lowtide run report</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def _t(text: object) -> str:
    return escape(str(text), quote=True)


def _section(anchor: str, content: str) -> str:
    title = dict(SECTIONS)[anchor]
    return f'<section id="{anchor}"><h2>{_t(title)}</h2>{content}</section>'


def _header(data: ReportData) -> str:
    steps = _steps_logged(data)
    facts = [data.source, str(data.directory), f"{steps} steps", f"{data.samples} scored rollouts"]
    shown = (
        f"texts redacted with {data.redacted_with}"
        if data.redacted
        else "texts as logged (not redacted)"
    )
    links = "".join(f'<a href="#{anchor}">{_t(title)}</a>' for anchor, title in SECTIONS)
    return (
        f"<header><h1>{_t(data.name)}</h1>"
        f'<p class="meta">{" · ".join(_t(fact) for fact in facts)} · {_t(shown)}</p>'
        f"<nav>{links}</nav></header>"
    )


def _steps_logged(data: ReportData) -> int:
    steps = {step for points in data.metrics.values() for step, _ in points}
    return len(steps | set(data.steps))


def _curves(data: ReportData) -> str:
    metrics = data.metrics
    if "reward/mean" in metrics:
        std = dict(metrics.get("reward/std", []))
        band = [(s, m - std[s], m + std[s]) for s, m in metrics["reward/mean"] if s in std]
        reward = Series("reward/mean", metrics["reward/mean"], band)
        reward_note = "reward/mean of each step (metrics.jsonl)" + (
            ", the band ± reward/std" if band else ""
        )
    else:
        reward = Series("reward", _per_step(data.steps, statistics.fmean), _std_band(data.steps))
        reward_note = "mean reward of each step's logged rollouts, the band ± their std"
    charts = [line_chart([reward], title="reward", y_label="reward")]
    kl = [name for name in metrics if name == "kl_divergence" or name.startswith("kl/")]
    if kl:
        charts.append(
            line_chart(
                [Series(name, metrics[name]) for name in kl],
                title="KL to the reference",
                y_label="KL",
            )
        )
        kl_note = ""
    else:
        kl_note = (
            " No KL was logged: a run without a reference model (trainer.kl_coef 0), or dumps "
            "of another trainer, which hold texts and rewards only."
        )
    return (
        f'<div class="charts">{"".join(charts)}</div>'
        f'<p class="note">{_t(reward_note)}.{_t(kl_note)}</p>'
    )


def _histograms(data: ReportData) -> str:
    if not data.reward_histograms:
        return '<p class="note">no reward distributions logged, and no rollouts</p>'
    chosen = _spread(data.reward_histograms, HISTOGRAM_PANELS)
    panels = [Panel(f"step {step}", values) for step, values in chosen]
    where = (
        "every sample of the step (histograms.jsonl)"
        if data.histograms_from == "histograms.jsonl"
        else "the step's logged rollouts"
    )
    shown = f"{len(chosen)} of {len(data.reward_histograms)} steps"
    return (
        f'<div class="charts small">{histogram_row(panels)}</div>'
        f'<p class="note">{_t(shown)}, evenly spread; rewards of {_t(where)}, on the same bins; '
        "the dashed line is the mean, the number beside the step how many values.</p>"
    )


def _lengths(data: ReportData) -> str:
    charts, notes = [], []
    names = [n for n in ("response_length/mean", "response_length/max") if n in data.metrics]
    if names:
        series = [Series(name, data.metrics[name]) for name in names]
        charts.append(line_chart(series, title="response tokens", y_label="tokens"))
        notes.append("tokens per response (metrics.jsonl)")
    if data.steps:
        lengths = {step: s for step, s in data.steps.items() if s.lengths}
        median = [(step, statistics.median(s.lengths)) for step, s in lengths.items()]
        band = [(step, *_quantiles(s.lengths)) for step, s in lengths.items()]
        charts.append(
            line_chart(
                [Series("median", median, band)],
                title="response characters (logged rollouts)",
                y_label="characters",
            )
        )
        notes.append("characters of the logged responses: the median, the band 10th to 90th "
                     "percentile")  # fmt: skip
    if not charts:
        return '<p class="note">no response lengths logged</p>'
    return f'<div class="charts">{"".join(charts)}</div><p class="note">{_t("; ".join(notes))}.</p>'


def _suspects(watch: WatchReport | None, logged: LoggedSuspects | None, samples: int) -> str:
    if watch is None:
        return (
            '<p class="note">no rollouts to analyse: this run logged no scored samples '
            "(logger.log_rollout, logger.log_interval.tables)</p>"
        )
    parts = [f'<p class="note">{_t(_watch_summary(watch))}</p>']
    if watch.suspects:
        parts += [_suspect_card(rank, s) for rank, s in enumerate(watch.suspects, 1)]
    else:
        parts.append("<p>No suspects: no feature is both paid within groups and spreading.</p>")
    if watch.lift_only:
        parts.append("<h3>Paid within groups, not spreading</h3>")
        parts.append(_suspect_table(watch.lift_only))
    if logged is not None and logged.rows:
        parts.append(f"<h3>Logged by the trainer's watch (step {logged.step})</h3>")
        parts.append(_logged_table(logged))
    return "".join(parts)


def _watch_summary(watch: WatchReport) -> str:
    line = (
        f"{watch.samples} scored samples over {watch.steps} steps, {watch.groups} groups "
        f"(same step, same prompt), {watch.features_tested} features tested"
    )
    if watch.first_window is not None:
        line += f"; then = steps {watch.first_window[0]}-{watch.first_window[1]}"
        if watch.latest_window is not None:
            line += f", now = steps {watch.latest_window[0]}-{watch.latest_window[1]}"
    return line + ". The same analysis as lowtide logs bias."


def _suspect_card(rank: int, suspect: Suspect) -> str:
    now = suspect.prevalence_now
    facts = [
        f"lift {suspect.lift:+.3g} within groups ({suspect.effect:+.2g} sd)",
        f"in {share_text(suspect.prevalence_then)} then, {share_text(now)} now",
        f"{suspect.groups} groups",
        f"z {'inf' if suspect.z == math.inf else f'{suspect.z:.1f}'}",
    ]
    if suspect.paid_by is not None:
        facts.append(f"paid by {suspect.paid_by[0]} ({suspect.paid_by[1]:+.3g})")
    if suspect.folded:
        facts.append(f"{len(suspect.folded)} overlapping features folded in")
    examples = "".join(
        f'<div class="label">step {example.step} · reward {_reward(example.reward)} · '
        f"{_t(example.sample_id)}</div>{_pre(example.response)}"
        for example in suspect.examples[:EXAMPLES_SHOWN]
    )
    return (
        f'<div class="card suspect"><div class="head">{rank}. {_t(suspect.label())}</div>'
        f'<div class="growing">{_t(suspect.describe())}</div>'
        f'<div class="facts">{" · ".join(_t(fact) for fact in facts)}</div>{examples}</div>'
    )


def _suspect_table(suspects: Sequence[Suspect]) -> str:
    rows = []
    for suspect in suspects:
        example = suspect.examples[0].response if suspect.examples else ""
        now = suspect.prevalence_now
        rows.append(
            f"<tr><td>{_t(suspect.label())}</td><td class='num'>{suspect.lift:+.3g}</td>"
            f"<td class='num'>{share_text(suspect.prevalence_then)} → "
            f"{share_text(now)}</td>"
            f"<td class='num'>{suspect.groups}</td><td>{_pre(example, 400)}</td></tr>"
        )
    return (
        "<table><tr><th>feature</th><th>lift</th><th>then → now</th><th>groups</th>"
        f"<th>example</th></tr>{''.join(rows)}</table>"
    )


def _logged_table(logged: LoggedSuspects) -> str:
    rows = []
    for row in logged.rows:
        growing = "growing" if row.get("growing") is True else "not spreading"
        rows.append(
            f"<tr><td class='num'>{_t(row.get('rank', ''))}</td>"
            f"<td>{_t(row.get('description', ''))} ({growing})</td>"
            f"<td class='num'>{_t(row.get('example_step', ''))}</td>"
            f"<td>{_pre(str(row.get('example', '')), 400)}</td></tr>"
        )
    return (
        "<table><tr><th>#</th><th>suspect</th><th>example step</th><th>example</th></tr>"
        f"{''.join(rows)}</table>"
    )


def _samples(samples: Sequence[ShownSample], which: str) -> str:
    if not samples:
        return '<p class="note">no scored rollouts logged</p>'
    cards = []
    for sample in samples:
        facts = [f"step {sample.step}", f"reward {_reward(sample.reward)}", sample.sample_id]
        if sample.components:
            facts.append(", ".join(f"{k} {_reward(v)}" for k, v in sample.components.items()))
        if sample.truncated:
            facts.append("truncated at the length limit")
        cards.append(
            f'<div class="card sample {which}"><div class="head">'
            f"{' · '.join(_t(fact) for fact in facts)}</div>"
            f'<div class="label">prompt</div>{_pre(sample.prompt)}'
            f'<div class="label">response</div>{_pre(sample.response)}</div>'
        )
    return "".join(cards)


def _footer(data: ReportData) -> str:
    lines = [f"Made by lowtide logs report from the files in {data.directory}."]
    if data.problems:
        lines.append(f"{len(data.problems)} lines or files could not be read and were skipped.")
    return f'<footer><p class="note">{" ".join(_t(line) for line in lines)}</p></footer>'


def _pre(text: str, limit: int = TEXT_CHARS) -> str:
    if len(text) <= limit:
        return f"<pre>{_t(text)}</pre>"
    rest = len(text) - limit
    return (
        f'<pre>{_t(text[:limit])}<span class="cut">… ({rest} more characters in the run\'s '
        "files)</span></pre>"
    )


def _per_step(steps: Mapping[int, StepStats], how: Any) -> list[tuple[float, float]]:
    return [(step, how(s.rewards)) for step, s in steps.items() if s.rewards]


def _std_band(steps: Mapping[int, StepStats]) -> list[tuple[float, float, float]]:
    band = []
    for step, s in steps.items():
        if len(s.rewards) > 1:
            mean, std = statistics.fmean(s.rewards), statistics.pstdev(s.rewards)
            band.append((step, mean - std, mean + std))
    return band


def _quantiles(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=10, method="inclusive")
    return cuts[0], cuts[-1]


def _spread(items: Sequence[Any], count: int) -> list[Any]:
    """`count` items evenly spread from the first to the last (all when there are fewer)."""
    if len(items) <= count:
        return list(items)
    return [items[round(i * (len(items) - 1) / (count - 1))] for i in range(count)]


def _reward(value: float) -> str:
    return number(value) if math.isfinite(value) else str(value)
