"""`python -m solution`: the reference client's full command line."""
