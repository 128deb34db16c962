/* facts/context.c - on-demand loading of what the commands share */
#include "facts/context.h"
#include "facts/rpi-firmware.h"

#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "lib/diag.h"
#include "lib/util.h"

/* Each loader runs once: *_loaded says that what it allocated is to be
 * freed (context_unload), *_result what the load gave, which every later
 * call returns (a failed load is never taken for a done one). */
int context_load_policy(struct context *ctx)
{
	if (ctx->policy_loaded)
		return ctx->policy_result;
	policy_init(&ctx->policy);
	ctx->policy_loaded = true;
	ctx->policy_result =
		policy_load_as_if(&ctx->root, ctx->config_path, ctx->policy_as_if, ctx->policy_as_if_len, &ctx->policy);
	return ctx->policy_result;
}

static int load_kernels(struct context *ctx, const char *only_kernel)
{
	kernels_read_symbols_always(false);
	int r = kernels_load(&ctx->root, only_kernel, &ctx->kernels);
	if (r < 0)
		return r;
	kernels_apply_policy(&ctx->kernels, &ctx->policy, ctx->configs_may_be_missing);
	struct rpi_firmware fw;
	r = rpi_firmware_read(&ctx->root, &fw);
	if (r < 0)
		return r;
	rpi_firmware_to_kernels(&fw, &ctx->kernels);
	rpi_firmware_free(&fw);
	if (ctx->kernels.n == 0)
		return diag_error(
			EXIT_BADINPUT,
			"%s: no kernel found (no lib/modules/VER, boot/vmlinuz-VER, usr/lib/modules/VER/vmlinuz)",
			ctx->root.path);
	return 0;
}

int context_load_kernels(struct context *ctx, const char *only_kernel)
{
	if (ctx->kernels_loaded)
		return ctx->kernels_result;
	int r = context_load_policy(ctx);
	if (r < 0)
		return r;
	ctx->kernels_loaded = true;
	ctx->kernels_result = load_kernels(ctx, only_kernel);
	return ctx->kernels_result;
}

int context_load_system(struct context *ctx)
{
	if (ctx->sys_loaded)
		return ctx->sys_result;
	int r = context_load_policy(ctx);
	if (r < 0)
		return r;
	ctx->sys_loaded = true;
	ctx->sys_result = probe_system(&ctx->root, &ctx->policy, &ctx->sys);
	return ctx->sys_result;
}

void context_unload(struct context *ctx)
{
	if (ctx->sys_loaded)
		system_facts_free(&ctx->sys);
	if (ctx->kernels_loaded)
		kernels_free(&ctx->kernels);
	if (ctx->policy_loaded)
		policy_free(&ctx->policy);
	ctx->sys_loaded = ctx->kernels_loaded = ctx->policy_loaded = false;
}

void context_free(struct context *ctx)
{
	context_unload(ctx);
	if (ctx->lock_fd >= 0)
		close(ctx->lock_fd);
	ctx->lock_fd = -1;
	root_close(&ctx->root);
}

bool no_more_args(int argc, char **argv)
{
	if (optind >= argc)
		return true;
	diag_error(EXIT_USAGE, "%s: unexpected argument '%s'", argv[0], argv[optind]);
	return false;
}
