"""Redaction: does a reviewer ever see a planted value, and how much ordinary text does it touch?

The corpus (bench/redaction/corpus.py) is generated from each seed: 46 kinds of planted values
(keys and tokens of many services, private keys, JWTs, passwords, e-mail, phone numbers of
several countries, national IDs with valid check digits, cards, IBANs, addresses), each in
English and Chinese sentences, in prompts and in responses; and benign texts (code with hashes,
UUIDs and base64 data, identifiers, arithmetic, English and Chinese prose, the quickstart
prompts). Every record goes through the redactor with the default config, as the routing core
runs it.

Goals: recall of planted values >= 99.5%; none missed among private keys, cloud keys and API
tokens; false positives <= 1 per 1,000 benign texts. A value counts as caught when no piece of
it of 8 characters or more (or the whole of a shorter one) survives: a key whose first half is
left readable is a miss.
Then the adversarial corpus (bench/redaction/adversarial.py): every kind and every benign text
also full-width, with invisible characters, with no-break and ideographic spaces, URL-encoded,
JSON- and HTML-escaped, wrapped onto the line after its name, and set in Japanese, Korean, German
and French text; recall and false positives are printed per transformation against the same
goals. A value survives there also when a reviewer could read it decoded (`%40` is `@`).
Knobs: BENCH_SEEDS (0,1,2), BENCH_PER_KIND (40), BENCH_BENIGN (3000), BENCH_ADVERSARIAL_PER_KIND
(6), BENCH_ADVERSARIAL_BENIGN (600, per transformation). `--show-misses` prints each adversarial
miss and false positive whole (the text as it came out of the redactor), to see what kind of
writing a finder does not yet read.
"""

from __future__ import annotations

import os
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench" / "redaction"))

from _quick import QUICK, announce, knob  # noqa: E402
from adversarial import TRANSFORMS, benign_transformed  # noqa: E402
from adversarial import planted as planted_transformed  # noqa: E402
from corpus import KINDS, SECRET_GROUPS, benign, planted  # noqa: E402

SEEDS = [int(s) for s in os.environ.get("BENCH_SEEDS", "0" if QUICK else "0,1,2").split(",")]
PER_KIND = knob("PER_KIND", 40, 3)
BENIGN = knob("BENIGN", 3000, 100)
ADVERSARIAL_PER_KIND = knob("ADVERSARIAL_PER_KIND", 6, 1)
ADVERSARIAL_BENIGN = knob("ADVERSARIAL_BENIGN", 600, 20)
PIECE = 8
SHOW_MISSES = "--show-misses" in sys.argv[1:]


def survives(value: str, texts: tuple[str, ...]) -> bool:
    """Some piece of `value` (PIECE characters, or all of a shorter one, separators aside) is
    still in one of `texts`."""
    compact = "".join(value.split())
    pieces = (
        [compact]
        if len(compact) <= PIECE
        else [compact[i : i + PIECE] for i in range(0, len(compact) - PIECE + 1, PIECE // 2)]
    )
    joined = ["".join(text.split()) for text in texts]
    # Prefixes every format shares are not the secret (`sk-proj-`, `-----BEGIN`, `https://`).
    return any(piece in text for piece in pieces if not _is_format(piece) for text in joined)


def survives_decoded(value: str, texts: tuple[str, ...]) -> bool:
    """`survives`, also in the texts as a reviewer reads them: decoded and normalised."""
    from sampling.redaction.views import key

    return survives(value, texts) or survives(value, tuple(key(text) for text in texts))


def _is_format(piece: str) -> bool:
    formats = ("sk-proj-", "sk-svcacct-", "sk-ant-api03-", "-----BEGIN", "PRIVATEKEY", "-----END",
               "https://hooks.slack.com/services/", "postgres://app:", "@db.internal:5432/prod",
               "redis://:", "@cache.internal:6379/0", "github_pat_11", "Bearer")  # fmt: skip
    return any(piece in f for f in formats)


def measure(seed: int, redactor) -> dict:  # type: ignore[no-untyped-def]
    records = planted(seed, PER_KIND)
    missed: dict[str, list[str]] = defaultdict(list)
    caught_by_group: Counter[str] = Counter()
    total_by_group: Counter[str] = Counter()
    for record in records:
        texts = redactor.redact([record["prompt"], record["response"]]).texts
        total_by_group[record["group"]] += 1
        if survives(record["value"], texts):
            missed[record["kind"]].append(texts[0] if record["where"] == "prompt" else texts[1])
        else:
            caught_by_group[record["group"]] += 1
    texts = benign(seed, BENIGN)
    false_finds: list[str] = []
    for text in texts:
        for span in redactor.find(text):
            false_finds.append(f"{span.kind}: {text[span.start : span.end]!r}")
    touched = sum(1 for text in texts if redactor.find(text))
    return {
        "records": len(records), "missed": missed, "caught": caught_by_group,
        "total": total_by_group, "benign": len(texts), "touched": touched,
        "false_finds": false_finds,
    }  # fmt: skip


def main() -> None:
    from sampling.redaction import Redactor
    from sampling.redaction.config import RedactConfig

    announce()
    redactor = Redactor.from_config(RedactConfig())
    results = [measure(seed, redactor) for seed in SEEDS]
    print(f"corpus: {len(KINDS)} kinds x {PER_KIND} planted records per seed (English and Chinese, "
          f"prompt and response), {BENIGN} benign texts per seed; seeds {SEEDS}")  # fmt: skip
    recalls, fp_rates = [], []
    for seed, result in zip(SEEDS, results, strict=True):
        missed = sum(len(v) for v in result["missed"].values())
        recall = 1 - missed / result["records"]
        fp_rate = 1000 * result["touched"] / result["benign"]
        recalls.append(recall)
        fp_rates.append(fp_rate)
        secret_misses = sum(result["total"][g] - result["caught"][g] for g in SECRET_GROUPS)
        print(f"seed {seed}: recall {recall:.4f} ({missed} of {result['records']} missed); "
              f"missed among private keys, cloud keys and API tokens: {secret_misses}; "
              f"benign texts touched: {result['touched']} of {result['benign']} "
              f"({fp_rate:.2f} per 1,000)")  # fmt: skip
        for kind, texts in sorted(result["missed"].items()):
            print(f"  missed {kind} x{len(texts)}, e.g. {texts[0][:160]!r}")
        for find in result["false_finds"][:10]:
            print(f"  false positive {find[:120]}")
    worst_secret = max(sum(r["total"][g] - r["caught"][g] for g in SECRET_GROUPS) for r in results)
    mean_recall, mean_fp = statistics.mean(recalls), statistics.mean(fp_rates)
    print(f"recall: mean {mean_recall:.4f}, min {min(recalls):.4f}, max {max(recalls):.4f} "
          f"(goal >= 0.995: {'met' if min(recalls) >= 0.995 else 'NOT met'})")  # fmt: skip
    print(f"missed secrets (private keys, cloud keys, API tokens), worst seed: {worst_secret} "
          f"(goal 0: {'met' if worst_secret == 0 else 'NOT met'})")  # fmt: skip
    print(f"false positives per 1,000 benign texts: mean {mean_fp:.2f}, max {max(fp_rates):.2f} "
          f"(goal <= 1: {'met' if max(fp_rates) <= 1 else 'NOT met'})")  # fmt: skip
    report_adversarial(redactor)


def measure_adversarial(seed: int, redactor) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """Per transformation: records, misses (kind -> count), secret misses, benign texts and
    those touched."""
    results = {name: {"records": 0, "missed": Counter(), "secret_missed": 0, "benign": 0,
                      "touched": 0, "false_finds": [], "missed_texts": []}
               for name in TRANSFORMS}  # fmt: skip
    for record in planted_transformed(seed, ADVERSARIAL_PER_KIND):
        result = results[record["transform"]]
        texts = redactor.redact([record["prompt"], record["response"]]).texts
        result["records"] += 1
        if survives_decoded(record["value"], texts):
            result["missed"][record["kind"]] += 1
            result["secret_missed"] += record["group"] in SECRET_GROUPS
            where = texts[0] if record["where"] == "prompt" else texts[1]
            result["missed_texts"].append(f"{record['kind']}: {record['value']!r} in {where!r}")
    for name, text in benign_transformed(seed, ADVERSARIAL_BENIGN):
        result, spans = results[name], redactor.find(text)
        result["benign"] += 1
        result["touched"] += bool(spans)
        result["false_finds"] += [f"{s.kind}: {text[s.start : s.end]!r}" for s in spans]
    return results


def report_adversarial(redactor) -> None:  # type: ignore[no-untyped-def]
    per_seed = [measure_adversarial(seed, redactor) for seed in SEEDS]
    print(f"adversarial corpus: {len(KINDS)} kinds x {ADVERSARIAL_PER_KIND} records per "
          f"transformation and seed, {ADVERSARIAL_BENIGN} benign texts per transformation and "
          f"seed; seeds {SEEDS}")  # fmt: skip
    worst_recall, worst_fp, worst_secret = 1.0, 0.0, 0
    for name in TRANSFORMS:
        results = [seed_results[name] for seed_results in per_seed]
        recalls = [1 - sum(r["missed"].values()) / r["records"] for r in results]
        fps = [1000 * r["touched"] / r["benign"] for r in results]
        secret = max(r["secret_missed"] for r in results)
        worst_recall, worst_fp = min(worst_recall, min(recalls)), max(worst_fp, max(fps))
        worst_secret = max(worst_secret, secret)
        missed = sum((r["missed"] for r in results), Counter())
        print(f"  {name:<10} recall min {min(recalls):.4f} mean {statistics.mean(recalls):.4f}; "
              f"secrets missed (worst seed) {secret}; benign FP per 1,000: max {max(fps):.2f}"
              + (f"; missed {dict(missed.most_common(6))}" if missed else ""))  # fmt: skip
        finds = [f for r in results for f in r["false_finds"]]
        for find in finds if SHOW_MISSES else finds[:3]:
            print(f"    false positive {find if SHOW_MISSES else find[:110]}")
        if SHOW_MISSES:
            for seed, r in zip(SEEDS, results, strict=True):
                for text in r["missed_texts"]:
                    print(f"    seed {seed} missed {text}")
    print(f"adversarial recall, worst transformation and seed: {worst_recall:.4f} "
          f"(goal >= 0.995: {'met' if worst_recall >= 0.995 else 'NOT met'})")  # fmt: skip
    print(f"adversarial missed secrets, worst: {worst_secret} "
          f"(goal 0: {'met' if worst_secret == 0 else 'NOT met'})")  # fmt: skip
    print(f"adversarial false positives per 1,000 benign texts, worst: {worst_fp:.2f} "
          f"(goal <= 1: {'met' if worst_fp <= 1 else 'NOT met'})")  # fmt: skip


if __name__ == "__main__":
    main()
