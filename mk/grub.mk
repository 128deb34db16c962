# grub.mk - the GRUB drop-in built into the binary.
#
# grub.d/99-memcg-policy.cfg is the file the package installs; `apply`
# writes the same text where GRUB sources drop-ins and the package has not
# installed it. $(BUILD)/gen/dropin.h holds it as a byte array
# (grub_dropin_text[], GRUB_DROPIN_LEN), made with od and sed (POSIX tools,
# no xxd). slots/grub/grub.o also learns where the package installs the drop-in
# for the marked line of /etc/default/grub: $(DATADIR)/memcg-policy/ (see
# mk/install.mk).

GRUB_DROPIN_SRC = grub.d/99-memcg-policy.cfg

$(BUILD)/gen/dropin.h: $(GRUB_DROPIN_SRC) mk/grub.mk
	@mkdir -p $(@D)
	{ echo '/* generated from $(GRUB_DROPIN_SRC) by mk/grub.mk: do not edit */'; \
	  echo 'static const char grub_dropin_text[] = {'; \
	  od -An -v -tx1 $(GRUB_DROPIN_SRC) | sed -e 's/[[:space:]]*\([0-9a-f][0-9a-f]\)/0x\1,/g' -e '/^[[:space:]]*$$/d'; \
	  echo '0x00 };'; \
	  echo '#define GRUB_DROPIN_LEN (sizeof(grub_dropin_text) - 1)'; } > $@.tmp
	mv -f $@.tmp $@

$(BUILD)/obj/slots/grub/grub.o: $(BUILD)/gen/dropin.h
$(BUILD)/obj/slots/grub/grub.o: ALL_CFLAGS += -I$(BUILD)/gen \
	-DGRUB_DROPIN_DATA_PATH='"$(DATADIR)/memcg-policy/99-memcg-policy.cfg"'

# u-boot-menu's fragment, written by apply to /etc/u-boot-menu/conf.d/:
# $(BUILD)/gen/uboot-dropin.h (uboot_dropin_text[], UBOOT_DROPIN_LEN), for
# slots/grub/uboot.c.
UBOOT_DROPIN_SRC = u-boot-menu/99-memcg-policy.conf

$(BUILD)/gen/uboot-dropin.h: $(UBOOT_DROPIN_SRC) mk/grub.mk
	@mkdir -p $(@D)
	{ echo '/* generated from $(UBOOT_DROPIN_SRC) by mk/grub.mk: do not edit */'; \
	  echo 'static const char uboot_dropin_text[] = {'; \
	  od -An -v -tx1 $(UBOOT_DROPIN_SRC) | sed -e 's/[[:space:]]*\([0-9a-f][0-9a-f]\)/0x\1,/g' -e '/^[[:space:]]*$$/d'; \
	  echo '0x00 };'; \
	  echo '#define UBOOT_DROPIN_LEN (sizeof(uboot_dropin_text) - 1)'; } > $@.tmp
	mv -f $@.tmp $@

$(BUILD)/obj/slots/grub/uboot.o: $(BUILD)/gen/uboot-dropin.h
$(BUILD)/obj/slots/grub/uboot.o: ALL_CFLAGS += -I$(BUILD)/gen
