"""The reference client assembled: the core with every layer plugged in."""
