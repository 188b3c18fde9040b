"""Sources fetch and normalise; they never render and never write the store themselves."""
