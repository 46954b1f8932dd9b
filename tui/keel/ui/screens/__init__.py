"""The console's screens, one family a module: each reaches the app through
keel.ui.app_protocol, never by importing keel.ui.app."""
