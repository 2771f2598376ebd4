"""The shell: ``lmcp``, its groups, its start-up and its errors."""
