"""One module per group of commands; each registers its commands on `toolgym.app.app`."""
