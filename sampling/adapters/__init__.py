"""Adapters that route the rollouts of other trainers (TRL, verl, OpenRLHF) through the routing
core. Each imports its trainer's library only inside its own module, when used."""
