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

# The RAUC keyring (/etc/rauc/keyring.pem): the user's certificate, and only
# it (BR2_PACKAGE_KEEL_RAUC_KEYRING; keel_x86_64_defconfig takes it from
# make image KEEL_RAUC_CERT=...). Checked and installed at every build's
# target-finalize, so a new certificate reaches the image without rebuilding
# keel. A full build (make, make all) without one stops before it starts;
# package targets (make linux-menuconfig) need none.
KEEL_RAUC_KEYRING = $(call qstrip,$(BR2_PACKAGE_KEEL_RAUC_KEYRING))

ifeq ($(BR2_PACKAGE_KEEL)$(BR2_PACKAGE_RAUC),yy)
define KEEL_INSTALL_RAUC_KEYRING
	@$(call MESSAGE,"Installing the RAUC keyring $(KEEL_RAUC_KEYRING)")
	$(BR2_EXTERNAL_KEEL_PATH)/scripts/rauc-keyring.sh \
		'$(KEEL_RAUC_KEYRING)' $(TARGET_DIR)/etc/rauc/keyring.pem
endef
TARGET_FINALIZE_HOOKS += KEEL_INSTALL_RAUC_KEYRING

ifeq ($(BR_BUILDING),y)
ifeq ($(filter-out all,$(MAKECMDGOALS)),)
ifeq ($(KEEL_RAUC_KEYRING),)
$(error BR2_PACKAGE_KEEL_RAUC_KEYRING is empty: the release image must trust your \
	bundle signing certificate, and only it (the repository holds no key): \
	make image KEEL_RAUC_CERT=/path/to/cert.pem)
endif
endif
endif
endif

$(eval $(python-package))
