package dev.atlas.loadbalancer.choice;

import java.util.Objects;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import dev.atlas.loadbalancer.instance.InstanceSnapshot;
import dev.atlas.loadbalancer.spi.StrategySettings;

/**
 * Base of the power-of-choices balancers ({@code least-request}, {@code peak-ewma}):
 * their table is the snapshot's {@link Draws}, and a pick without a context is one draw
 * (weighted random). Subclasses compare draws in {@code pick(Draws, PickContext)}.
 * Thread-safe and lock-free.
 */
abstract class DrawingBalancer extends SnapshotBalancer<Draws> {

	private final Supplier<? extends RandomGenerator> random;

	DrawingBalancer(StrategySettings settings, Supplier<? extends RandomGenerator> random) {
		super(settings);
		this.random = Objects.requireNonNull(random, "random");
	}

	/**
	 * The source of randomness of one pick.
	 * @return what the supplier gives on the picking thread
	 */
	final RandomGenerator random() {
		return this.random.get();
	}

	@Override
	protected final Draws buildTable(InstanceSnapshot candidates, double[] weights) {
		return new Draws(weights);
	}

	@Override
	protected final int pick(Draws table) {
		return table.draw(this.random.get());
	}

}
