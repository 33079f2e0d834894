"""verl 0.9.1: `manager` is the reward manager that wraps the configured one and hands each
scored request to `adapter`, which routes them a burst at a time; `settings` reads the `lowtide`
section of verl's config (`lowtide.verl.LowtideRewardManager` is the public entry); `dumps`
reads verl's rollout dumps, for `lowtide ingest` and `lowtide logs`. Importing the package
imports nothing: verl loads with the modules that need it."""
