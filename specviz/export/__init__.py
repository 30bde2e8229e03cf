"""A run taken out of the app: its trace (JSON), drafted tokens (CSV) and report (HTML), and a
trace read back for replay. Above the views (it renders with them), below the app and the CLI."""
