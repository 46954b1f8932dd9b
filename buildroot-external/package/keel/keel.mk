################################################################################
#
# keel
#
################################################################################

# The Python package in the repository's tui/ directory, built as a wheel
# (setuptools backend, no build isolation) and installed into the target.
KEEL_VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' \
	$(BR2_EXTERNAL_KEEL_PATH)/../tui/keel/__init__.py)
KEEL_SITE = $(BR2_EXTERNAL_KEEL_PATH)/../tui
KEEL_SITE_METHOD = local
KEEL_SETUP_TYPE = setuptools

$(eval $(python-package))
