package dev.atlas.loadbalancer.choice;

import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.spi.PickContext;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;

/**
 * The {@value #NAME} strategy, as Finagle and Linkerd define it: power of two choices
 * over a cost, {@code peak-EWMA of the response time × (in-flight + 1)}, lower first. The
 * average ({@link PickContext#peakEwmaMillis}) jumps to a slower response at once and
 * forgets it with the decay time (10 s by default), so an instance that turns slow loses
 * its traffic within a request or two, and is tried again once its cost has decayed.
 *
 * <p>
 * Each pick draws {@code choiceCount} candidates (distinct when it can), each with
 * probability weight ÷ Σweight (effective weights, warmup included), and keeps the
 * cheapest; ties keep the earlier draw. A candidate without a response yet (a new
 * instance), or whose average has decayed to 0, is given the other candidate's average, a
 * neutral cost: in-flight requests alone decide, so new instances are tried without being
 * flooded. Differences from Finagle: weights decide which instances are drawn (Finagle
 * has none); the cost's decay is computed when read (see
 * {@link dev.atlas.loadbalancer.spi.LiveStats}); response times and in-flight requests
 * are this caller's own. In-flight requests are counted with the candidate's recent
 * failures ({@link FailurePenalty}): an instance answering errors at once is not taken
 * for a fast one.
 *
 * <p>
 * Thread-safe and lock-free; a pick allocates nothing.
 *
 * @since 0.1.0
 */
public final class PeakEwmaBalancer extends DrawingBalancer {

	/** The name of this strategy in properties. */
	public static final String NAME = "peak-ewma";

	private final int choiceCount;

	/**
	 * Creates a balancer drawing from {@link ThreadLocalRandom}.
	 * @param settings the service and its settings
	 * @param choiceCount candidates compared per pick, {@code >= 2}
	 * @throws IllegalArgumentException if {@code choiceCount < 2}
	 */
	public PeakEwmaBalancer(StrategySettings settings, int choiceCount) {
		this(settings, choiceCount, ThreadLocalRandom::current);
	}

	/**
	 * Creates a balancer with a chosen source of randomness, e.g. a seeded one in tests.
	 * @param settings the service and its settings
	 * @param choiceCount candidates compared per pick, {@code >= 2}
	 * @param random called once per pick, on the picking thread
	 * @throws IllegalArgumentException if {@code choiceCount < 2}
	 */
	public PeakEwmaBalancer(StrategySettings settings, int choiceCount, Supplier<? extends RandomGenerator> random) {
		super(settings, random);
		if (choiceCount < 2) {
			throw new IllegalArgumentException("choice-count must be an integer >= 2, was " + choiceCount);
		}
		this.choiceCount = choiceCount;
	}

	/**
	 * Registers this strategy under {@value #NAME}.
	 * @param rules the rules of a service, by service id; called once per service (the
	 * decay time is applied by the service's statistics, not here)
	 * @return the factory
	 */
	public static StrategyFactory factory(Function<String, PeakEwmaRules> rules) {
		Objects.requireNonNull(rules, "rules");
		return StrategyFactory.of(NAME,
				(settings) -> new PeakEwmaBalancer(settings, rules.apply(settings.serviceId()).choiceCount()));
	}

	@Override
	protected int pick(Draws draws, PickContext context) {
		RandomGenerator random = random();
		int best = draws.draw(random);
		long now = context.nanoTime();
		boolean failures = context.anyFailing();
		double bestLoad = FailurePenalty.load(context, best, failures);
		double bestLatency = context.peakEwmaMillis(best, now);
		for (int drawn = 1; drawn < this.choiceCount; drawn++) {
			int other = draws.drawOther(random, best);
			double load = FailurePenalty.load(context, other, failures);
			double latency = context.peakEwmaMillis(other, now);
			boolean cheaper;
			if (!(latency > 0) || !(bestLatency > 0)) {
				// Neutral: no average to compare (none yet, or decayed to 0 after a long
				// silence), or the same one for both.
				cheaper = load < bestLoad;
			}
			else {
				cheaper = latency * (load + 1) < bestLatency * (bestLoad + 1);
			}
			if (cheaper) {
				best = other;
				bestLoad = load;
				bestLatency = latency;
			}
		}
		return best;
	}

	/**
	 * Candidates compared per pick.
	 * @return {@code >= 2}
	 */
	public int choiceCount() {
		return this.choiceCount;
	}

	@Override
	public String name() {
		return NAME;
	}

}
