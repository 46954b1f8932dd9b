# keel's BR2_EXTERNAL tree: its packages, three hooks on Buildroot's own,
# firmware files added to its linux-firmware, and host-xz for the image.
include $(sort $(wildcard $(BR2_EXTERNAL_KEEL_PATH)/package/*/*.mk))

# GRUB i386-pc: Buildroot puts the core image in images/grub.img but leaves
# boot.img (the MBR code) in its build tree; post-image.sh wants it in images/.
define KEEL_GRUB2_INSTALL_BOOT_IMG
	$(INSTALL) -D -m 0644 $(GRUB2_DIR)/build-i386-pc/grub-core/boot.img \
		$(BINARIES_DIR)/boot.img
endef
ifeq ($(BR2_TARGET_GRUB2_I386_PC),y)
GRUB2_POST_INSTALL_IMAGES_HOOKS += KEEL_GRUB2_INSTALL_BOOT_IMG
endif

# post-image.sh --xz compresses the image with xz (board/keel/x86_64/compress-image.sh).
# Buildroot 2026.02.3 has no BR2_PACKAGE_HOST_XZ option; host-xz comes today
# only as others' dependency (host-squashfs, the kernel's host-elfutils).
# Listed here for the image in its own right (once): every one of PACKAGES is
# built before target-finalize, so before the post-image script, whose PATH
# starts with $(HOST_DIR)/bin (the same xz on every build host); make source
# downloads it.
PACKAGES += $(filter-out $(PACKAGES),host-xz)

# After the kernel build: every option of the fragment reached the final
# .config (kconfig drops an option whose dependencies are missing silently).
define KEEL_LINUX_CHECK_CONFIG
	@$(call MESSAGE,"Checking the kernel fragment against the final .config")
	$(BR2_EXTERNAL_KEEL_PATH)/scripts/check-kernel-config \
		$(LINUX_DIR)/.config $(LINUX_KCONFIG_FRAGMENT_FILES)
endef
LINUX_POST_BUILD_HOOKS += KEEL_LINUX_CHECK_CONFIG

# keel apply runs nftables, dnsmasq, dhcpcd (and the overlay any other daemon) itself;
# the packages' own init scripts would start them a second time with their
# default configs. The dev image has none of these either. The overlay is
# copied after this hook, so a script it ships under one of these names stays.
KEEL_PACKAGE_INIT_SCRIPTS = S35nftables S41dhcpcd S49chronyd S50dropbear S80dnsmasq
define KEEL_REMOVE_PACKAGE_INIT_SCRIPTS
	rm -f $(addprefix $(TARGET_DIR)/etc/init.d/,$(KEEL_PACKAGE_INIT_SCRIPTS))
endef
TARGET_FINALIZE_HOOKS += KEEL_REMOVE_PACKAGE_INIT_SCRIPTS

# linux-firmware files keel's NIC drivers load that no option of Buildroot
# 2026.02.3 installs: the RTL8126's (5 GbE, r8169; BR2_PACKAGE_LINUX_FIRMWARE_RTL_8169
# stops at the RTL8125). Appended to the list the selected options made
# (linux-firmware.mk is read before this file; its build step expands the
# list when it runs). tests/unit/test_release_firmware.py checks that the
# options and this list hold every file keel.kernel_features names.
KEEL_LINUX_FIRMWARE_FILES = rtl_nic/rtl8126a-2.fw rtl_nic/rtl8126a-3.fw
ifeq ($(BR2_PACKAGE_LINUX_FIRMWARE),y)
LINUX_FIRMWARE_FILES += $(KEEL_LINUX_FIRMWARE_FILES)
endif
