"""What a server may do beyond tools (resources, prompts, completions, logs) and the questions it may ask back (forms, sampling, roots)."""
