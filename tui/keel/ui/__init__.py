"""The console UI (`keel tui`): a Textual app over the metrics collectors."""
