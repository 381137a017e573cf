"""The Python stateful operators (`applyInPandasWithState`) the planners in `connector.planning.operators` describe,
named alike."""
