"""`lowtide ingest`: follow a trainer's rollout dumps and route them like the hook does.

One module per dump format (`verl`, `trl`, `lowtide_rollouts`), `formats` to find them, `cursor`
for the state file, `follower` for the loop and its exactly-once hand-over.
"""
