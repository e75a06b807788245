"""The lab layer: cells as values, one cell runner, run folders, the match solver and executors."""
