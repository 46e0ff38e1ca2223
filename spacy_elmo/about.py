"""The package version (one home, read by setup.cfg and by what records the writer of a file)."""
__version__ = "0.3.0"
