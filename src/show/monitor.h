/* show/monitor.h - what `check` gives monitoring systems: one status line with
 * the exit codes of the monitoring plugin convention (0 OK, 1 WARNING,
 * 2 CRITICAL, 3 UNKNOWN), and node_exporter textfile metrics written
 * atomically. */
#pragma once

#include "facts/context.h"
#include "plan/plan.h"

enum plugin_status { PLUGIN_OK = 0, PLUGIN_WARNING = 1, PLUGIN_CRITICAL = 2, PLUGIN_UNKNOWN = 3 };

/* check's exit code -> the plugin status: 0 OK, 5 (reboot pending)
 * WARNING, 1 (drift) CRITICAL, anything else UNKNOWN. */
enum plugin_status plugin_status_of(int check_exit);

/* The one status line, "MEMCG-POLICY OK - ...", with performance data.
 * ev is NULL when the evaluation failed: the line then gives the first
 * error recorded (lib/diag.h). */
void print_plugin_line(const struct context *ctx, const struct evaluation *ev, int check_exit);

/* A node-feature-discovery feature file (its features.d/ format): one
 * line "memcg-policy.memcg=on|off|pending|unknown", the running memcg
 * state, "pending" while a reboot is needed (the next boot's state with
 * --root); "unknown" where the check failed or the state is not known.
 * NFD labels the node feature.node.kubernetes.io/memcg-policy.memcg. */
char *nfd_feature_text(const struct context *ctx, const struct evaluation *ev);

/* The textfile metrics (Prometheus text format 0.0.4). ev NULL: only the
 * exit code and the time. */
char *prometheus_text(const struct context *ctx, const struct evaluation *ev, int check_exit, long long now);
