"""The command-line interface: a thin typer app on top of the public API (see app.py)."""
