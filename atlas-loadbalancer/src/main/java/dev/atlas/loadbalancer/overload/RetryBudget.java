package dev.atlas.loadbalancer.overload;

import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import dev.atlas.loadbalancer.support.WindowedCount;

/**
 * The retry budget of one service as this caller sees it, shared by every retry path to
 * it: each request {@linkplain #deposit() deposits}, each retry
 * {@linkplain #tryWithdraw() withdraws}, and a retry is allowed only while, over the last
 * {@linkplain RetryBudgetRules#window() window}, retries stay within
 * {@code ratio × requests + minRetriesPerSecond × window}. The token bucket of Finagle's
 * {@code RetryBudget} and Linkerd's retry budget: a deposit is one request's worth, a
 * retry costs {@code 1 / ratio} of them, and the minimum is a reserve that needs no
 * deposit. Kept as two {@linkplain WindowedCount windowed counts} (requests and retries)
 * rather than one balance, so that a change of ratio or minimum applies at once to the
 * window's history ({@link #update}).
 *
 * <p>
 * Unlike Finagle's, the bound is checked over every trailing part of the window as well:
 * the current slice (a tenth of the window), the last two slices, and so on up to the
 * whole window, each with the whole reserve. So the credit a calm window leaves is not
 * spent in one burst when failures start, retries spread over the slices of an outage,
 * and every window of whole slices, wherever it starts, holds at most
 * {@code ratio × its requests + reserve} retries (a retry is allowed only if the part of
 * every such window that has passed stays within it, and later requests only raise the
 * bound).
 *
 * <p>
 * Only logical requests deposit, not their retries (so the bound is {@code ratio} of the
 * load the callers offer, not of the load they make); refused retries are counted
 * ({@link #exhausted()}). Thread-safe and lock-free; neither call allocates. Deposits,
 * made by every request, are counted in stripes (one per thread id modulo a power of two
 * of at least twice the processors), so that threads do not write one counter; a
 * withdrawal, made only by a retry, sums them. A withdrawal counts itself first and takes
 * itself back when the balance does not cover it, so concurrent retries never overdraw
 * the budget (at worst one is refused that a sequential order would have allowed).
 *
 * @since 0.1.0
 */
public final class RetryBudget {

	private final LongSupplier nanoTicker;

	private final LongAdder exhausted = new LongAdder();

	private volatile Window window;

	/**
	 * Creates a budget on {@link System#nanoTime()}.
	 * @param rules the rules; not {@code null}
	 */
	public RetryBudget(RetryBudgetRules rules) {
		this(rules, System::nanoTime);
	}

	/**
	 * Creates a budget.
	 * @param rules the rules; not {@code null}
	 * @param nanoTicker the time in ns (e.g. {@code System::nanoTime}), only compared
	 * with itself; thread-safe
	 */
	public RetryBudget(RetryBudgetRules rules, LongSupplier nanoTicker) {
		this.nanoTicker = Objects.requireNonNull(nanoTicker, "nanoTicker");
		this.window = new Window(Objects.requireNonNull(rules, "rules"), nanoTicker.getAsLong());
	}

	/**
	 * Records one request (not a retry of it): what the budget grows by.
	 */
	public void deposit() {
		Window current = this.window;
		if (current.rules.enabled()) {
			// Thread.getId: threadId() from Java 19 on
			current.requests[(int) Thread.currentThread().getId() & (current.requests.length - 1)].add(1,
					this.nanoTicker.getAsLong());
		}
	}

	/**
	 * Asks for one retry: allowed, and counted, when the window's balance covers it
	 * ({@link #balance()} {@code >= 1}); otherwise counted as {@linkplain #exhausted()
	 * exhausted} and refused. Always allowed, and not counted, when the budget is off.
	 * @return {@code true} when the retry may be made
	 */
	public boolean tryWithdraw() {
		Window current = this.window;
		if (!current.rules.enabled()) {
			return true;
		}
		long now = this.nanoTicker.getAsLong();
		current.retries.add(1, now);
		if (current.balance(now) >= 0) {
			return true;
		}
		current.retries.add(-1, now);
		this.exhausted.increment();
		return false;
	}

	/**
	 * Retries the budget allows now: the least of
	 * {@code ratio × requests + reserve − retries} over the trailing parts of the window
	 * (the current slice, the last two, … the whole window), a number of retries, which
	 * may be fractional, and negative when retries made earlier count for more than the
	 * requests now allow (requests left the window before the retries they paid for, or a
	 * lower ratio): no retry is allowed until it is 1 again.
	 * @return retries; {@link Double#POSITIVE_INFINITY} when the budget is off
	 */
	public double balance() {
		Window current = this.window;
		if (!current.rules.enabled()) {
			return Double.POSITIVE_INFINITY;
		}
		return current.balance(this.nanoTicker.getAsLong());
	}

	/**
	 * Requests deposited over the window.
	 * @return {@code >= 0}
	 */
	public long requests() {
		return this.window.requests(this.nanoTicker.getAsLong());
	}

	/**
	 * Retries withdrawn over the window.
	 * @return {@code >= 0}
	 */
	public long retries() {
		return this.window.retries.sum(this.nanoTicker.getAsLong());
	}

	/**
	 * Retries refused so far (a monotonic count, what
	 * {@code atlas.retry.budget.exhausted} reports).
	 * @return {@code >= 0}
	 */
	public long exhausted() {
		return this.exhausted.sum();
	}

	/**
	 * The rules in force.
	 * @return never {@code null}
	 */
	public RetryBudgetRules rules() {
		return this.window.rules;
	}

	/**
	 * Puts new rules in force (a runtime change of configuration). A new ratio or minimum
	 * applies at once to the counts of the window; a budget turned on, or given a new
	 * window length, starts empty (nothing is counted while it is off, and slices of
	 * another length cannot be reused), with the full reserve. Changes must not run
	 * concurrently with each other (Atlas makes them one at a time per service); they may
	 * run concurrently with deposits and withdrawals.
	 * @param rules the new rules; not {@code null}
	 */
	public void update(RetryBudgetRules rules) {
		Objects.requireNonNull(rules, "rules");
		Window current = this.window;
		boolean keep = current.rules.enabled() && rules.window().equals(current.rules.window());
		this.window = keep ? current.with(rules) : new Window(rules, this.nanoTicker.getAsLong());
	}

	@Override
	public String toString() {
		return "RetryBudget[" + this.window.rules + "]";
	}

	/** The rules and the two counts over their window. */
	private static final class Window {

		/**
		 * Stripes of the requests' count: a power of two, at least twice the processors.
		 */
		private static final int STRIPES = Integer
			.highestOneBit(Math.min(64, Math.max(2, 2 * Runtime.getRuntime().availableProcessors())) * 2 - 1);

		final RetryBudgetRules rules;

		final WindowedCount[] requests;

		final WindowedCount retries;

		Window(RetryBudgetRules rules, long nowNanos) {
			this(rules, stripes(rules.window().toNanos(), nowNanos),
					new WindowedCount(rules.window().toNanos(), nowNanos));
		}

		private Window(RetryBudgetRules rules, WindowedCount[] requests, WindowedCount retries) {
			this.rules = rules;
			this.requests = requests;
			this.retries = retries;
		}

		private static WindowedCount[] stripes(long windowNanos, long nowNanos) {
			WindowedCount[] stripes = new WindowedCount[STRIPES];
			for (int i = 0; i < stripes.length; i++) {
				stripes[i] = new WindowedCount(windowNanos, nowNanos);
			}
			return stripes;
		}

		Window with(RetryBudgetRules newRules) {
			return new Window(newRules, this.requests, this.retries);
		}

		/** Requests over the window, every stripe's. */
		long requests(long nowNanos) {
			long sum = 0;
			for (WindowedCount stripe : this.requests) {
				sum += stripe.sum(nowNanos);
			}
			return sum;
		}

		/**
		 * Retries left (negative when overdrawn): the least of
		 * {@code ratio × requests + reserve − retries} over the trailing windows, the
		 * current slice, it and the one before, and so on up to the whole window. Read
		 * slice by slice from the newest, with no allocation. Every count of a window is
		 * created with the same window and time, so one epoch serves them all.
		 */
		double balance(long nowNanos) {
			double ratio = this.rules.ratio();
			double left = this.rules.reserve();
			double least = Double.POSITIVE_INFINITY;
			long current = this.retries.epoch(nowNanos);
			for (long epoch = current; epoch > current - WindowedCount.SLICES; epoch--) {
				long requests = 0;
				for (WindowedCount stripe : this.requests) {
					requests += stripe.count(epoch);
				}
				left += ratio * requests - this.retries.count(epoch);
				least = Math.min(least, left);
			}
			return least;
		}

	}

}
