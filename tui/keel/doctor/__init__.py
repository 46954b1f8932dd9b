"""`keel doctor`: what is really in force, against what the config asks for."""
