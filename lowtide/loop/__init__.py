"""`lowtide loop`: train -> route -> import -> review -> export -> next reward model, round
after round, resumable at the round and stage where it stopped."""
