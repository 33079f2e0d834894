"""Projects that roll over: `annotation.project` names a series, and a full project is followed
by the next one of the series.

Label Studio's guidance is about 100,000 tasks a project; a long run routes more. The title is
a template: `{run_id}` (the record's run) and `{date}` (the UTC day of the import) make one
series per run or per day, and `{n}` is the project's number in its series. Without `{n}` the
first project is the series' title itself and the next ones add ` #2`, ` #3`, ...: the default
`lowtide review` is followed by `lowtide review #2`.

When a project holds `annotation.max_tasks_per_project` tasks, the worker that finds it full
opens the next one (same labeling config, instructions, saved view and overlap, by
`ensure_project`) under a Redis lock, so that several workers open it once; a worker killed
mid-rollover leaves at most that project, which the next worker finds by its title, never a
second project of the same number. Workers that import into a project at the same moment may
take it past the cap by at most one import request each.

Redis keeps each series' current number (`lowtide:annotation:series:<hash>`); without it (a
new Redis) the series is found again in Label Studio, by title.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

import redis

from annotation.ledger import PREFIX

NUMBER, RUN, DATE = "{n}", "{run_id}", "{date}"
LOCK_S = 120.0  # a rollover takes seconds; a killed worker's lock frees itself after this
LOCK_WAIT_S = 0.2


def series_of(template: str, run_id: str | None = None, now: datetime | None = None) -> str:
    """The series a record of `run_id` goes to: the template with its run and date filled
    (`{n}` stays)."""
    today = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).date().isoformat()
    return template.replace(RUN, run_id or "").replace(DATE, today)


def title_of(series: str, number: int) -> str:
    """The title of the series' project `number` (1 is the first)."""
    if NUMBER in series:
        return series.replace(NUMBER, str(number))
    return series if number == 1 else f"{series} #{number}"


def number_in(series: str, title: str) -> int | None:
    """The number of a project of `series` by its title; None for another project's title."""
    if NUMBER in series:
        head, _, tail = series.partition(NUMBER)
        found = re.fullmatch(re.escape(head) + r"([1-9][0-9]*)" + re.escape(tail), title)
        return int(found.group(1)) if found else None
    if title == series:
        return 1
    found = re.fullmatch(re.escape(series) + r" #([1-9][0-9]*)", title)
    return int(found.group(1)) if found and int(found.group(1)) >= 2 else None


@dataclass(frozen=True)
class SeriesProject:
    number: int
    title: str
    project_id: int


class ProjectSeries:
    """One series' projects, as the workers share them through Redis. `ensure(title)` makes or
    finds a project (the labeling config, overlap and view set) and returns its id;
    `find_numbered()` lists the series' projects in Label Studio as {number: id}."""

    def __init__(
        self,
        connection: redis.Redis,
        label_studio_url: str,
        series: str,
        ensure: Callable[[str], int],
        find_numbered: Callable[[], dict[int, int]],
    ) -> None:
        self.connection = connection
        self.series = series
        self.ensure = ensure
        self.find_numbered = find_numbered
        digest = hashlib.sha256(f"{label_studio_url.rstrip('/')}\x00{series}".encode()).hexdigest()
        self.key = f"{PREFIX}:series:{digest[:16]}"
        self._known: dict[int, int] = {}  # number -> id of the projects this worker set up
        self._earlier: dict[int, list[SeriesProject]] = {}

    def current(self) -> SeriesProject:
        """The project the series imports into now (made if the series has none yet)."""
        raw = self.connection.hget(self.key, "number")
        if raw is None:
            number = max(self.find_numbered(), default=1)
            # hsetnx: two workers discovering at once agree on the first one's answer.
            self.connection.hsetnx(self.key, "number", number)
            number = int(self.connection.hget(self.key, "number") or number)
        else:
            number = int(raw)
        return self.project(number)

    def project(self, number: int) -> SeriesProject:
        """Project `number`, made or found and set up (config, overlap, view) once a worker."""
        title = title_of(self.series, number)
        if number not in self._known:
            # Under the series' lock: two workers finding no project must not both make one.
            with self._locked():
                self._known[number] = self.ensure(title)
        return SeriesProject(number, title, self._known[number])

    def forget(self, project_id: int) -> None:
        """A project deleted in Label Studio: the next `project()` of its number finds it again
        by title, or makes it, as a worker that starts does."""
        self._known = {n: known for n, known in self._known.items() if known != project_id}
        self._earlier.clear()

    def earlier(self, number: int) -> list[SeriesProject]:
        """The series' projects before `number` (found in Label Studio; those of a wiped server
        are not there and are left out)."""
        if number not in self._earlier:  # earlier projects never change: asked once
            numbered = self.find_numbered()
            self._earlier[number] = [
                SeriesProject(n, title_of(self.series, n), numbered[n])
                for n in sorted(numbered)
                if n < number
            ]
        return self._earlier[number]

    def roll_over(self, full: SeriesProject) -> SeriesProject:
        """The project after `full`: opened once whatever the number of workers asking (the
        first takes the lock and opens it, the others wait and read its number)."""
        number = self._number(full.number)
        if number <= full.number:
            following = self.project(full.number + 1)  # made (or found) before it is announced
            with self._locked():
                number = self._number(full.number)
                if number <= full.number:
                    self.connection.hset(self.key, "number", following.number)
                    return following
        return self.project(number)  # another worker rolled it over

    def _number(self, default: int) -> int:
        return int(self.connection.hget(self.key, "number") or default)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The series' lock across workers; a killed holder's lock frees itself after LOCK_S."""
        lock, token = f"{self.key}:lock", uuid.uuid4().hex
        while not self.connection.set(lock, token, nx=True, px=int(LOCK_S * 1000)):
            time.sleep(LOCK_WAIT_S)
        try:
            yield
        finally:
            if self.connection.get(lock) == token.encode():  # never another holder's lock
                self.connection.delete(lock)


def template_pattern(template: str) -> re.Pattern[str]:
    """What the titles of every project of every series of `template` look like: any run,
    any day, any number."""
    pattern = re.escape(template)
    for placeholder, part in ((RUN, ".*?"), (DATE, r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
                              (NUMBER, "[1-9][0-9]*")):  # fmt: skip
        pattern = pattern.replace(re.escape(placeholder), part)
    if NUMBER not in template:
        pattern += "(?: #[1-9][0-9]*)?"
    return re.compile(pattern)


def series_projects(
    projects_titled: Callable[[str], list[tuple[int, str]]], template: str
) -> list[tuple[int, str]]:
    """(id, title) of every project of `template`'s series in Label Studio, oldest first:
    what export, `lowtide loop`, `queue status` and the demo read."""
    literal = re.split(r"\{(?:n|run_id|date)\}", template)[0]
    pattern = template_pattern(template)
    return [(pid, title) for pid, title in projects_titled(literal) if pattern.fullmatch(title)]
