"""Writes `sampling/redaction/finders/first_names.json`: people's first names of the languages
redaction reads, taken from Faker's person providers (the `bench` extra), for the places where
only a name's own spelling tells it from a word: who speaks in a dialogue without time stamps
(`Magda: ...` against `Pros: ...`), a name alone after a dash at a message's end (`- Danny`).

Run it again after Faker is upgraded (from the repository's root):

    python bench/redaction/first_names_table.py

Names that are also common words of these languages (a colour, a month, a virtue: `Rose`,
`June`, `Will`) stay in: a dialogue's or a signature's shape is asked for as well.
"""

from __future__ import annotations

import json
from pathlib import Path

from faker import Faker
from faker.providers.address.en_US import Provider as AddressProvider

from sampling.redaction.finders.seed_phrases import WORDS as ENGLISH_WORDS  # 2,048 common words

TABLE = Path(__file__).resolve().parents[2] / "sampling/redaction/finders/first_names.json"
LOCALES = (
    "en_US", "en_GB", "en_IN", "en_AU", "en_PH", "en_IE", "en_NZ", "en_CA", "es_ES", "es_MX",
    "es_AR", "es_CO", "pt_BR", "pt_PT", "fr_FR", "fr_CA", "de_DE", "de_AT", "de_CH", "it_IT",
    "nl_NL", "nl_BE", "pl_PL", "tr_TR", "ru_RU", "uk_UA", "sv_SE", "da_DK", "no_NO", "fi_FI",
    "cs_CZ", "sk_SK", "ro_RO", "hu_HU", "el_GR", "id_ID", "fil_PH", "vi_VN", "hr_HR", "sl_SI",
    "lt_LT", "lv_LV", "et_EE", "bg_BG", "ga_IE", "yo_NG", "zu_ZA", "sw",
)  # fmt: skip
# More places' names (Kenya, Nigeria, Ghana, Pakistan, Thailand, Chile, Catalonia, Belgium,
# Luxembourg, Azerbaijan, Uzbekistan, North Macedonia), less their names that are English words
# (`Valid`, an Azerbaijani name, in "Valid RolloutRecord") or a country's or a US state's
# (`France`, `Washington`).
MORE_LOCALES = (
    "en_KE", "ig_NG", "ha_NG", "tw_GH", "en_PK", "en_TH", "es_CL", "es_CA", "fr_BE", "de_LU",
    "az_AZ", "uz_UZ", "mk_MK",
)  # fmt: skip
ATTRIBUTES = ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary")


def first_names() -> list[str]:
    names = _names_of(LOCALES)
    more = _names_of(MORE_LOCALES)
    words = {*ENGLISH_WORDS, *(place.lower() for place in AddressProvider.countries),
             *(state.lower() for state in AddressProvider.states)}  # fmt: skip
    names |= {name for name in more if name.lower() not in words}
    return sorted(names)


def _names_of(locales: tuple[str, ...]) -> set[str]:
    names: set[str] = set()
    for locale in locales:
        try:
            provider = Faker(locale).provider("faker.providers.person")
        except AttributeError:  # a locale this Faker does not have
            continue
        for attribute in ATTRIBUTES:
            found = getattr(provider, attribute, None) or ()
            names.update(name for name in found if name.isalpha() and name[0].isupper())
    return names


def main() -> None:
    names = first_names()
    locales = len(LOCALES) + len(MORE_LOCALES)
    doc = (
        "People's first names in the Latin, Greek and Cyrillic scripts, from Faker's person "
        f"providers of {locales} locales (bench/redaction/first_names_table.py writes this "
        "file): where only a name's spelling tells it from a word (a dialogue's speaker "
        "without a time stamp, a name alone after a dash at a message's end)."
    )
    TABLE.write_text(json.dumps({"_doc": doc, "names": names}, ensure_ascii=False, indent=0))
    print(f"{len(names)} names -> {TABLE}")


if __name__ == "__main__":
    main()
