package dev.atlas.autoconfigure.loadbalancer;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.LoadBalancerProperties;
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
	 * @throws IllegalStateException if a name is blank or not lower-case kebab-case, or
	 * two factories share one
	 */
	public StrategyRegistry(List<StrategyFactory> factories) {
		Map<String, StrategyFactory> byName = new LinkedHashMap<>();
		for (StrategyFactory factory : factories) {
			String name = factory.name();
			if (name == null || name.isBlank() || !name.equals(LoadBalancerProperties.normalizeStrategy(name))) {
				throw new IllegalStateException("StrategyFactory " + factory.getClass().getName() + " is named '" + name
						+ "': a strategy name must be lower-case kebab-case, e.g. least-request, as "
						+ "atlas.loadbalancer.strategy values are read");
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
	 * @throws IllegalStateException if the name is not registered (configured names are
	 * checked at startup)
	 */
	public LoadBalancingStrategy create(String name, StrategySettings settings) {
		StrategyFactory factory = this.factories.get(name);
		if (factory == null) {
			throw new IllegalStateException("No load-balancing strategy is registered as '" + name + "'");
		}
		return factory.create(settings);
	}

}
