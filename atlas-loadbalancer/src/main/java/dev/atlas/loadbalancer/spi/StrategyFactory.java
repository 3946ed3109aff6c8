package dev.atlas.loadbalancer.spi;

import java.util.Objects;
import java.util.function.Function;

/**
 * Registers a {@link LoadBalancingStrategy} under a name. Atlas's auto-configuration
 * collects every bean of this type; {@code atlas.loadbalancer.strategy=<name>} (globally,
 * or per service under {@code atlas.services.<service-id>.}) selects one, and an unknown
 * name fails startup listing the registered ones. Two factories with one name fail
 * startup too.
 *
 * <p>
 * Implementations must be thread-safe.
 *
 * @since 0.1.0
 */
public interface StrategyFactory {

	/**
	 * The name of the strategy, as written in properties.
	 * @return lower-case kebab-case, e.g. {@code least-request}; never blank
	 */
	String name();

	/**
	 * Creates the strategy of one service; called once per service, when the service is
	 * first called.
	 * @param settings the service and its settings
	 * @return a new strategy
	 */
	LoadBalancingStrategy create(StrategySettings settings);

	/**
	 * A factory from a name and a function.
	 * @param name lower-case kebab-case, e.g. {@code least-request}
	 * @param create creates the strategy of one service; thread-safe
	 * @return the factory
	 * @throws NullPointerException if an argument is {@code null}
	 */
	static StrategyFactory of(String name, Function<StrategySettings, ? extends LoadBalancingStrategy> create) {
		Objects.requireNonNull(name, "name");
		Objects.requireNonNull(create, "create");
		return new StrategyFactory() {

			@Override
			public String name() {
				return name;
			}

			@Override
			public LoadBalancingStrategy create(StrategySettings settings) {
				return create.apply(settings);
			}

		};
	}

}
