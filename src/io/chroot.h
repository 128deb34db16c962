/* io/chroot.h - is this process in a chroot, its root directory not the
 * one init has? A chroot (an image build's apt hooks, mmdebstrap hooks,
 * a rescue shell) is an offline root: the running kernel, RAM and memcg
 * state read from /proc are the host's, not the tree's. */
#pragma once

/* 1 in a chroot, 0 not (or not to be taken as one), -errno when it cannot
 * be told. Asked as systemd's running_in_chroot() asks it: "/" against
 * /proc/1/root; no /proc at all is a chroot. Where /proc/1/root may not be
 * read (no ptrace access to init, as in some containers), the mount that
 * holds "/" is looked up in the mount tables of this process and of init:
 * a root that is no mount's root seen from here, or a mount init sees
 * elsewhere than at "/", is a chroot.
 * MEMCG_POLICY_IGNORE_CHROOT set to a value other than 0 answers 0. */
int running_in_chroot(void);
