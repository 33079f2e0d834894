"""The pieces of bench/loop_value.py: the task description, the rounds, the measures, the report.

A task is a YAML file (see cool_and_short.yaml) naming its prompts, its oracle reviewer and the
builder of its starting reward model by dotted path, so another task is measured without
changing this code.
"""
