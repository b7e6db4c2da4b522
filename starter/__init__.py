"""A hand-written MCP client: stdio transport, discovery, naming, aggregation, agent loop.

`solution/` is the reference; `starter/` is the same package with four
exercise regions left for the learner (marked `# >>> exercise N`).
"""
