# keel: the one entry point.
#   make dev-image   the dev image from Debian packages (what tests and demo boot)
#   make test        unit tests + QEMU lab tests (builds the dev image if missing)
#   make demo        build what is missing, boot the lab, open the console
#   make image       the release image with Buildroot (needs internet)
#   make check       static checks
#   make bench       benchmarks (figures, never pass/fail)

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
OUT ?= $(TOP)/out
override OUT := $(abspath $(OUT))
PYTHON ?= python3
PYTEST_ARGS ?=

DEV_IMAGE := $(OUT)/images/keel-x86_64-dev.img

.PHONY: all dev-image test test-unit test-vm demo bench help
all: dev-image

help:
	@sed -n '2,8p' $(TOP)/Makefile

dev-image:
	$(TOP)/board/keel/dev-image/build.sh $(OUT)

test: dev-image
	cd $(TOP) && KEEL_OUT=$(OUT) $(PYTHON) -m pytest $(PYTEST_ARGS) tests

test-unit:
	cd $(TOP) && $(PYTHON) -m pytest $(PYTEST_ARGS) tests/unit

test-vm: dev-image
	cd $(TOP) && KEEL_OUT=$(OUT) $(PYTHON) -m pytest $(PYTEST_ARGS) tests/vm

demo: dev-image
	cd $(TOP) && KEEL_OUT=$(OUT) $(PYTHON) -m tests.lab

# >>> release (Buildroot): make image, make check, pass-through targets
# <<< release (Buildroot)
