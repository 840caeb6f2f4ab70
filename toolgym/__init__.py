"""The toolgym command line and top-level convenience imports."""
