// SPDX-License-Identifier: GPL-2.0
/*
 * Times a WARN_ON_ONCE() that fires again and again at one site: the C
 * reference for the storm of repeated Rust overflows (storm_rust.rs).
 * Prints "storm: <case> <repeats> <ns>", the fastest of ROUNDS loops, so
 * that a timer interrupt in one loop does not count.
 */
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/ktime.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/printk.h>

#define REPEATS 20000
#define ROUNDS 5

static bool fire;

static noinline void warn_site(void)
{
	WARN_ON_ONCE(READ_ONCE(fire));
}

static void time_case(const char *name)
{
	u64 start, best = U64_MAX;
	int i, round;

	for (round = 0; round < ROUNDS; round++) {
		start = ktime_get_ns();
		for (i = 0; i < REPEATS; i++)
			warn_site();
		best = min(best, ktime_get_ns() - start);
	}
	pr_info("storm: %s %d %llu\n", name, REPEATS, best);
}

static int __init storm_c_init(void)
{
	time_case("c-warn-on-once");
	WRITE_ONCE(fire, true);
	/* The first WARN is the report; the storm is what follows. */
	warn_site();
	time_case("c-warn-on-once-repeat");
	return 0;
}
module_init(storm_c_init);

MODULE_DESCRIPTION("Times a repeated WARN_ON_ONCE()");
MODULE_LICENSE("GPL");
