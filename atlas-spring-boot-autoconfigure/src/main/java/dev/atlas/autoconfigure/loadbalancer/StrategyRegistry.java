package dev.atlas.autoconfigure.loadbalancer;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.choice.RingHashBalancer;
import dev.atlas.loadbalancer.spi.LoadBalancingStrategy;
import dev.atlas.loadbalancer.spi.StrategyFactory;
import dev.atlas.loadbalancer.spi.StrategySettings;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load-balancing strategies registered by name: every {@link StrategyFactory} bean,
 * Atlas's own ({@code weighted-random}, {@code smooth-round-robin}) and the
 * application's. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class StrategyRegistry {

	private static final Logger log = LoggerFactory.getLogger(StrategyRegistry.class);

	private final Map<String, StrategyFactory> factories;

	private final Set<StrategyFactory> builtIns;

	/**
	 * Creates the registry.
	 * @param factories every registered factory
	 * @throws IllegalStateException if a name is blank or not lower-case kebab-case, or
	 * two factories share one
	 */
	public StrategyRegistry(List<StrategyFactory> factories) {
		this(factories, Set.of());
	}

	/**
	 * Creates the registry, knowing which factories are Atlas's own.
	 * @param factories every registered factory
	 * @param builtIns those of {@code factories} that Atlas's auto-configuration
	 * registered (compared by identity): an application's factory of the same name
	 * replaces one of them
	 * @throws IllegalStateException if a name is blank or not lower-case kebab-case, or
	 * two factories share one, unless exactly one of them is built in
	 */
	public StrategyRegistry(List<StrategyFactory> factories, Set<StrategyFactory> builtIns) {
		Set<StrategyFactory> atlas = Collections.newSetFromMap(new IdentityHashMap<>());
		atlas.addAll(builtIns);
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
				boolean previousBuiltIn = atlas.contains(previous);
				if (previousBuiltIn != atlas.contains(factory)) {
					// The application's own strategy of a name Atlas also registers wins:
					// one that predates Atlas's keeps working.
					StrategyFactory own = previousBuiltIn ? factory : previous;
					byName.put(name, own);
					log.info("Strategy '{}' is the application's {}, not Atlas's built-in one", name,
							own.getClass().getName());
					continue;
				}
				throw new IllegalStateException("Two load-balancing strategies are registered as '" + name + "': "
						+ previous.getClass().getName() + " and " + factory.getClass().getName());
			}
		}
		this.factories = Collections.unmodifiableMap(byName);
		this.builtIns = atlas;
	}

	/**
	 * The factory registered under a name (tests).
	 * @param name a name
	 * @return the factory, or {@code null}
	 */
	@Nullable StrategyFactory factory(String name) {
		return this.factories.get(name);
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
	 * Checks a service's strategy settings: the strategy is registered, and Atlas's
	 * {@code ring-hash} has a key source (else every request would silently be balanced
	 * by weighted random).
	 * @param prefix where the service's settings are written, e.g. {@code atlas} or
	 * {@code atlas.services.user-service}
	 * @param settings the service's settings
	 * @throws IllegalArgumentException naming the property and the allowed values
	 */
	public void check(String prefix, ServiceSettings settings) {
		StrategyRules rules = settings.get(StrategyRules.SECTION);
		requireRegistered(prefix + ".loadbalancer.strategy", rules.strategy());
		if (RingHashBalancer.NAME.equals(rules.strategy())
				&& this.builtIns.contains(this.factories.get(RingHashBalancer.NAME)) && !rules.hash().hasKeySource()) {
			throw new IllegalArgumentException(
					"Invalid " + prefix + ".loadbalancer.strategy: ring-hash needs a hash key; set " + prefix
							+ ".loadbalancer.hash.header (a request header, e.g. X-User-Id) or " + prefix
							+ ".loadbalancer.hash.cookie (a cookie name)");
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
