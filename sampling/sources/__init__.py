"""Where samples come from besides our own trainer: one folder per other trainer (`trl`, `verl`,
`openrlhf`), each an adapter on `adapter.TrainerAdapter` beside its dump reader; `ingest`
follows dump files, `search` reads them, `sampler` is our trainer's hook. Each folder imports
its trainer's library only inside itself, when used; what the adapters share is `adapter`,
`idle_window` and the group id here."""

from __future__ import annotations

import hashlib


def group_id_of(key: str) -> int:
    """The group id of the samples of one prompt, from a key that names it (its text, verl's
    uid): the same in every process, worker and version. 52 bits: few collisions in a batch of
    thousands of groups (a collision merges two groups), and exact in JSON readers that hold
    numbers as doubles."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 12
