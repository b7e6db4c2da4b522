"""Remote servers: Streamable HTTP, event-stream sessions, OAuth 2.1 sign-in and its tokens."""
