"""Data quality: expectations, the gate in front of every commit, and its HTML report."""
