"""Code mode: the model writes one script against typed stubs, run in a sandbox."""
