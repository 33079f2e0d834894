"""One batch of rollout records into Label Studio, exactly once.

The steps, and why they are in this order:
1. Validate every record before Label Studio is asked anything; an invalid or oversized one (a
   text of a comparison's too, and every other field within sampling/records.py's caps) is
   quarantined with its reason (once per job, not once per attempt) and the rest go on. A batch
   with nothing valid ends here, even while Label Studio is down.
2. Drop repeats within the batch, and records whose sample already has a task in any project
   of its series (`annotation.project` is a template: annotation/series.py): the current
   project's imported set, then each earlier project's (its set while it lives, else its
   filter, whose hits are confirmed in Label Studio).
3. If an earlier attempt of this job reached Label Studio (it left `import_started_at` in the
   job's meta, and the projects it imported into), some of its tasks may exist without having
   been marked: the worker died, or the answer was lost. Look those samples up in those
   projects and mark what is found.
4. Import the rest in requests of at most `import_batch_max` tasks into the series' current
   project, and once it holds `max_tasks_per_project`, into the next one; mark each request's
   samples as soon as Label Studio acknowledged it. With suggestions on, each task carries its
   prediction (annotation/suggestions.py); a judge that fails for a record costs that task its
   suggestion, never its import. Each task carries a seal over its texts
   (annotation/task_seal.py), which the export checks, and whether its review is blind
   (`annotation.blind_review`; a task with a suggestion is not: its prefilled rating is a
   machine's verdict), which the export records. A request that timed out or lost its
   connection may still land after the retry imported its samples again: it is noted, and
   the worker's sweep deletes the late copies (annotation/late_imports.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import redis

from annotation import ledger
from annotation.compare_form import comparison_task, labeling_config
from annotation.config import AnnotationConfig, labeling_config_file
from annotation.errors import AnnotationError
from annotation.labelstudio import (
    LabelStudioClient,
    LabelStudioError,
    LabelStudioOutcomeUnknown,
    LabelStudioProjectGone,
    task_from_record,
)
from annotation.late_imports import note_uncertain
from annotation.review_form import reward_shown_before_deciding
from annotation.series import (
    NUMBER,
    ProjectSeries,
    SeriesProject,
    number_in,
    series_of,
    title_of,
)
from annotation.suggestions import (
    ReviewControls,
    Suggester,
    SuggestionRejected,
    build_suggester,
)
from annotation.task_seal import sealed
from sampling.records import RecordError, RolloutRecord, parse_record

# After a killed attempt, its last import request may still be running inside Label Studio
# (it does not notice the client left); wait this long after that request began before the
# lookup, so that the lookup sees its tasks.
SETTLE_S = 5.0
META_IMPORT_STARTED = "import_started_at"
_GATEWAY_ANSWERS = (502, 504)  # a proxy's: the request may have reached Label Studio
META_IMPORT_PROJECTS = "import_projects"  # the projects an attempt imported into
META_VALIDATED = "validated"
REJECTED_SUGGESTIONS_LOGGED = 3  # reasons logged per batch; the counter has them all

log = logging.getLogger("annotation.worker")


class LabelingConfigError(AnnotationError):
    """The labeling config file cannot be read."""


@dataclass
class ImportContext:
    """What every job of a worker process shares: one client, one Redis connection, the
    project series it imports into (each project looked up once)."""

    config: AnnotationConfig
    client: LabelStudioClient
    connection: redis.Redis
    queue_name: str
    suggester: Suggester | None = None
    _project_id: int | None = None  # the project imported into last
    _series: dict[str, ProjectSeries] = field(default_factory=dict)
    _created_at: dict[int, str] = field(default_factory=dict)
    _predictions_shown: bool = False
    _controls_checked: bool = False
    _blind: dict[int, bool] = field(default_factory=dict)  # project id: its reviews are blind

    @classmethod
    def create(
        cls, config: AnnotationConfig, connection: redis.Redis, queue_name: str
    ) -> ImportContext:
        suggester = None
        if config.suggestions.judge != "off" and config.compare_size is None:
            # A bad judge fails here, at the worker's start. Comparisons take no suggestion.
            xml = read_labeling_config(config.labeling_config)
            suggester = build_suggester(config.suggestions, xml)
        client = LabelStudioClient.from_config(config)
        return cls(config, client, connection, queue_name, suggester)

    def series(self, name: str) -> ProjectSeries:
        if name not in self._series:
            self._series[name] = ProjectSeries(
                self.connection,
                self.config.label_studio_url,
                name,
                ensure=self._ensure,
                find_numbered=lambda: numbered_projects(self.client, name),
            )
        return self._series[name]

    def project_id(self) -> int:
        """The project the series of `annotation.project` imports into now (for a template
        with `{run_id}`: the series of no run)."""
        self._project_id = self.series(series_of(self.config.project)).current().project_id
        return self._project_id

    @property
    def known_project_id(self) -> int | None:
        """The project imported into last, if any; never asks Label Studio."""
        return self._project_id

    def imported_in(self, project_id: int) -> ledger.ImportedSet:
        if project_id not in self._created_at:
            self._created_at[project_id] = self.client.project_created_at(project_id)
        url, born = self.config.label_studio_url, self._created_at[project_id]
        key = ledger.imported_key(url, project_id, born)
        return ledger.ImportedSet(self.connection, key, self.config.max_tasks_per_project)

    def blind_in(self, project_id: int) -> bool:
        """Whether reviews in this project are blind: `annotation.blind_review`, unless the
        project's form shows the reward before the reviewer decides."""
        return self._blind.get(project_id, self.config.blind_review)

    def _ensure(self, title: str) -> int:
        xml = project_labeling_config(self.config)
        project_id = self.client.ensure_project(
            title, xml, self.config.reviews_per_task, self.config.blind_review
        )
        checks_suggestions = self.suggester is not None and not self._controls_checked
        kept = xml
        if checks_suggestions or self.config.blind_review:
            # The config the project kept: an older one where its star reviews kept it.
            kept = self.client.labeling_config(project_id)
        if checks_suggestions and self.suggester is not None:
            # A project that kept an older config gets suggestions in that config's form.
            if kept.strip() != xml.strip():
                self.suggester.controls = ReviewControls.from_xml(kept)
            self._controls_checked = True
        early = reward_shown_before_deciding(kept) if self.config.blind_review else ()
        if early:
            log.warning(
                "project %r shows %s before the reviewer decides: its reviews are exported as "
                "not blind (blind: false). A blind form keeps them in a <Panel> of a <View "
                'visibleWhen="choice-selected">, as configs/label_studio/review.xml does',
                title, ", ".join(early),
            )  # fmt: skip
        self._blind[project_id] = self.config.blind_review and not early
        return project_id


def numbered_projects(client: LabelStudioClient, series: str) -> dict[int, int]:
    """{number: project id} of the series' projects in Label Studio (the oldest of a title)."""
    found: dict[int, int] = {}
    for project_id, title in client.projects_titled(series.split(NUMBER)[0]):
        number = number_in(series, title)
        if number is not None and number not in found:
            found[number] = project_id
    return found


def project_labeling_config(config: AnnotationConfig) -> str:
    """The review form a project gets: the single review form, or with `review_mode: compare`
    the comparison form (its file, or the one made for `compare.size`)."""
    if config.compare_size is None:
        return read_labeling_config(config.labeling_config)
    if config.compare.labeling_config is not None:
        return read_labeling_config(config.compare.labeling_config)
    return labeling_config(config.compare_size)


def read_labeling_config(path: str) -> str:
    try:
        return labeling_config_file(path).read_text(encoding="utf-8")
    except OSError as error:
        raise LabelingConfigError(
            f"cannot read the labeling config {path} ({error.strerror or error}): set "
            "annotation.labeling_config to the XML file (paths are relative to where lowtide runs)"
        ) from None


@dataclass
class JobMemo:
    """The part of an RQ job that survives between its attempts: its meta, and how to save it."""

    job_id: str
    meta: MutableMapping[str, Any]
    save: Callable[[], None] = lambda: None


@dataclass
class BatchOutcome:
    received: int = 0
    imported: int = 0
    duplicates: int = 0
    reconciled: int = 0
    quarantined: int = 0
    suggested: int = 0
    suggestions_rejected: int = 0
    import_seconds: list[float] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "received": self.received,
            "imported": self.imported,
            "duplicates": self.duplicates,
            "reconciled": self.reconciled,
            "quarantined": self.quarantined,
            "suggested": self.suggested,
            "suggestions_rejected": self.suggestions_rejected,
        }


def import_records(payload: Any, context: ImportContext, memo: JobMemo) -> BatchOutcome:
    """Import one job's records (see the module docstring). Raises LabelStudioError when Label
    Studio fails; what was acknowledged before that is marked and stays imported."""
    outcome = BatchOutcome()
    items = payload if isinstance(payload, list) else [payload]
    outcome.received = len(items)
    records, problems = _validate(items, context.config.max_text_chars, memo.job_id)
    first_attempt = not memo.meta.get(META_VALIDATED)
    if first_attempt:
        ledger.quarantine(context.connection, context.queue_name, problems)
        outcome.quarantined = len(problems)
        memo.meta[META_VALIDATED] = True
        if problems or not records:
            # Saved before Label Studio is asked anything: a retry must not quarantine again.
            memo.save()
    if not records:
        return outcome  # nothing valid: no reason to wait for Label Studio

    unique = list({record.sample_id: record for record in reversed(records)}.values())[::-1]
    by_series: dict[str, list[RolloutRecord]] = {}
    for record in unique:
        by_series.setdefault(series_of(context.config.project, record.run_id), []).append(record)
    todo_count = 0
    for name, group in by_series.items():
        series = context.series(name)
        current = series.current()
        try:
            found = already_imported(context, series, current, [r.sample_id for r in group])
            todo = [record for record in group if record.sample_id not in found]
            todo_count += len(todo)
            if todo and memo.meta.get(META_IMPORT_STARTED):
                _wait_for_settle(float(memo.meta[META_IMPORT_STARTED]))
                todo = _reconciled(context, memo, todo, current.project_id, outcome)
            _import_into(context, series, current, todo, memo, outcome)
        except LabelStudioProjectGone as gone:
            # Deleted under the worker (the current project or an earlier one of the series):
            # the retry finds it by its title, or makes it again, as a worker that starts does,
            # and lists the earlier ones again; never the deleted id for ever.
            series.forget(gone.project_id)
            raise
    if first_attempt:
        outcome.duplicates = len(records) - todo_count
    if first_attempt and not todo_count and not problems:
        memo.save()
    return outcome


def already_imported(
    context: ImportContext, series: ProjectSeries, current: SeriesProject, ids: list[str]
) -> set[str]:
    """The ids with a task in any project of the series: the current one's set, then each
    earlier project's (its set while it lives, else its filter's hits, confirmed in Label
    Studio)."""
    found = context.imported_in(current.project_id).known(ids)
    rest = [sample_id for sample_id in ids if sample_id not in found]
    for earlier in series.earlier(current.number) if rest and current.number > 1 else []:
        imported = context.imported_in(earlier.project_id)
        maybe = imported.maybe(rest)
        if maybe and not imported.exact():
            maybe = set(context.client.task_ids_by_sample_id(earlier.project_id, maybe))
        found |= maybe
        rest = [sample_id for sample_id in rest if sample_id not in maybe]
        if not rest:
            break
    return found


def _reconciled(
    context: ImportContext,
    memo: JobMemo,
    todo: list[RolloutRecord],
    current_id: int,
    outcome: BatchOutcome,
) -> list[RolloutRecord]:
    """An earlier attempt reached Label Studio: look its samples up in the projects it
    imported into, mark what is found, and return the rest."""
    for project_id in memo.meta.get(META_IMPORT_PROJECTS) or [current_id]:
        try:
            found = context.client.task_ids_by_sample_id(project_id, [r.sample_id for r in todo])
        except LabelStudioProjectGone:
            if project_id == current_id:
                raise  # the retry imports into the project found or made again
            continue  # deleted, and the tasks an earlier attempt made there with it
        context.imported_in(project_id).mark(found)
        todo = [record for record in todo if record.sample_id not in found]
        outcome.reconciled += len(found)
    return todo


def _import_into(
    context: ImportContext,
    series: ProjectSeries,
    project: SeriesProject,
    todo: list[RolloutRecord],
    memo: JobMemo,
    outcome: BatchOutcome,
) -> None:
    """Import `todo` in requests of at most `import_batch_max`, into the series' current
    project until it is full, then into the next (module series.py)."""
    config = context.config
    imported = context.imported_in(project.project_id)
    size = config.compare_size
    start = 0
    while start < len(todo):
        room = config.max_tasks_per_project - imported.count()
        if room <= 0:
            imported.retire(config.retired_ids_keep_s)
            project = series.roll_over(project)
            log.info("project %r is full: importing into %r (id %d)",
                     title_of(series.series, project.number - 1), project.title,
                     project.project_id)  # fmt: skip
            imported = context.imported_in(project.project_id)
            continue
        chunk = todo[start : start + min(config.import_batch_max, room)]
        # Sealed: the export refuses a task whose text was changed in Label Studio since.
        key = context.client.seal_key
        tasks = [
            sealed(_task(record, context.suggester, outcome, size, config.blind_review,
                         context.blind_in(project.project_id)), key)
            for record in chunk
        ]  # fmt: skip
        memo.meta[META_IMPORT_STARTED] = time.time()
        attempted = set(memo.meta.get(META_IMPORT_PROJECTS) or []) | {project.project_id}
        memo.meta[META_IMPORT_PROJECTS] = sorted(attempted)
        memo.save()
        pace(context.connection, imported.key, config.import_interval_s)
        began = time.perf_counter()
        try:
            context.client.import_tasks(project.project_id, tasks)
        except LabelStudioError as error:
            # No answer, or a gateway's (502, 504: Label Studio may have gone on behind it): it
            # may land after the retry's lookup; the worker's sweep removes the late copies.
            if isinstance(error, LabelStudioOutcomeUnknown) or error.status in _GATEWAY_ANSWERS:
                ids = [record.sample_id for record in chunk]
                note_uncertain(context.connection, context.queue_name, project.project_id, ids)
            raise
        outcome.import_seconds.append(time.perf_counter() - began)
        imported.mark(record.sample_id for record in chunk)
        context._project_id = project.project_id
        outcome.imported += len(chunk)
        start += len(chunk)
        if context.suggester and not context._predictions_shown and outcome.suggested:
            # Label Studio prefills a task only from predictions of the project's model_version.
            context.client.show_predictions(project.project_id, context.suggester.model_version)
            context._predictions_shown = True


def pace(connection: redis.Redis, imported_key: str, interval_s: float) -> None:
    """At most one import request into a project per `interval_s`, across workers: the first to
    set the project's slot key (it expires after `interval_s`) imports now, the others wait for
    it to expire; a waiting job's records stay together, one request when its turn comes (a
    paced job took the jobs queued behind it first: annotation/coalesce.py)."""
    interval_ms = int(interval_s * 1000)
    if interval_ms <= 0:
        return
    slot = imported_key.replace(":imported:", ":paced:", 1)
    while not connection.set(slot, 1, nx=True, px=interval_ms):
        time.sleep(max(int(connection.pttl(slot)), 5) / 1000)


def _validate(
    items: list[Any], max_text_chars: int, job_id: str
) -> tuple[list[RolloutRecord], list[dict[str, Any]]]:
    records, problems = [], []
    for index, item in enumerate(items):
        try:
            record = parse_record(item)
            _check_size(record, max_text_chars)
        except RecordError as error:
            problems.append(
                {
                    "reason": str(error),
                    "job_id": job_id,
                    "index": index,
                    "record": ledger.record_excerpt(item),
                }
            )
            continue
        records.append(record)
    return records, problems


def _check_size(record: RolloutRecord, max_text_chars: int) -> None:
    texts = [("prompt", record.prompt), ("response", record.response)]
    texts += [(f"compare.{i}.response", m.response) for i, m in enumerate(record.compare)]
    for name, text in texts:
        chars = len(text)
        if chars > max_text_chars:
            raise RecordError(
                f"{name}: {chars} characters, more than the {max_text_chars} a review task takes "
                "(annotation.max_text_chars; the sampler cuts texts to its max_text_chars)"
            )


def _task(
    record: RolloutRecord,
    suggester: Suggester | None,
    outcome: BatchOutcome,
    compare_size: int | None = None,
    blind: bool = True,
    form_blind: bool = True,
) -> dict[str, Any]:
    """The task of one record. `blind`: what its data shows (annotation/review_display.py);
    `form_blind`: whether the project's form keeps the reward out of sight until the reviewer
    decides. Its review counts as blind (`data.blind`, which the export records) only when
    both are, and no suggestion prefills it."""
    task = _shown_task(record, compare_size, blind)
    task["data"]["blind"] = blind and form_blind
    if suggester is None or compare_size is not None:
        return task
    try:
        prediction = suggester.prediction(record)
    except SuggestionRejected as reason:
        outcome.suggestions_rejected += 1
        if outcome.suggestions_rejected <= REJECTED_SUGGESTIONS_LOGGED:
            log.warning("sample %s: imported without a suggestion: %s", record.sample_id, reason)
        return task
    if prediction is not None:
        task["predictions"] = [prediction]
        # A prefilled rating is a machine's verdict (score_bands: the reward's): not blind.
        task["data"]["blind"] = False
        outcome.suggested += 1
    return task


def _shown_task(record: RolloutRecord, compare_size: int | None, blind: bool) -> dict[str, Any]:
    # Only the fields a task shows: a full model_dump of 500 records costs ~5 ms per batch.
    fields = ("sample_id", "run_id", "step", "prompt", "response", "reward", "reward_details",
              "reward_weights")  # fmt: skip
    shown: dict[str, Any] = {name: getattr(record, name) for name in fields}
    shown["selected_by"] = record.selected_by.model_dump()  # the trace line says why it was picked
    if compare_size is not None:
        # A single record in a comparison project (a search's match) shows as a comparison of
        # one: the reviewer still sees it, nothing is lost.
        alone = [{"sample_id": record.sample_id, "response": record.response,
                  "reward": record.reward}]  # fmt: skip
        members = [m.model_dump() for m in record.compare] or alone
        return comparison_task({**shown, "compare": members}, compare_size, blind)
    # A comparison sent to a single review project shows its selected response.
    return task_from_record(shown, blind)


def _wait_for_settle(import_started_at: float) -> None:
    remaining = import_started_at + SETTLE_S - time.time()
    if remaining > 0:
        time.sleep(min(remaining, SETTLE_S))
