"""Planning of each streaming operator (windows, joins, Top-N, OVER, changelog GROUP BY): what the query asks, read off
its tree; the stateful ones run in `connector.runtime.operators`."""
