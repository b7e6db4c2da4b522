"""The lab's self-check: nine numbered items judged from the servers' journals."""
