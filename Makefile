# keel: the one entry point.
#   make dev-image   the dev image from Debian packages (what tests and demo boot)
#   make bundle      a signed RAUC bundle of it (keel upgrade installs it)
#   make host-deps   install what this machine lacks (the one list; make test and demo run it)
#   make test        unit tests + QEMU lab tests (builds the dev image if missing)
#   make demo        build what is missing, boot the lab unconfigured, open the consoles
#                    (DEMO=--configured: set up with keel apply, open the edge's UI)
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

.PHONY: all host-deps dev-image bundle test test-unit test-vm demo bench help
all: dev-image

help:
	@sed -n '2,9p' $(TOP)/Makefile

# what this machine lacks to build the dev image, boot the lab and run the
# tests, installed (as root; otherwise it says what to run)
host-deps:
	$(TOP)/board/keel/dev-image/host-deps.sh

dev-image: host-deps
	$(TOP)/board/keel/dev-image/build.sh $(OUT)

# a signed RAUC bundle of the dev image (keel upgrade installs it), signed with
# out/keys/dev.key.pem: made on first use, never committed, the one key the
# dev image trusts
DEV_BUNDLE := $(OUT)/images/keel-x86_64-dev.raucb
bundle: dev-image
	$(TOP)/board/keel/rauc/make-bundle.sh $(OUT)/dev/images $(OUT)/keys/dev.cert.pem \
		$(OUT)/keys/dev.key.pem $(DEV_BUNDLE)

# static checks first (fast), then the dev image, then every test in four
# lanes (tests/lab/lanes.py): the host tests and the upgrade lab from the
# start, then the main lab lane beside the quiet one, whose modules measure
# the host's spare CPU and whose guests come first for it
# BUSY=0.5: the same, beside a steady load of half a host core (tests/lab/busy.py),
# to check that the verdicts hold on a busier machine
BUSY ?=
test: host-deps check dev-image
	cd $(TOP) && KEEL_OUT=$(OUT) $(if $(BUSY),$(PYTHON) -m tests.lab.busy --runs 1 --share $(BUSY) --) \
		$(PYTHON) -m tests.lab.lanes --durations=15 $(PYTEST_ARGS) tests

# every host test (no image, no guest): unit tests, the UI's pilot and snapshot tests
test-unit:
	cd $(TOP) && $(PYTHON) -m pytest $(PYTEST_ARGS) tests/unit tests/ui

test-vm: dev-image
	cd $(TOP) && KEEL_OUT=$(OUT) $(PYTHON) -m pytest $(PYTEST_ARGS) tests/vm

# figures, never pass/fail: lab scenarios side by side, CAKE placement, starving, the
# boot's timeline, the UI's own cost
# (each in its own process: one that stops is named, the others still print)
bench: dev-image
	cd $(TOP) && KEEL_OUT=$(OUT) PYTHONPATH=$(TOP)/tui $(PYTHON) -m bench.all

demo: dev-image
	cd $(TOP) && KEEL_OUT=$(OUT) $(PYTHON) -m tests.lab.demo $(DEMO)

# >>> release (Buildroot): make image, make check, pass-through targets
# make image                    the release image with Buildroot (needs internet)
# make image BUILDROOT_SRC=dir  use a local Buildroot tree instead of the download
# make check [BUILDROOT_SRC=dir] static checks, the kernel configuration resolved on the
#                               Linux source host-deps.sh installs (+ check-package,
#                               defconfig round trip)
# make <other target>           passed to Buildroot, e.g. make linux-menuconfig
# make image and make release-bundle need your bundle signing certificate, the
# one the release image trusts (/etc/rauc/keyring.pem; the repository holds no
# key), and release-bundle its key (it never enters the image):
#   make image KEEL_RAUC_CERT=cert.pem
#   make release-bundle KEEL_RAUC_CERT=cert.pem KEEL_RAUC_KEY=key.pem
#                               the image, then a signed RAUC bundle of it
#                               (out/images/keel-x86_64.raucb; keel upgrade installs it)
BR_VERSION := 2026.02.3
# from buildroot-2026.02.3.tar.xz.sign (the release's PGP-signed hashes)
BR_SHA256 := 5a59e7501b0b4ec52c41f4bfa79412320e0b37eae5f719605a258e8d0c6fc7fb
BR_URL := https://buildroot.org/downloads/buildroot-$(BR_VERSION).tar.xz
BR_DEFCONFIG := keel_x86_64_defconfig
BR_EXTERNAL := $(TOP)/buildroot-external
BR_SCRIPTS := $(BR_EXTERNAL)/scripts
# Shared between checkouts and builds: the Buildroot tarball, every package's
# source (BR2_DL_DIR) and ccache (BR2_CCACHE_DIR).
KEEL_CACHE ?= $(HOME)/.cache/keel
override KEEL_CACHE := $(abspath $(KEEL_CACHE))
# Buildroot's output directory, made absolute (Buildroot would read a relative
# O= against its own tree).
O ?= $(OUT)/buildroot
override O := $(abspath $(O))
ifdef BUILDROOT_SRC
override BUILDROOT_SRC := $(abspath $(BUILDROOT_SRC))
BR_SRC := $(BUILDROOT_SRC)
else
BR_SRC := $(KEEL_CACHE)/buildroot-$(BR_VERSION)
endif
# The bundle signing certificate (and, for release-bundle, its key): make
# variables or the environment, made absolute. The defconfig's
# BR2_PACKAGE_KEEL_RAUC_KEYRING is $(KEEL_RAUC_CERT), expanded by Buildroot's
# make: it gets the absolute path on its command line.
ifneq ($(KEEL_RAUC_CERT),)
override KEEL_RAUC_CERT := $(abspath $(KEEL_RAUC_CERT))
endif
ifneq ($(KEEL_RAUC_KEY),)
override KEEL_RAUC_KEY := $(abspath $(KEEL_RAUC_KEY))
endif
BR_MAKE := BR2_DL_DIR=$(KEEL_CACHE)/dl BR2_CCACHE_DIR=$(KEEL_CACHE)/ccache \
	$(MAKE) -C $(BR_SRC) BR2_EXTERNAL=$(BR_EXTERNAL) O=$(O) KEEL_RAUC_CERT=$(KEEL_RAUC_CERT)
ifdef BUILDROOT_SRC
BR_FETCH := test -f $(BR_SRC)/Makefile || { echo "image: no Buildroot tree at $(BR_SRC)" >&2; exit 1; }
else
BR_FETCH := $(BR_SCRIPTS)/buildroot-src.sh $(BR_VERSION) $(BR_SHA256) $(BR_URL) $(KEEL_CACHE)
endif
# the raw disk, its qcow2, and (post-image.sh --xz) the raw disk as xz with its
# sha256: what a rescue system streams onto a VPS's disk (docs/install.md)
RELEASE_IMAGES := keel-x86_64.img keel-x86_64.qcow2 keel-x86_64.img.xz \
	keel-x86_64.img.xz.sha256
RELEASE_BUNDLE := $(OUT)/images/keel-x86_64.raucb

.PHONY: image image-preflight release-bundle check check-shell check-python check-kernel-fragment check-buildroot

image: image-preflight
	@$(BR_FETCH)
	@echo "== image: configuring $(BR_DEFCONFIG) in $(O) with $(BR_SRC)"
	$(BR_MAKE) $(BR_DEFCONFIG)
	@echo "== image: downloading every package's source into $(KEEL_CACHE)/dl"
	$(BR_MAKE) source
	@echo "== image: building (Buildroot's '>>> package version step' lines show progress)"
	set -o pipefail; $(BR_MAKE) 2>&1 | tee $(O)/build.log
	@mkdir -p $(OUT)/images
	cp $(addprefix $(O)/images/,$(RELEASE_IMAGES)) $(OUT)/images/
	@echo "== image: done: $(addprefix $(OUT)/images/,$(RELEASE_IMAGES))"

# A signed RAUC bundle of the release image just built: a slot's two images
# (boot.vfat, rootfs.squashfs) and its version, as post-image.sh left them in
# Buildroot's images/, signed by Buildroot's host rauc.
# Without the key it stops at once, before the image is built.
ifneq ($(filter release-bundle,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(KEEL_RAUC_KEY)),)
$(error release-bundle: no signing key$(if $(KEEL_RAUC_KEY), at $(KEEL_RAUC_KEY)): \
	make release-bundle KEEL_RAUC_CERT=cert.pem KEEL_RAUC_KEY=key.pem)
endif
endif
release-bundle: image
	PATH=$(O)/host/bin:$$PATH $(TOP)/board/keel/rauc/make-bundle.sh $(O)/images \
		$(KEEL_RAUC_CERT) $(KEEL_RAUC_KEY) $(RELEASE_BUNDLE)

# Fail at once, before anything is downloaded: every missing host tool
# (Buildroot's dependencies.sh list, qemu-img for the qcow2; all named in one
# message with their Debian packages), then offline (naming the URL and the
# BUILDROOT_SRC override).
image-preflight:
	@$(BR_SCRIPTS)/host-tools.sh $(if $(BUILDROOT_SRC),,--download)
	@$(BR_SCRIPTS)/rauc-keyring.sh '$(KEEL_RAUC_CERT)'
ifndef BUILDROOT_SRC
	@$(BR_SCRIPTS)/online.sh $(BR_URL)
endif

check: check-shell check-python check-kernel-fragment check-buildroot
	@echo "== check: all passed"

check-shell:
	@echo "== check: shellcheck"
	@command -v shellcheck >/dev/null || { echo "check: install shellcheck" >&2; exit 1; }
	cd $(TOP) && shellcheck $$($(BR_SCRIPTS)/shell-scripts.sh board overlay buildroot-external .ci)

check-python:
	@echo "== check: ruff"
	@command -v ruff >/dev/null || { echo "check: pip install ruff" >&2; exit 1; }
	cd $(TOP) && ruff check tui tests bench

KERNEL_FRAGMENT := $(TOP)/board/keel/x86_64/linux.fragment
check-kernel-fragment:
	@echo "== check: kernel fragment against the feature list (tui/keel/kernel_features.py)"
	$(BR_SCRIPTS)/check-kernel-config --fragment $(KERNEL_FRAGMENT)
	@echo "== check: every fragment option survives x86_64_defconfig + olddefconfig (Linux source: host-deps.sh)"
	config=$$($(BR_SCRIPTS)/resolve-kernel-config.sh $(OUT)/kernel-config \
		$(BR_EXTERNAL)/configs/$(BR_DEFCONFIG) $(KERNEL_FRAGMENT)) && \
		$(BR_SCRIPTS)/check-kernel-config $$config $(KERNEL_FRAGMENT)

check-buildroot:
ifdef BUILDROOT_SRC
	@echo "== check: utils/check-package -b on buildroot-external/"
	@$(PYTHON) -c 'import magic, flake8' 2>/dev/null || { echo "check: Buildroot's" \
		"utils/check-package needs the Python modules magic and flake8:" \
		"pip install python-magic flake8" >&2; exit 1; }
	cd $(BR_EXTERNAL) && $(BUILDROOT_SRC)/utils/check-package -b $$(find . -type f | sort)
	@echo "== check: $(BR_DEFCONFIG) configure + savedefconfig round trip"
	$(BR_SCRIPTS)/defconfig-roundtrip.sh $(BUILDROOT_SRC) $(BR_EXTERNAL) $(BR_DEFCONFIG) \
		$(OUT)/buildroot-check
else
	@echo "== check: Buildroot checks skipped: no BUILDROOT_SRC given (check-package and the defconfig round trip need a Buildroot tree)"
endif

# Never remake the makefile through the pass-through rule below.
$(sort Makefile $(MAKEFILE_LIST)): ;

# Last resort: any other target goes to Buildroot (make linux-menuconfig,
# make busybox-rebuild, ...). Explicit targets above and in the rest of this
# Makefile always win over this pattern rule.
# The output directory is configured once; later targets keep its .config.
%: | $(O)/.config
	$(BR_MAKE) $@

$(O)/.config:
ifndef BUILDROOT_SRC
	@test -f $(BR_SRC)/Makefile || $(BR_SCRIPTS)/online.sh $(BR_URL)
endif
	@$(BR_FETCH)
	$(BR_MAKE) $(BR_DEFCONFIG)
# <<< release (Buildroot)
