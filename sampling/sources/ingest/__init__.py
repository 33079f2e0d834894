"""`lowtide ingest`: follow a trainer's rollout dumps and route them like the hook does.

Each trainer's dump reader is in its folder (`sampling/sources/trl/dumps.py`,
`sampling/sources/verl/dumps.py`); ours is `lowtide_rollouts`. `formats` lists them and finds
their files, `cursor` keeps the state file, `follower` runs the loop and its exactly-once
hand-over.
"""
