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
 * The {@value #NAME} strategy: power of two choices (Mitzenmacher, "The Power of Two
 * Choices in Randomized Load Balancing", 2001) over this caller's in-flight requests per
 * instance, as Envoy's least-request balancer. Each pick draws
 * {@link LeastRequestRules#choiceCount()} candidates (distinct when it can), each with
 * probability weight ÷ Σweight, and keeps the one with the lowest
 * {@code in-flight^bias ÷ weight}; an instance with nothing in flight (and no recent
 * failures) beats one with requests in flight; ties keep the earlier draw. With bias 0
 * neither in-flight requests nor failures are read.
 *
 * <p>
 * So with nothing in flight the choice is weighted random (effective weights, warmup
 * included); under load, in-flight requests are balanced in proportion to weight, and a
 * slow instance, whose requests stay in flight longer, gets fewer. Differences from
 * Envoy: with unequal weights Envoy schedules every instance by
 * {@code weight ÷ (in-flight + 1)^bias} (earliest deadline first); Atlas draws by weight
 * and compares {@code in-flight^bias ÷ weight}, which is O(1) per pick without a shared
 * schedule (no lock), and keeps shares proportional to weight when idle (with
 * {@code + 1}, the heavier of two idle instances would always win). In-flight requests
 * are this caller's own (counted by the request lifecycle), not the instance's total, and
 * counted with the instance's recent failures ({@link FailurePenalty}): an instance
 * answering errors at once has little in flight but is not taken for an idle one.
 *
 * <p>
 * Thread-safe and lock-free; a pick allocates nothing.
 *
 * @since 0.1.0
 */
public final class LeastRequestBalancer extends DrawingBalancer {

	/** The name of this strategy in properties. */
	public static final String NAME = "least-request";

	private final LeastRequestRules rules;

	/**
	 * Creates a balancer drawing from {@link ThreadLocalRandom}.
	 * @param settings the service and its settings
	 * @param rules choice count and bias
	 */
	public LeastRequestBalancer(StrategySettings settings, LeastRequestRules rules) {
		this(settings, rules, ThreadLocalRandom::current);
	}

	/**
	 * Creates a balancer with a chosen source of randomness, e.g. a seeded one in tests.
	 * @param settings the service and its settings
	 * @param rules choice count and bias
	 * @param random called once per pick, on the picking thread
	 */
	public LeastRequestBalancer(StrategySettings settings, LeastRequestRules rules,
			Supplier<? extends RandomGenerator> random) {
		super(settings, random);
		this.rules = Objects.requireNonNull(rules, "rules");
	}

	/**
	 * Registers this strategy under {@value #NAME}.
	 * @param rules the rules of a service, by service id; called once per service
	 * @return the factory
	 */
	public static StrategyFactory factory(Function<String, LeastRequestRules> rules) {
		Objects.requireNonNull(rules, "rules");
		return StrategyFactory.of(NAME,
				(settings) -> new LeastRequestBalancer(settings, rules.apply(settings.serviceId())));
	}

	@Override
	protected int pick(Draws draws, PickContext context) {
		RandomGenerator random = random();
		int best = draws.draw(random);
		double bias = this.rules.activeRequestBias();
		if (bias == 0) {
			return best;
		}
		boolean failures = context.anyFailing();
		double bestLoad = FailurePenalty.load(context, best, failures);
		for (int drawn = 1; drawn < this.rules.choiceCount(); drawn++) {
			if (bestLoad == 0) {
				// Nothing beats an idle healthy instance; later draws could only tie.
				return best;
			}
			int other = draws.drawOther(random, best);
			double load = FailurePenalty.load(context, other, failures);
			if (load == 0 || lighter(load, draws.weights[other], bestLoad, draws.weights[best], bias)) {
				best = other;
				bestLoad = load;
			}
		}
		return best;
	}

	/** Whether {@code load^bias / weight < bestLoad^bias / bestWeight}. */
	private static boolean lighter(double load, double weight, double bestLoad, double bestWeight, double bias) {
		if (bias == 1.0) {
			return load * bestWeight < bestLoad * weight;
		}
		return Math.pow(load, bias) * bestWeight < Math.pow(bestLoad, bias) * weight;
	}

	/**
	 * The rules in force.
	 * @return the rules
	 */
	public LeastRequestRules rules() {
		return this.rules;
	}

	@Override
	public String name() {
		return NAME;
	}

}
