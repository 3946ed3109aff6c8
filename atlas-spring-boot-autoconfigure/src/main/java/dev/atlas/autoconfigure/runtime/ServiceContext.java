package dev.atlas.autoconfigure.runtime;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.core.env.Environment;

/**
 * What a load-balancer child context (one per service) gives the beans that each concern
 * declares in it: the service it serves, where meters go, and Atlas's own bean of a step
 * (for the {@link RuntimeStep} that rebuilds it). Stateless.
 *
 * @since 0.1.0
 */
public final class ServiceContext {

	private ServiceContext() {
	}

	/**
	 * The service of a load-balancer child context.
	 * @param environment the child context's environment
	 * @return the service id; empty outside a load-balancer child context
	 */
	public static String serviceId(Environment environment) {
		return environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME, "");
	}

	/**
	 * Where a bean of the child context registers its meters: the application's registry,
	 * or, when it has none (or several), an empty registry of the bean's own, which goes
	 * with the bean (one registry shared by every context in the JVM would keep their
	 * meters and warn of a second registration).
	 * @param meterRegistry the application's registries
	 * @return never {@code null}
	 */
	public static MeterRegistry meters(ObjectProvider<MeterRegistry> meterRegistry) {
		return meterRegistry.getIfUnique(CompositeMeterRegistry::new);
	}

	/**
	 * Atlas's own bean of a name in a child context.
	 * @param beanFactory the child context
	 * @param name the bean name Atlas declares it under
	 * @param type its type
	 * @param <T> its type
	 * @return {@code null} when the context has no such bean of its own (the application
	 * replaced it with a bean of another name, or the step is off)
	 */
	public static <T> @Nullable T ownBean(ConfigurableListableBeanFactory beanFactory, String name, Class<T> type) {
		return (beanFactory.containsLocalBean(name) && beanFactory.isTypeMatch(name, type))
				? beanFactory.getBean(name, type) : null;
	}

}
