"""Tool calls that become tasks: followed to their end, resumed after a reconnect."""
