"""Writes `sampling/redaction/finders/identity_numbers.json`: the words that name a personal
identity number (resident, citizen, tax, social security and health numbers of every country
python-stdnum covers) and the stdnum modules whose check such a number must pass.

Run it again after python-stdnum is upgraded (from the repository's root):

    python bench/redaction/identity_table.py

The names come from each module's description, its first line: `CPR (personnummer, the Danish
citizen number).` gives `cpr`, `personnummer`, `danish citizen number` and `citizen number`. A
module is personal when its description says so (personal, citizen, individual, resident, social
security, health, birth, a national identity number) or names a tax number that is not a
company's or a VAT number. Names that stdnum's descriptions lack (in Korean, Japanese, the
country's own language) are kept by hand in `national_ids.json` beside it and merged in.
Abbreviations of fewer than three letters are left out: too many words are spelt like them. So
are numbers without a check: where more than a fifth of random runs of digits of some length
pass a module's `is_valid`, a number after its name could be anything (listed in the output's
`left_out_no_check`); those whose written form is distinctive enough (Argentina's DNI as
`12.345.678`) are kept by hand as `written_without_check`, a regex of that form per name.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
import re
import sys
from pathlib import Path

import stdnum

FINDERS = Path(__file__).resolve().parents[2] / "sampling" / "redaction" / "finders"
PERSONAL = re.compile(
    r"\b(?:personal|person|persona|citizen|individuals?|resident|residence|residencia|social "
    r"(?:security|insurance)|health|birth|national (?:identity|identification|identifier|number)"
    r"|identity|identidad|identification number|foreigners?|pupil|student|tax file|"
    r"tax(?:payer)? (?:identification )?(?:number|code|identifier))\b",
    re.IGNORECASE,
)
NOT_PERSONAL = re.compile(
    r"\b(?:company|companies|business|enterprise|entreprise|vat|legal|jur[ií]dica|bank|postal|"
    r"invoice|registry|register|organi[sz]ation|payment|reference|routing|securities|drugs|"
    r"excise|activity|meter|real estate|creditor|association|memorandum|receipt|stock|"
    r"preparer|employer|social credit|state registration|entreprises|school|economico)\b",
    re.IGNORECASE,
)
# Country adjectives and the like at the start of an English description: dropped for a
# second, general name (`danish citizen number` and `citizen number`).
_ADJECTIVE = re.compile(r"^(?:the\s+)?(?:[A-Z][\w.]*\s+)+(?=[a-z])")


# A country's adjective alone (`Asmens kodas (Lithuanian, personal numbers)`) names nothing.
_COUNTRY_ALONE = re.compile(r"[a-z]+(?:ian|ese|ish|an)")


def descriptions() -> dict[str, str]:
    """{module: the first line of its description} for every country module of stdnum."""
    found = {}
    for info in pkgutil.iter_modules(stdnum.__path__):
        if not info.ispkg:
            continue
        package = importlib.import_module(f"stdnum.{info.name}")
        for sub in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"stdnum.{info.name}.{sub.name}")
            if hasattr(module, "is_valid"):
                found[f"{info.name}.{sub.name}"] = (module.__doc__ or "").strip().split("\n")[0]
    return found


def names(description: str) -> list[str]:
    """The words a description gives for its number, lower case."""
    head, _, inner = description.partition("(")
    inner = inner.rsplit(")", 1)[0]
    parts = [part.strip() for part in head.split(",")]
    inside = [part.strip() for part in re.split(r",\s*(?![^()]*\))", inner) if part.strip()]
    if inside:
        english = inside[-1]
        parts += inside[:-1]
        parts.append(english)
        plain = _ADJECTIVE.sub("", english)
        if plain != english and len(plain.split()) >= 2:  # `citizen number`, not `number`
            parts.append(plain)
    found = []
    for part in parts:
        part = re.sub(r"^(?:the|a|an)\s+", "", part.strip(" .\"'"), flags=re.IGNORECASE)
        part = re.sub(r"\s+(?:nr|no)\.?$", "", part).strip().lower()
        letters = re.sub(r"[^\w]", "", part)
        if len(letters) < 3 or part.startswith("sometimes") or _COUNTRY_ALONE.fullmatch(part):
            continue
        found.append(part)
    return found


def personal(description: str) -> bool:
    return PERSONAL.search(description) is not None and NOT_PERSONAL.search(description) is None


# A number the finder takes must fail the module's check most of the time when made up: at most
# this share of random runs of digits (of the length that passes most) may pass. A module with no
# check digit (Argentina's DNI is any 7 or 8 digits) would take any number after its name.
MOST_PASSING = 0.2
_TRIES = 2000


def _valid(module: object, number: str) -> bool:
    try:
        return bool(module.is_valid(number))  # type: ignore[attr-defined]
    except Exception:  # a few checks raise on numbers their tables lack (cn.ric)
        return False


def passing_share(module_name: str) -> float:
    """The largest share of random digit runs of one length (6 to 18) that pass the check."""
    module = importlib.import_module(f"stdnum.{module_name}")
    rng = random.Random(module_name)
    best = 0.0
    for length in range(6, 19):
        passed = sum(
            _valid(module, "".join(rng.choices("0123456789", k=length))) for _ in range(_TRIES)
        )
        best = max(best, passed / _TRIES)
    return best


def build() -> dict:
    table: dict[str, set[str]] = {}
    modules = {}
    unchecked = {}
    for module, description in sorted(descriptions().items()):
        if not personal(description):
            continue
        share = passing_share(module)
        if share > MOST_PASSING:
            unchecked[module] = round(share, 3)
            continue
        modules[module] = description
        for name in names(description):
            table.setdefault(name, set()).add(module)
    kept = json.loads((FINDERS / "national_ids.json").read_text(encoding="utf-8"))
    for name, hand_modules in kept["names"].items():
        table.setdefault(name, set()).update(m for m in hand_modules if m not in unchecked)
    return {
        "_doc": "Generated by bench/redaction/identity_table.py from python-stdnum "
        f"{stdnum.__version__} (module descriptions) and national_ids.json (names kept by "
        "hand): the words (lower case) that name a personal identity, tax, social security "
        "or health number, and the stdnum modules whose check that number must pass.",
        "modules": modules,
        "left_out_no_check": unchecked,  # share of random digit runs that pass
        "names": {name: sorted(found) for name, found in sorted(table.items())},
        # Numbers without a check, after their names in their written form (national_ids.json).
        "written_without_check": kept["written_without_check"],
    }


def main() -> None:
    table = build()
    out = FINDERS / "identity_numbers.json"
    out.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(table['modules'])} modules, {len(table['names'])} names -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
