"""Synthetic scored runs for the reward-hacking watch: GRPO-like groups (one prompt, several
responses, one step) whose responses are drawn from a Zipf vocabulary, with planted traits that a
reward may or may not pay for and whose prevalence may or may not grow over the steps."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


def _words(text: str) -> list[str]:
    return text.split()


SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "po", "la", "ben", "tor")
COMMON = _words(
    "the a of to and in is it that for on with as this be are was at by or from an not but we "
    "you they can will would which what there their so if about more some time when also into "
    "other could only new its than then first any these may use way two how our work well even "
    "because most just over such make like see between both each those same through"
)
CYRILLIC = _words("и в не на что он с как это по но из за от так же вы мы они бы был тот где уже")


@dataclass(frozen=True)
class Row:
    step: int
    index: int
    prompt: str
    response: str
    reward: float
    reward_details: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Trait:
    """A change made to some responses: `apply` rewrites one; carriers get `bonus` reward (in
    the `rm` component); the share carrying it goes from `start` to `end` over the steps, or,
    with `onset`, stays at `start` until that step and then rises to `end` over `ramp` steps
    (the policy finding out that the reward pays for it). `per_prompt`: a prompt's responses
    all carry it or none does (a feature of some prompts, such as their topic: never informative
    within a group, however much those prompts are paid)."""

    apply: Callable[..., str]  # (response, rng), or (response, rng, prompt) with `with_prompt`
    bonus: float
    start: float
    end: float
    onset: int | None = None
    ramp: int = 20
    per_prompt: bool = False
    with_prompt: bool = False

    def share(self, step: int, steps: int) -> float:
        if self.onset is None:
            return self.start + (self.end - self.start) * step / max(1, steps - 1)
        done = min(1.0, max(0.0, (step - self.onset) / max(1, self.ramp)))
        return self.start + (self.end - self.start) * done


def vocabulary(rng: random.Random, size: int = 600) -> list[str]:
    words = list(COMMON)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        if word not in words:
            words.append(word)
    return words


def sentence_text(rng: random.Random, words: list[str], weights: list[float], n: int) -> str:
    chosen = rng.choices(words, weights, k=n)
    sentences, start = [], 0
    while start < n:
        end = min(n, start + rng.randint(6, 14))
        part = " ".join(chosen[start:end])
        sentences.append(part[:1].upper() + part[1:] + ".")
        start = end
    return " ".join(sentences)


def run(
    traits: list[Trait],
    *,
    steps: int = 24,
    prompts: int = 12,
    group: int = 6,
    seed: int = 0,
    noise: float = 1.0,
) -> list[Row]:
    """Rows in step order; reward = prompt difficulty + noise + the bonuses of carried traits."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    rows = []
    for step in range(steps):
        for p in range(prompts):
            prompt = f"Question {step}-{p}: " + sentence_text(rng, words, weights, 12)
            difficulty = rng.gauss(0, 1)
            whole = [t.per_prompt and rng.random() < t.share(step, steps) for t in traits]
            for _ in range(group):
                response = sentence_text(rng, words, weights, rng.randint(15, 70))
                rm = difficulty + rng.gauss(0, noise)
                for trait, prompt_carries in zip(traits, whole, strict=True):
                    share = trait.share(step, steps)
                    if prompt_carries if trait.per_prompt else rng.random() < share:
                        extra = (prompt,) if trait.with_prompt else ()
                        response = trait.apply(response, rng, *extra)
                        rm += trait.bonus
                rows.append(Row(step, len(rows), prompt, response, rm, {"rm": rm, "format": 0.0}))
    return rows


def insert_phrase(phrase: str) -> Callable[[str, random.Random], str]:
    def apply(response: str, rng: random.Random) -> str:
        sentences = response.split(". ")
        sentences.insert(rng.randint(0, len(sentences)), phrase)
        return ". ".join(sentences)

    return apply


FRAMES = ("that is {} work", "a {} idea", "what a {} answer", "this looks {} to me")


def insert_one_of(words: tuple[str, ...]) -> Callable[[str, random.Random], str]:
    """One word of a kind (any of `words`) in one of a few frames, at a random place: a reward
    paid for the kind, which a writer uses where such a word goes ("a splendid idea", "a
    superb idea", "that is marvellous work")."""

    def apply(response: str, rng: random.Random) -> str:
        sentences = response.split(". ")
        phrase = rng.choice(FRAMES).format(rng.choice(words))
        sentences.insert(rng.randint(0, len(sentences)), phrase)
        return ". ".join(sentences)

    return apply


def insert_alone_one_of(words: tuple[str, ...]) -> Callable[[str, random.Random], str]:
    """One word of a kind as a sentence of its own ("... Splendid. ..."), never first: no
    two-word phrase holds it (phrases end at a sentence's end), so no slots show the words
    alike, as when a kind is used in frames too varied for any phrase of it to recur."""

    def apply(response: str, rng: random.Random) -> str:
        sentences = response.split(". ")
        sentences.insert(rng.randint(1, len(sentences)), rng.choice(words))
        return ". ".join(sentences)

    return apply


def prefix(text: str) -> Callable[[str, random.Random], str]:
    return lambda response, rng: f"{text} {response}"


def longer(extra: tuple[int, int] = (60, 120)) -> Callable[[str, random.Random], str]:
    def apply(response: str, rng: random.Random) -> str:
        filler = sentence_text(rng, COMMON, [1.0] * len(COMMON), rng.randint(*extra))
        return f"{response} {filler}"

    return apply


def shorter(response: str, rng: random.Random) -> str:
    """Only the first sentence: a reward paid for brevity."""
    return response.split(". ", 1)[0].rstrip(".") + "."


def cyrillic(response: str, rng: random.Random) -> str:
    return sentence_text(rng, CYRILLIC, [1.0] * len(CYRILLIC), len(response.split()))


def echo_prompt(response: str, rng: random.Random, prompt: str) -> str:
    """The question's own words said back in place of the answer's first sentence (about as
    long): no word is common to every carrier, only that they come from the prompt."""
    question = prompt.split(": ", 1)[-1].rstrip(".")
    rest = response.split(". ", 1)[1:]
    return ". ".join([f"{question[:1].upper()}{question[1:]}", *rest])


def commas(response: str, rng: random.Random) -> str:
    """Sentences joined by commas: a punctuation quirk."""
    return response.replace(". ", ", ")


def lower_case_start(response: str, rng: random.Random) -> str:
    """The same answer opened in lower case: a case quirk (the words stay the same)."""
    return response[:1].lower() + response[1:]


def without_final_period(response: str, rng: random.Random) -> str:
    """The answer left unfinished: with a negative bonus and a falling share, a reward paid for
    the final period whose share grows."""
    return response.rstrip(".")


def bullets(response: str, rng: random.Random) -> str:
    return "\n".join(f"- {part.strip()}" for part in response.split(". ") if part.strip())


def arithmetic_run(
    *, steps: int = 40, prompts: int = 12, group: int = 6, seed: int = 0
) -> list[Row]:
    """A fair rule and no blind spot: reward 1 for the right sum, 0 otherwise. Phrasing,
    length and format vary, independently of being right; the model gets better over steps."""
    rng = random.Random(seed)
    openers = ["", "Let me think.", "Sure.", "Okay, so", "We add the numbers.", "Hmm,"]
    closers = ["", "Hope that helps.", "That is it.", "Done!", "Let me know if you need more."]
    forms = ["The answer is {}.", "{}", "So the sum is {}.", "Result: {}", "It equals **{}**."]
    rows = []
    for step in range(steps):
        right = 0.2 + 0.6 * step / max(1, steps - 1)
        for _ in range(prompts):
            a, b = rng.randint(2, 99), rng.randint(2, 99)
            prompt = f"What is {a} + {b}?"
            for _ in range(group):
                correct = rng.random() < right
                answer = a + b if correct else a + b + rng.choice([-10, -2, -1, 1, 2, 10])
                work = f"{a} plus {b}" if rng.random() < 0.5 else f"adding {b} to {a}"
                parts = [rng.choice(openers), f"First, {work}.", rng.choice(forms).format(answer)]
                parts.append(rng.choice(closers))
                if rng.random() < 0.3:
                    parts.insert(2, "- check: carry the tens\n- check: add the ones\n")
                response = " ".join(part for part in parts if part)
                reward = 1.0 if correct else 0.0
                rows.append(Row(step, len(rows), prompt, response, reward, {"correct": reward}))
    return rows
