"""python -m tests.lab: boot one dev-image guest with its console on this terminal."""

from tests.lab.boot import main

raise SystemExit(main())
