"""The console UI's widgets: no screen, no dialog, no app; each takes what it
draws from the screen that holds it."""
