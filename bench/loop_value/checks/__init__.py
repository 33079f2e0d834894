"""Check tasks of bench/loop_value.py: one part (the reward-hacking watch) on other kinds of
blind spot, outside the suite whose goals and wall time the bench reports."""
