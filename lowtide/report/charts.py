"""Inline SVG charts for the run report: a line chart (curves with an optional band) and a row
of small histograms on one shared scale. Plain markup built here, no script and no library:
the page opens anywhere, with nothing to fetch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

# Colors of the curves in order (readable on white, and told apart by the colorblind).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")
AXIS = "#555"
GRID = "#e4e4e4"
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


@dataclass(frozen=True)
class Series:
    label: str
    points: Sequence[tuple[float, float]]  # (x, y); a point with a non-finite y is left out
    # (x, low, high): a shaded band around the line (mean +- std, 10th to 90th percentile)
    band: Sequence[tuple[float, float, float]] = ()


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round numbers spanning [low, high]: about `count` of them, 1, 2 or 5 times a power of 10
    apart."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(0.0 if abs(value) < step * 1e-9 else value)
        value += step
    return ticks


def number(value: float) -> str:
    """A tick or a value as people read it: 0.25, 1.5k, 2e-05."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 10_000:
        return f"{value / 1000:.3g}k"
    if magnitude < 1e-3:
        return f"{value:.1e}"
    return f"{value:.4g}"


class _Scale:
    def __init__(self, low: float, high: float, start: float, end: float) -> None:
        if high <= low:  # a flat line: centre it
            low, high = low - 1, high + 1
        self.low, self.high, self.start, self.end = low, high, start, end

    def __call__(self, value: float) -> float:
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str = "step",
    y_label: str = "",
    width: int = 560,
    height: int = 240,
) -> str:
    """One chart, its series in PALETTE's colors, a legend when there are several."""
    finite = [
        [(x, y) for x, y in s.points if math.isfinite(x) and math.isfinite(y)] for s in series
    ]
    bands = [
        [(x, lo, hi) for x, lo, hi in s.band if all(map(math.isfinite, (x, lo, hi)))]
        for s in series
    ]
    xs = [x for points in finite for x, _ in points]
    ys = [y for points in finite for _, y in points]
    ys += [v for band in bands for _, lo, hi in band for v in (lo, hi)]
    left, right, top, bottom = 56, 12, 28, 36
    parts = [_open(width, height, title), _text(left, 16, title, weight="600", size=13)]
    if not xs:
        parts.append(_text(width / 2, height / 2, "nothing logged", anchor="middle"))
        return "".join([*parts, "</svg>"])
    x_ticks = nice_ticks(min(xs), max(xs), 6)
    y_ticks = nice_ticks(min(ys), max(ys), 5)
    x_scale = _Scale(min(xs + x_ticks[:1]), max(xs + x_ticks[-1:]), left, width - right)
    y_scale = _Scale(min(ys + y_ticks[:1]), max(ys + y_ticks[-1:]), height - bottom, top)
    parts += _axes(x_ticks, y_ticks, x_scale, y_scale, width, height, left, right, top, bottom)
    parts.append(_text((left + width - right) / 2, height - 4, x_label, anchor="middle"))
    if y_label:
        parts.append(
            f'<text {FONT} fill="{AXIS}" text-anchor="middle" '
            f'transform="translate(12 {(top + height - bottom) / 2:.1f}) rotate(-90)">'
            f"{escape(y_label)}</text>"
        )
    for index, (s, points, band) in enumerate(zip(series, finite, bands, strict=True)):
        color = PALETTE[index % len(PALETTE)]
        if len(band) > 1:
            upper = [f"{x_scale(x):.1f},{y_scale(hi):.1f}" for x, _, hi in band]
            lower = [f"{x_scale(x):.1f},{y_scale(lo):.1f}" for x, lo, _ in reversed(band)]
            parts.append(
                f'<polygon points="{" ".join(upper + lower)}" fill="{color}" '
                f'fill-opacity="0.15" stroke="none"/>'
            )
        coords = " ".join(f"{x_scale(x):.1f},{y_scale(y):.1f}" for x, y in points)
        if len(points) > 1:
            parts.append(
                f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="1.8"/>'
            )
        if len(points) <= 40:
            parts += [
                f'<circle cx="{x_scale(x):.1f}" cy="{y_scale(y):.1f}" r="2.2" fill="{color}">'
                f"<title>{escape(s.label)}: step {number(x)}: {number(y)}</title></circle>"
                for x, y in points
            ]
    if len(series) > 1:
        legend_x = width - right - 8
        for index, s in enumerate(reversed(series)):
            color = PALETTE[(len(series) - 1 - index) % len(PALETTE)]
            parts.append(_text(legend_x, 16, s.label, anchor="end", fill=color, weight="600"))
            legend_x -= 7 * len(s.label) + 16
    return "".join([*parts, "</svg>"])


@dataclass(frozen=True)
class Panel:
    title: str  # "step 12"
    values: Sequence[float]


def histogram_row(
    panels: Sequence[Panel], *, bins: int = 20, x_label: str = "reward", width: int = 140
) -> str:
    """Small histograms side by side on the same bins and the same height scale (the share of
    the panel's values in a bin), so that a shift from one to the next reads as a shift. A
    dashed line marks each panel's mean."""
    values = [v for panel in panels for v in panel.values if math.isfinite(v)]
    if not values:
        return '<p class="note">no reward values logged</p>'
    low, high = min(values), max(values)
    if high <= low:
        low, high = low - 0.5, high + 0.5
    edges = [low + (high - low) * i / bins for i in range(bins + 1)]
    shares = []
    for panel in panels:
        finite = [v for v in panel.values if math.isfinite(v)]
        counts = [0] * bins
        for value in finite:
            counts[min(bins - 1, int((value - low) / (high - low) * bins))] += 1
        shares.append([count / len(finite) if finite else 0.0 for count in counts])
    tallest = max(max(row) for row in shares) or 1.0
    height, left, right, top, bottom = 130, 8, 8, 22, 30
    x_scale = _Scale(low, high, left, width - right)
    out = []
    for panel, row in zip(panels, shares, strict=True):
        finite = [v for v in panel.values if math.isfinite(v)]
        label = f"{panel.title} ({len(finite)})"
        parts = [_open(width, height, label), _text(left, 14, label, weight="600")]
        base = height - bottom
        bar_width = (width - left - right) / bins
        for i, share in enumerate(row):
            if share <= 0:
                continue
            bar = share / tallest * (base - top)
            parts.append(
                f'<rect x="{left + i * bar_width:.1f}" y="{base - bar:.1f}" '
                f'width="{max(bar_width - 1, 1):.1f}" height="{bar:.1f}" fill="{PALETTE[0]}">'
                f"<title>{number(edges[i])} to {number(edges[i + 1])}: {100 * share:.0f}%"
                "</title></rect>"
            )
        if finite:
            mean = sum(finite) / len(finite)
            parts.append(
                f'<line x1="{x_scale(mean):.1f}" x2="{x_scale(mean):.1f}" y1="{top}" '
                f'y2="{base}" stroke="{PALETTE[1]}" stroke-dasharray="3 2"/>'
            )
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{base}" y2="{base}" stroke="{AXIS}"/>'
        )
        parts.append(_text(left, base + 13, number(low)))
        parts.append(_text(width - right, base + 13, number(high), anchor="end"))
        parts.append(_text(width / 2, height - 4, x_label, anchor="middle"))
        out.append("".join([*parts, "</svg>"]))
    return "".join(out)


def _open(width: int, height: int, title: str) -> str:
    return (
        f'<svg width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
    )


def _text(
    x: float,
    y: float,
    text: str,
    *,
    anchor: str = "start",
    fill: str = AXIS,
    weight: str = "400",
    size: int | None = None,
) -> str:
    font = FONT if size is None else FONT.replace('font-size="11"', f'font-size="{size}"')
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" {font} fill="{fill}" font-weight="{weight}" '
        f'text-anchor="{anchor}">{escape(text)}</text>'
    )


def _axes(
    x_ticks: list[float],
    y_ticks: list[float],
    x_scale: _Scale,
    y_scale: _Scale,
    width: int,
    height: int,
    left: int,
    right: int,
    top: int,
    bottom: int,
) -> list[str]:
    parts = []
    for tick in y_ticks:
        y = y_scale(tick)
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>'
        )
        parts.append(_text(left - 6, y + 4, number(tick), anchor="end"))
    for tick in x_ticks:
        x = x_scale(tick)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{height - bottom}" '
            f'y2="{height - bottom + 4}" stroke="{AXIS}"/>'
        )
        parts.append(_text(x, height - bottom + 16, number(tick), anchor="middle"))
    parts.append(
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" '
        f'y2="{height - bottom}" stroke="{AXIS}"/>'
    )
    parts.append(
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}" stroke="{AXIS}"/>'
    )
    return parts
