"""The next reward model from reviews: data loading, Bradley-Terry training, evaluation."""
