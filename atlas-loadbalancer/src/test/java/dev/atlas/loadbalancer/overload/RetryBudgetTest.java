package dev.atlas.loadbalancer.overload;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.offset;

class RetryBudgetTest {

	private final AtomicLong now = new AtomicLong(5_000_000_000L);

	private RetryBudget budget(double ratio, int minPerSecond) {
		return new RetryBudget(new RetryBudgetRules(true, ratio, minPerSecond, Duration.ofSeconds(10)), this.now::get);
	}

	private int withdrawals(RetryBudget budget, int asked) {
		int allowed = 0;
		for (int i = 0; i < asked; i++) {
			if (budget.tryWithdraw()) {
				allowed++;
			}
		}
		return allowed;
	}

	@Test
	void withoutTrafficTheReserveAllowsMinRetriesPerSecondTimesTheWindow() {
		RetryBudget budget = budget(0.2, 10);
		assertThat(budget.balance()).isEqualTo(100.0);
		assertThat(withdrawals(budget, 150)).isEqualTo(100);
		assertThat(budget.exhausted()).isEqualTo(50);
		assertThat(budget.balance()).isEqualTo(0.0);
	}

	@Test
	void eachRequestAddsRatioOfARetry() {
		RetryBudget budget = budget(0.2, 0);
		for (int i = 0; i < 1000; i++) {
			budget.deposit();
		}
		assertThat(budget.requests()).isEqualTo(1000);
		assertThat(budget.balance()).isEqualTo(200.0, offset(1e-9));
		assertThat(withdrawals(budget, 1000)).isEqualTo(200);
		assertThat(budget.retries()).isEqualTo(200);
	}

	@Test
	void depositsAndRetriesLeaveTheWindowAndTheBudgetRefills() {
		RetryBudget budget = budget(0.2, 1);
		assertThat(withdrawals(budget, 20)).isEqualTo(10);
		this.now.addAndGet(Duration.ofSeconds(5).toNanos());
		assertThat(budget.tryWithdraw()).isFalse();
		this.now.addAndGet(Duration.ofSeconds(6).toNanos());
		assertThat(budget.retries()).isZero();
		assertThat(withdrawals(budget, 20)).isEqualTo(10);
	}

	@Test
	void atLowTrafficAndFewFailuresEveryRetryIsAllowed() {
		// 5 requests per second, 5 % failing, each failure retried once, for a minute
		RetryBudget budget = budget(0.2, 10);
		int refused = 0;
		for (int second = 0; second < 60; second++) {
			for (int request = 0; request < 5; request++) {
				budget.deposit();
				if ((second * 5 + request) % 20 == 0 && !budget.tryWithdraw()) {
					refused++;
				}
				this.now.addAndGet(200_000_000L);
			}
		}
		assertThat(refused).isZero();
		assertThat(budget.exhausted()).isZero();
	}

	@Test
	void underSustainedFailureRetriesStayWithinRatioPlusReserveInEveryWindow() {
		// 800 requests per second, every one failing and asking for a retry
		RetryBudget budget = budget(0.2, 10);
		int[] perSecond = new int[30];
		for (int ms = 0; ms < 30_000; ms++) {
			if (ms % 5 != 0) {
				// 4 of 5 ms: 800 requests per second
				budget.deposit();
			}
			if (budget.tryWithdraw()) {
				perSecond[ms / 1000]++;
			}
			this.now.addAndGet(1_000_000L);
		}
		for (int start = 0; start + 10 <= 30; start++) {
			int sum = 0;
			for (int s = start; s < start + 10; s++) {
				sum += perSecond[s];
			}
			// ratio × requests + reserve: the budget's slices are this test's seconds
			assertThat(sum).as("window starting at %d s", start).isLessThanOrEqualTo((int) (0.2 * 8000 + 100));
		}
		// and the budget is used: over the last 10 s, close to 0.2 × 8,000 + 100
		int last = 0;
		for (int s = 20; s < 30; s++) {
			last += perSecond[s];
		}
		assertThat(last).isBetween(1600, 1700);
	}

	@Test
	void aWindowsCreditIsNotSpentInOneBurst() {
		// 9 s of 1,000 requests per second without a retry: 1,800 retries of credit over
		// the window (Finagle's bucket would allow them at once), but the current second
		// has no request yet, so only the reserve covers it
		RetryBudget budget = budget(0.2, 10);
		for (int second = 0; second < 9; second++) {
			for (int request = 0; request < 1000; request++) {
				budget.deposit();
			}
			this.now.addAndGet(1_000_000_000L);
		}
		assertThat(withdrawals(budget, 1000)).isEqualTo(100);
		assertThat(budget.balance()).isEqualTo(0.0);
		// each request of this second pays for a fifth of a retry
		for (int request = 0; request < 50; request++) {
			budget.deposit();
		}
		assertThat(withdrawals(budget, 1000)).isEqualTo(10);
	}

	@Test
	void whenOneInstanceOfThreeStartsFailingTheFirstSecondsRetriesArePaidByTheirOwnRequests() {
		// 1,000 requests per second, 10 s calm, then every third request fails and asks
		// for a retry (the figures of docs/overload.md)
		RetryBudget budget = budget(0.2, 10);
		int[] refused = new int[13];
		for (int ms = 0; ms < 13_000; ms++) {
			budget.deposit();
			if (ms >= 10_000 && ms % 3 == 0 && !budget.tryWithdraw()) {
				refused[ms / 1000]++;
			}
			this.now.addAndGet(1_000_000L);
		}
		// 333 asked in the first second, 200 + 100 allowed; then 200 a second
		assertThat(refused[10]).isBetween(32, 35);
		assertThat(refused[11]).isBetween(132, 135);
		assertThat(refused[12]).isBetween(132, 135);
	}

	@Test
	void atTwoHundredRequestsPerSecondTheReserveCoversOneFailureInThreeForAlmostFourSeconds() {
		// 200 requests per second, 10 s calm, then every third request fails and asks for
		// a retry: 66.7 retries a second against 40 + the reserve of 100, so the first is
		// refused at 3.75 s (the figure of docs/overload.md)
		RetryBudget budget = budget(0.2, 10);
		int[] refused = new int[15];
		for (int ms = 0; ms < 15_000; ms += 5) {
			budget.deposit();
			if (ms >= 10_000 && (ms / 5) % 3 == 0 && !budget.tryWithdraw()) {
				refused[ms / 1000]++;
			}
			this.now.addAndGet(5_000_000L);
		}
		assertThat(refused[10] + refused[11] + refused[12]).isZero();
		assertThat(refused[13]).isPositive();
	}

	@Test
	void retriesStayWithinRatioPlusReserveOverEveryWindowOfWholeSlicesWhenTheRateFalls() {
		// 1,000 requests per second, none failing, for 7 s; then 200 per second, every
		// one
		// failing and asking for a retry: a window that starts at the fall holds the
		// retries its own requests pay for, not those of the credit left by the seconds
		// before it
		RetryBudget budget = budget(0.2, 10);
		int[] requests = new int[30];
		int[] retries = new int[30];
		for (int ms = 0; ms < 30_000; ms++) {
			int second = ms / 1000;
			if (second < 7 || ms % 5 == 0) {
				budget.deposit();
				requests[second]++;
				if (second >= 7 && budget.tryWithdraw()) {
					retries[second]++;
				}
			}
			this.now.addAndGet(1_000_000L);
		}
		for (int start = 0; start + 10 <= 30; start++) {
			int windowRequests = 0;
			int windowRetries = 0;
			for (int s = start; s < start + 10; s++) {
				windowRequests += requests[s];
				windowRetries += retries[s];
			}
			assertThat(windowRetries).as("retries in [%d s, %d s)", start, start + 10)
				.isLessThanOrEqualTo((int) (0.2 * windowRequests) + 100);
		}
		// and spread: a fifth of each second's requests, and the reserve again each time
		// the retries it paid for leave the window
		for (int s = 7; s < 30; s++) {
			assertThat(retries[s]).as("retries in second %d", s).isEqualTo(((s - 7) % 10 == 0) ? 140 : 40);
		}
	}

	@Test
	void aNewRatioAppliesToTheWindowsCountsAndANewWindowStartsEmpty() {
		RetryBudget budget = budget(0.2, 0);
		for (int i = 0; i < 100; i++) {
			budget.deposit();
		}
		budget.update(new RetryBudgetRules(true, 0.5, 0, Duration.ofSeconds(10)));
		assertThat(budget.balance()).isEqualTo(50.0);
		budget.update(new RetryBudgetRules(true, 0.5, 2, Duration.ofSeconds(5)));
		assertThat(budget.requests()).isZero();
		assertThat(budget.balance()).isEqualTo(10.0);
	}

	@Test
	void offAllowsEveryRetryAndCountsNothing() {
		RetryBudget budget = new RetryBudget(RetryBudgetRules.OFF, this.now::get);
		budget.deposit();
		assertThat(withdrawals(budget, 1000)).isEqualTo(1000);
		assertThat(budget.balance()).isInfinite();
		assertThat(budget.requests()).isZero();
		assertThat(budget.exhausted()).isZero();
	}

	@Test
	void concurrentRetriesNeverOverdraw() throws InterruptedException {
		RetryBudget budget = budget(0, 10);
		AtomicInteger allowed = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		CountDownLatch start = new CountDownLatch(1);
		for (int t = 0; t < 4; t++) {
			pool.execute(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				for (int i = 0; i < 10_000; i++) {
					if (budget.tryWithdraw()) {
						allowed.incrementAndGet();
					}
				}
			});
		}
		start.countDown();
		pool.shutdown();
		assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		assertThat(allowed.get()).isEqualTo(100);
		assertThat(budget.exhausted()).isEqualTo(40_000 - 100);
	}

	@Test
	void rulesNameTheWrongProperty() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RetryBudgetRules(true, 1.5, 10, Duration.ofSeconds(10)))
			.withMessage("budget.ratio must be between 0 and 1, was 1.5");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RetryBudgetRules(true, 0.2, -1, Duration.ofSeconds(10)))
			.withMessage("budget.min-retries-per-second must be >= 0, was -1");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RetryBudgetRules(true, 0.2, 10, Duration.ofMillis(500)))
			.withMessage("budget.window must be between 1s and 1m, was PT0.5S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RetryBudgetRules(true, Double.NaN, 10, Duration.ofSeconds(10)))
			.withMessageStartingWith("budget.ratio");
	}

}
