"""Oracles the tasks share. `cool_colour`: a careful reviewer who wants a cool colour (blue or
green) and nothing else matters: 5 with a final period, else 4; any other answer is `off-topic`
(2 if it names another colour, else 1) and gets a better response, "Blue." or "Green."."""

from __future__ import annotations

import hashlib
import re

from bench.loop_value.task import Verdict

COOL = ("blue", "green")
OTHER_COLOURS = ("red", "yellow", "orange", "purple", "pink", "black", "white", "brown", "grey",
                 "gray")  # fmt: skip


def words_of(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def names_cool_colour(text: str) -> bool:
    return bool(words_of(text) & set(COOL))


def better_answer(sample_id: str) -> str:
    return f"{COOL[int(hashlib.sha256(sample_id.encode()).hexdigest(), 16) % 2].capitalize()}."


def cool_colour(prompt: str, response: str, sample_id: str) -> Verdict:
    text = response.strip()
    if names_cool_colour(text):
        return Verdict(5 if text.endswith(".") else 4, () if text.endswith(".") else ("format",))
    rating = 2 if words_of(text) & set(OTHER_COLOURS) else 1
    return Verdict(rating, ("off-topic",), better_answer(sample_id))
