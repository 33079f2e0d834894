"""TRL (`GRPOTrainer`, `RLOOTrainer`, TRL 1.16): `adapter` wraps the reward functions the trainer
calls and routes each batch they score (`lowtide.trl.route_low_rewards` is its public entry);
`dumps` reads the completion logs TRL writes, for `lowtide ingest` and `lowtide logs`. Importing
the package imports nothing: torch and pyarrow load with the module that needs them."""
