"""Adaptive CAKE: rates that follow the line (wan.shaping.adaptive)."""
