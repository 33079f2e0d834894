"""The pool bench (bench/selection_value.py): which rollouts are worth a reviewer's minute."""
