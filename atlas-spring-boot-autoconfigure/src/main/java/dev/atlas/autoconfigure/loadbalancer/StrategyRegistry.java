package dev.atlas.autoconfigure.loadbalancer;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;

/**
 * The load-balancing strategies registered by name: every {@link StrategyFactory} bean,
 * Atlas's own ({@code weighted-random}, {@code smooth-round-robin}) and the
 * application's. Immutable and thread-safe.
 */
public final class StrategyRegistry {

	private final Map<String, StrategyFactory> factories;

	/**
	 * Creates the registry.
	 * @param factories every registered factory
	 * @throws IllegalStateException if a name is blank or two factories share one
	 */
	public StrategyRegistry(List<StrategyFactory> factories) {
		Map<String, StrategyFactory> byName = new LinkedHashMap<>();
		for (StrategyFactory factory : factories) {
			String name = factory.name();
			if (name == null || name.isBlank()) {
				throw new IllegalStateException("StrategyFactory " + factory.getClass().getName() + " has no name");
			}
			StrategyFactory previous = byName.putIfAbsent(name, factory);
			if (previous != null) {
				throw new IllegalStateException("Two load-balancing strategies are registered as '" + name + "': "
						+ previous.getClass().getName() + " and " + factory.getClass().getName());
			}
		}
		this.factories = Collections.unmodifiableMap(byName);
	}

	/**
	 * The registered names, in registration order.
	 * @return an unmodifiable set
	 */
	public Set<String> names() {
		return this.factories.keySet();
	}

	/**
	 * Checks that a configured strategy name is registered.
	 * @param property the property that names it, for the message
	 * @param name the configured name
	 * @throws IllegalArgumentException naming the property and the registered names if it
	 * is not registered
	 */
	public void requireRegistered(String property, String name) {
		if (!this.factories.containsKey(name)) {
			throw new IllegalArgumentException(
					"Invalid " + property + ": '" + name + "' is not a load-balancing strategy; allowed values: "
							+ String.join(", ", this.factories.keySet())
							+ " (the names of the registered StrategyFactory beans)");
		}
	}

	/**
	 * Creates the strategy of one service.
	 * @param name a registered name
	 * @param settings the service and its settings
	 * @return a new strategy
	 * @throws IllegalArgumentException if the name is not registered
	 */
	public LoadBalancingStrategy create(String name, StrategySettings settings) {
		requireRegistered("atlas.loadbalancer.strategy", name);
		return this.factories.get(name).create(settings);
	}

}
