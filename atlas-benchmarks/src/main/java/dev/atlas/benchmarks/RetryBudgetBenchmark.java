package dev.atlas.benchmarks;

import java.util.concurrent.TimeUnit;

import dev.atlas.loadbalancer.overload.RetryBudget;
import dev.atlas.loadbalancer.overload.RetryBudgetRules;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the retry budget costs a request: a deposit (every request, when it starts
 * choosing an instance) and, in an outage, a deposit and a retry asked for and refused.
 * One budget shared by every thread, as one service's is; run with {@code -t 2} for two
 * threads. Expected allocation: none.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 3, time = 1)
public class RetryBudgetBenchmark {

	private final RetryBudget budget = new RetryBudget(RetryBudgetRules.DEFAULTS);

	/**
	 * One request's deposit.
	 * @return the budget, so that the call is not eliminated
	 */
	@Benchmark
	public RetryBudget deposit() {
		this.budget.deposit();
		return this.budget;
	}

	/**
	 * A request that fails and asks for a retry, in a storm: the budget is spent, so the
	 * retry is refused (and counted).
	 * @return whether the retry was allowed
	 */
	@Benchmark
	public boolean depositAndAskForARetry() {
		this.budget.deposit();
		return this.budget.tryWithdraw();
	}

}
