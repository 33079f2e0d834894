"""Selection, redaction, records and their transport to Redis, and the sources of samples."""

from rl.plugins import provide_hook, provide_table_redactor

# What sampling gives lowtide's own trainer (rl may not import sampling): the stage hook configs
# name as `type: low_reward_sampler`, and the redactor of the logger's rollout tables.
provide_hook("low_reward_sampler", "sampling.sources.sampler:make_low_reward_sampler")
provide_table_redactor("sampling.redaction:redactor_for_run")
