"""keel.toml: one schema (schema.py), a loader that names every problem by
its key path (load.py), and where the config in force lives (paths.py)."""
