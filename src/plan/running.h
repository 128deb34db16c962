/* plan/running.h - the running kernel against its decision (live system
 * only): reboot pending, or the kernel ignored what it booted with. */
#pragma once

#include "plan/plan.h"

/* Sets ev->reboot_pending, or ev->kernel_ignored (and in_sync false)
 * where the running kernel booted with the line the slots give it and
 * runs otherwise all the same. Called after the slots are planned, and
 * again after a commit. */
void judge_running(const struct context *ctx, struct evaluation *ev);
