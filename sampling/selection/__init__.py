"""Which samples go to review: the threshold-style policies and the review budget's selection."""
