/* test.h - the unit tests' harness. Each TEST() is a function; CHECK()
 * records a failure with its file and line and the test goes on. Every test
 * prints "PASS: name" or "FAIL: name"; tests/run.sh counts those lines. */
#pragma once

#include <stdio.h>
#include <string.h>

static int test_failed_checks;

#define CHECK(cond)                                                            \
	do {                                                                       \
		if (!(cond)) {                                                         \
			fprintf(stdout, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                        \
			test_failed_checks++;                                              \
		}                                                                      \
	} while (0)

#define CHECK_STR(a, b)                                                         \
	do {                                                                        \
		const char *a_ = (a), *b_ = (b);                                        \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                \
			fprintf(stdout, "  %s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, \
				__LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");            \
			test_failed_checks++;                                               \
		}                                                                       \
	} while (0)

#define CHECK_INT(a, b)                                                            \
	do {                                                                           \
		long long a_ = (long long)(a), b_ = (long long)(b);                        \
		if (a_ != b_) {                                                            \
			fprintf(stdout, "  %s:%d: %s is %lld, expected %lld\n", __FILE__, __LINE__, \
				#a, a_, b_);                                                       \
			test_failed_checks++;                                                  \
		}                                                                          \
	} while (0)

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST(name) static void name(void)

static inline int test_run_all(const struct test_case *cases, size_t n)
{
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		int before = test_failed_checks;
		cases[i].fn();
		int ok = test_failed_checks == before;
		printf("%s: %s\n", ok ? "PASS" : "FAIL", cases[i].name);
		failed += !ok;
	}
	fflush(stdout);
	return failed ? 1 : 0;
}

#define T(name) { #name, name }
#define TEST_MAIN(...)                                                   \
	int main(void)                                                       \
	{                                                                    \
		static const struct test_case cases_[] = { __VA_ARGS__ };        \
		return test_run_all(cases_, sizeof(cases_) / sizeof(cases_[0])); \
	}
