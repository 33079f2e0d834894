"""OpenRLHF 0.11.2: `adapter` routes the reward calls it sees, a window at a time, from the
reward function file `--reward.remote_url` names (`lowtide.openrlhf.routed` is the public
entry) or from `proxy`, a reward server that forwards to the user's; `answers` reads a call and
its answer as samples; `reward_file` writes the file. OpenRLHF writes no rollout dumps, so there
is no dump reader. Importing the package imports nothing."""
