package dev.atlas.loadbalancer.choice;

import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@link Strategy#WEIGHTED_RANDOM}: picks each instance with probability weight /
 * Σweight, in O(1) per pick from an {@link AliasTable} built once per snapshot.
 * Thread-safe and lock-free.
 */
public final class WeightedRandomBalancer extends SnapshotBalancer<AliasTable> {

	private final Supplier<? extends RandomGenerator> random;

	/**
	 * Creates a balancer drawing from {@link ThreadLocalRandom}.
	 * @param serviceId not {@code null}
	 * @param parser not {@code null}
	 * @param allZeroWeightsPolicy not {@code null}
	 * @param meterRegistry not {@code null}
	 */
	public WeightedRandomBalancer(String serviceId, InstanceAttributesParser parser,
			AllZeroWeightsPolicy allZeroWeightsPolicy, MeterRegistry meterRegistry) {
		this(serviceId, parser, allZeroWeightsPolicy, meterRegistry, ThreadLocalRandom::current);
	}

	/**
	 * Creates a balancer with a chosen source of randomness, e.g. a seeded one in tests.
	 * @param serviceId not {@code null}
	 * @param parser not {@code null}
	 * @param allZeroWeightsPolicy not {@code null}
	 * @param meterRegistry not {@code null}
	 * @param random called once per pick, on the picking thread; what it returns must be
	 * safe to use from that thread (a seeded {@link java.util.SplittableRandom} is fine
	 * for single-threaded tests)
	 */
	public WeightedRandomBalancer(String serviceId, InstanceAttributesParser parser,
			AllZeroWeightsPolicy allZeroWeightsPolicy, MeterRegistry meterRegistry,
			Supplier<? extends RandomGenerator> random) {
		super(serviceId, parser, allZeroWeightsPolicy, meterRegistry);
		this.random = Objects.requireNonNull(random, "random");
	}

	@Override
	protected AliasTable buildTable(double[] weights) {
		return AliasTable.of(weights);
	}

	@Override
	protected int pick(AliasTable table) {
		return table.sample(this.random.get());
	}

	@Override
	public Strategy strategy() {
		return Strategy.WEIGHTED_RANDOM;
	}

}
