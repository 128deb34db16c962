/* commit/reboot-required.h - Debian's reboot convention: a run that leaves
 * the next boot's memcg unlike the running kernel's adds the package to
 * /run/reboot-required.pkgs and creates /run/reboot-required, as a
 * package's postinst does (read by unattended-upgrades, needrestart, the
 * motd, kured); a later run after which no reboot is needed takes its
 * line out again, and both files where it was the only one. */
#pragma once

#include <stdbool.h>

/* Only on the live system of a Debian-family installation
 * (/etc/debian_version), never with --root or in a chroot: the caller
 * passes live = false there. needed: the next boot's memcg differs from
 * the running kernel's. Failures are warnings: the run's own work is
 * done. */
void reboot_required_note(bool live, bool needed);
