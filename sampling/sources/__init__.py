"""Adapters that route the rollouts of other trainers (TRL, verl, OpenRLHF) through the routing
core. Each imports its trainer's library only inside its own module, when used; what they share
is here."""

from __future__ import annotations

import hashlib


def group_id_of(key: str) -> int:
    """The group id of the samples of one prompt, from a key that names it (its text, verl's
    uid): the same in every process, worker and version. 52 bits: few collisions in a batch of
    thousands of groups (a collision merges two groups), and exact in JSON readers that hold
    numbers as doubles."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 12
