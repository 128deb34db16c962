# install.mk - `make install` / `make uninstall` for admins and packagers.
#
#   make install   DESTDIR=/tmp/stage PREFIX=/usr
#   make uninstall DESTDIR=/tmp/stage PREFIX=/usr
#
# Directories (defined in the Makefile, all overridable): PREFIX, SBINDIR,
# DATADIR, MANDIR, SYSCONFDIR, BASHCOMPDIR, LIBDIR_KERNEL; and here:
#   KERNEL_POSTINST_DIR  Debian's kernel hooks ($(SYSCONFDIR)/kernel/postinst.d);
#                        empty: the hook is not installed (RPM distributions)
#   GRUB_DROPIN_DIR      GRUB's drop-in directory on the Debian family
#                        ($(SYSCONFDIR)/default/grub.d); empty: not installed
#
# What goes where:
#   $(SBINDIR)/memcg-policy                              (install-bin)
#   $(LIBDIR_KERNEL)/install.d/55-memcg-policy.install   kernel-install plugin (UKIs)
#   $(LIBDIR_KERNEL)/install.d/95-memcg-policy.install   kernel-install plugin
#   $(KERNEL_POSTINST_DIR)/50-memcg-policy               Debian kernel hook
#   $(GRUB_DROPIN_DIR)/99-memcg-policy.cfg               GRUB drop-in (Debian)
#   $(DATADIR)/memcg-policy/99-memcg-policy.cfg          the same drop-in, for
#       the marked line that /etc/default/grub gets where GRUB has no drop-in
#       directory (Fedora, openSUSE, Arch, upstream GRUB)
#   $(SYSCONFDIR)/memcg-policy.conf                      the default policy:
#       every key commented out, so it changes nothing; an existing file (the
#       admin's) is never overwritten, and `uninstall` leaves it in place
#   $(MANDIR)/man8/memcg-policy.8, $(MANDIR)/man5/memcg-policy.conf.5
#   $(BASHCOMPDIR)/memcg-policy                          bash completion
#   $(SYSTEMDUNITDIR)/memcg-policy-metrics.{service,timer}  check --prometheus
#       for node_exporter's textfile collector, every 15 minutes; the timer
#       is not enabled (systemctl enable --now memcg-policy-metrics.timer)
#
# The hooks get the installed path of the program (@SBINDIR@ replaced).
# Give the same directories to the build: the binary knows where the GRUB
# drop-in is installed (mk/grub.mk compiles $(DATADIR) into slot-grub.o).

KERNEL_POSTINST_DIR ?= $(SYSCONFDIR)/kernel/postinst.d
SYSTEMDUNITDIR      ?= $(PREFIX)/lib/systemd/system
GRUB_DROPIN_DIR     ?= $(SYSCONFDIR)/default/grub.d
INSTALL             ?= install

# install_script SOURCE DEST: the hook with @SBINDIR@ set, mode 0755
define install_script
	$(INSTALL) -d $(dir $(2))
	sed 's|@SBINDIR@|$(SBINDIR)|g' $(1) > $(2).tmp
	chmod 0755 $(2).tmp
	mv -f $(2).tmp $(2)
endef

.PHONY: install uninstall

install: install-bin
	$(call install_script,hooks/55-memcg-policy.install,$(DESTDIR)$(LIBDIR_KERNEL)/install.d/55-memcg-policy.install)
	$(call install_script,hooks/95-memcg-policy.install,$(DESTDIR)$(LIBDIR_KERNEL)/install.d/95-memcg-policy.install)
ifneq ($(strip $(KERNEL_POSTINST_DIR)),)
	$(call install_script,hooks/50-memcg-policy.postinst,$(DESTDIR)$(KERNEL_POSTINST_DIR)/50-memcg-policy)
endif
	@if [ -f grub.d/99-memcg-policy.cfg ]; then \
		echo "$(INSTALL) -D -m 0644 grub.d/99-memcg-policy.cfg $(DESTDIR)$(DATADIR)/memcg-policy/99-memcg-policy.cfg"; \
		$(INSTALL) -D -m 0644 grub.d/99-memcg-policy.cfg $(DESTDIR)$(DATADIR)/memcg-policy/99-memcg-policy.cfg || exit; \
		if [ -n "$(strip $(GRUB_DROPIN_DIR))" ]; then \
			echo "$(INSTALL) -D -m 0644 grub.d/99-memcg-policy.cfg $(DESTDIR)$(GRUB_DROPIN_DIR)/99-memcg-policy.cfg"; \
			$(INSTALL) -D -m 0644 grub.d/99-memcg-policy.cfg $(DESTDIR)$(GRUB_DROPIN_DIR)/99-memcg-policy.cfg || exit; \
		fi; \
	else \
		echo "install.mk: grub.d/99-memcg-policy.cfg is missing: GRUB drop-in not installed" >&2; \
	fi
	@if [ ! -f conf/memcg-policy.conf ]; then \
		echo "install.mk: conf/memcg-policy.conf is missing: default policy not installed" >&2; \
	elif [ -e "$(DESTDIR)$(SYSCONFDIR)/memcg-policy.conf" ]; then \
		echo "install.mk: keeping the existing $(DESTDIR)$(SYSCONFDIR)/memcg-policy.conf"; \
	else \
		echo "$(INSTALL) -D -m 0644 conf/memcg-policy.conf $(DESTDIR)$(SYSCONFDIR)/memcg-policy.conf"; \
		$(INSTALL) -D -m 0644 conf/memcg-policy.conf $(DESTDIR)$(SYSCONFDIR)/memcg-policy.conf; \
	fi
	$(INSTALL) -D -m 0644 man/memcg-policy.8 $(DESTDIR)$(MANDIR)/man8/memcg-policy.8
	$(INSTALL) -D -m 0644 man/memcg-policy.conf.5 $(DESTDIR)$(MANDIR)/man5/memcg-policy.conf.5
	$(INSTALL) -D -m 0644 completion/memcg-policy $(DESTDIR)$(BASHCOMPDIR)/memcg-policy
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' systemd/memcg-policy-metrics.service.in > $(DESTDIR)$(SYSTEMDUNITDIR)/memcg-policy-metrics.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/memcg-policy-metrics.service
	$(INSTALL) -m 0644 systemd/memcg-policy-metrics.timer $(DESTDIR)$(SYSTEMDUNITDIR)/memcg-policy-metrics.timer

# Everything install put there, except the policy in $(SYSCONFDIR) (the
# admin's from then on). Boot configuration the tool wrote stays as it is:
# `memcg-policy revert` before uninstalling takes it out.
uninstall: uninstall-bin
	rm -f $(DESTDIR)$(LIBDIR_KERNEL)/install.d/55-memcg-policy.install
	rm -f $(DESTDIR)$(LIBDIR_KERNEL)/install.d/95-memcg-policy.install
ifneq ($(strip $(KERNEL_POSTINST_DIR)),)
	rm -f $(DESTDIR)$(KERNEL_POSTINST_DIR)/50-memcg-policy
endif
ifneq ($(strip $(GRUB_DROPIN_DIR)),)
	rm -f $(DESTDIR)$(GRUB_DROPIN_DIR)/99-memcg-policy.cfg
endif
	rm -f $(DESTDIR)$(DATADIR)/memcg-policy/99-memcg-policy.cfg
	@rmdir $(DESTDIR)$(DATADIR)/memcg-policy 2>/dev/null || true
	rm -f $(DESTDIR)$(MANDIR)/man8/memcg-policy.8 $(DESTDIR)$(MANDIR)/man5/memcg-policy.conf.5
	rm -f $(DESTDIR)$(BASHCOMPDIR)/memcg-policy
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/memcg-policy-metrics.service $(DESTDIR)$(SYSTEMDUNITDIR)/memcg-policy-metrics.timer
