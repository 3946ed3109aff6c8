package dev.atlas.autoconfigure.client;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClientsProperties;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.support.GenericApplicationContext;

/**
 * Spring Cloud's {@link LoadBalancerClientFactory}, with the look-ups that every
 * load-balanced request makes answered from a per-service cache instead of the service's
 * bean factory: the service's load balancer ({@link #getInstance(String)}), its
 * {@link LoadBalancerLifecycle} beans ({@code getInstances(serviceId,
 * LoadBalancerLifecycle.class)}, which Spring Cloud's blocking client, its retrying
 * interceptor, its WebClient filters, Feign's clients and the gateway's filter each call
 * once or twice per request, building a new map of the beans each time), and the load
 * balancer's supplier chain ({@link #getLazyProvider}).
 *
 * <p>
 * The answers are those of the service's child context, read the first time they are
 * asked for (which creates the context as Spring Cloud would) and kept while the context
 * lives: a child context's singletons do not change once it is refreshed. Only singletons
 * are kept: a look-up that finds a bean of another scope is answered from the bean
 * factory every time, as in Spring Cloud. {@link #destroy()} forgets them with the
 * contexts.
 *
 * <p>
 * Once destroyed (the application context is closing), the factory creates no context:
 * Spring Cloud's would create one again for a call still made then, never closed, whose
 * beans are created in the closing application, where refresh-scoped beans are then
 * created anew and never shut down, and meters registered again. Such calls come from a
 * registry client (a Eureka client whose own calls go through a {@code @LoadBalanced}
 * builder: its scheduled tasks, and its deregistration as it shuts down, which then
 * created a second Eureka client with its threads), from requests still on their way, and
 * from beans being destroyed ({@code @PreDestroy}): the load balancers may close before
 * the beans that call through them, as those do not depend on them. Such a call finds no
 * load balancer ({@code null}, no lifecycles), which Spring Cloud's clients and Atlas's
 * answer as for a service without instances.
 *
 * <p>
 * Thread-safe: two threads may fill a service's entry at the same time, with equal
 * answers.
 *
 * @since 0.1.0
 */
public class AtlasLoadBalancerClientFactory extends LoadBalancerClientFactory {

	/** Marks a look-up that must not be cached (a bean that is not a singleton). */
	private static final Object NOT_CACHED = new Object();

	private final Map<String, Object> loadBalancers = new ConcurrentHashMap<>();

	private final Map<String, Object> lifecycles = new ConcurrentHashMap<>();

	/** By service: its beans looked up by class, {@link #NOT_CACHED} when not kept. */
	private final Map<String, Map<Class<?>, Object>> beans = new ConcurrentHashMap<>();

	private volatile boolean destroyed;

	/**
	 * Creates the factory.
	 * @param properties the per-client properties of Spring Cloud LoadBalancer
	 */
	public AtlasLoadBalancerClientFactory(LoadBalancerClientsProperties properties) {
		super(properties);
	}

	/**
	 * The service's load balancer, as {@link LoadBalancerClientFactory#getInstance}
	 * answers it.
	 * @param serviceId the service
	 * @return its load balancer, {@code null} when its context has none, or when it has
	 * no context and this factory is closed
	 */
	@Override
	public @Nullable ReactiveLoadBalancer<ServiceInstance> getInstance(String serviceId) {
		Object cached = this.loadBalancers.get(serviceId);
		if (cached instanceof ReactiveLoadBalancer<?>) {
			return cast(cached);
		}
		ReactiveLoadBalancer<ServiceInstance> found = unlessClosed(() -> super.getInstance(serviceId), null);
		if (cached == null && found != null) {
			this.loadBalancers.put(serviceId,
					singletonsOnly(serviceId, ReactorServiceInstanceLoadBalancer.class) ? found : NOT_CACHED);
		}
		return found;
	}

	/**
	 * The service's bean of a class, as {@link LoadBalancerClientFactory#getInstance}
	 * answers it; from a cache when the class has no generics and every bean of it is a
	 * singleton (Atlas's retry paths look up the service's retry budget on every
	 * request).
	 * @param name the service
	 * @param clazz the class of the bean
	 * @param generics its generics; none for a cached look-up
	 * @return the bean, {@code null} when the context has none, or when the service has
	 * no context and this factory is closed
	 */
	@Override
	public <X> @Nullable X getInstance(String name, Class<?> clazz, Class<?>... generics) {
		if (generics.length != 0) {
			return unlessClosed(() -> super.getInstance(name, clazz, generics), null);
		}
		Map<Class<?>, Object> ofService = this.beans.computeIfAbsent(name, (n) -> new ConcurrentHashMap<>());
		Object cached = ofService.get(clazz);
		if (cached != null && cached != NOT_CACHED) {
			return cast(cached);
		}
		X found = unlessClosed(() -> super.getInstance(name, clazz, generics), null);
		if (cached == null && found != null) {
			ofService.put(clazz, singletonsOnly(name, clazz) ? found : NOT_CACHED);
		}
		return found;
	}

	/**
	 * The service's bean of a type, as {@link LoadBalancerClientFactory#getInstance}
	 * answers it (not cached).
	 * @param <T> the type
	 * @param name the service
	 * @param type the type of the bean
	 * @return the bean, {@code null} when the context has none, or when the service has
	 * no context and this factory is closed
	 */
	@Override
	public <T> @Nullable T getInstance(String name, Class<T> type) {
		return unlessClosed(() -> super.getInstance(name, type), null);
	}

	/**
	 * The service's beans of a type, as {@link LoadBalancerClientFactory#getInstances}
	 * answers them; for {@link LoadBalancerLifecycle}, from the cache.
	 * @param <T> the type
	 * @param name the service
	 * @param type the type of the beans
	 * @return the beans by name, empty when the context has none, or when the service has
	 * no context and this factory is closed; the cached map is read-only
	 */
	@Override
	public <T> @Nullable Map<String, T> getInstances(String name, Class<T> type) {
		if (type != LoadBalancerLifecycle.class) {
			return unlessClosed(() -> super.getInstances(name, type), Map.of());
		}
		Object cached = this.lifecycles.get(name);
		if (cached instanceof Map<?, ?> map) {
			return cast(map);
		}
		Map<String, T> found;
		try {
			found = super.getInstances(name, type);
		}
		catch (ClosedFactoryException closed) {
			// not through unlessClosed: what follows would ask for the context again
			return Map.of();
		}
		if (cached != null || found == null) {
			return found;
		}
		if (!singletonsOnly(name, type)) {
			this.lifecycles.put(name, NOT_CACHED);
			return found;
		}
		Map<String, T> kept = Collections.unmodifiableMap(new LinkedHashMap<>(found));
		this.lifecycles.put(name, kept);
		return kept;
	}

	/**
	 * A look-up of Spring Cloud's factory, or {@code whenClosed} when it needed a context
	 * and this factory is closed.
	 */
	private static <T> @Nullable T unlessClosed(Supplier<@Nullable T> lookUp, @Nullable T whenClosed) {
		try {
			return lookUp.get();
		}
		catch (ClosedFactoryException closed) {
			return whenClosed;
		}
	}

	/**
	 * A provider of a service's bean of a type that resolves it when first asked for (not
	 * now: the context may still be being built) and, when every bean of the type is a
	 * singleton, keeps it: Spring Cloud's load balancers ask it for the service's
	 * {@code ServiceInstanceListSupplier} on every request, which Spring Cloud's lazy
	 * provider resolves by type each time.
	 * @param <T> the type
	 * @param name the service
	 * @param type the type of the bean
	 * @return the provider; thread-safe
	 */
	@Override
	public <T> ObjectProvider<T> getLazyProvider(String name, Class<T> type) {
		return new KeptProvider<>(super.getLazyProvider(name, type), () -> singletonsOnly(name, type));
	}

	/**
	 * Whether every bean of the type that the service's context sees (its own and its
	 * ancestors') is a singleton, so that an answer may be kept.
	 */
	private boolean singletonsOnly(String name, Class<?> type) {
		GenericApplicationContext context = getContext(name);
		for (String beanName : BeanFactoryUtils.beanNamesForTypeIncludingAncestors(context, type)) {
			if (!context.isSingleton(beanName)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Creates a service's context, as Spring Cloud does the first time the service is
	 * asked for; not once this factory is destroyed.
	 * @param name the service
	 * @return its context, refreshed
	 * @throws IllegalStateException when this factory was destroyed (the application
	 * context is closing) before or while the context was created (it is then closed)
	 */
	@Override
	public GenericApplicationContext createContext(String name) {
		if (this.destroyed) {
			throw new ClosedFactoryException(name);
		}
		GenericApplicationContext context = super.createContext(name);
		if (this.destroyed) {
			// destroyed meanwhile: it would never be closed
			context.close();
			throw new ClosedFactoryException(name);
		}
		return context;
	}

	/**
	 * Closes the services' contexts, then forgets the cached answers (a look-up made in
	 * between is forgotten too); creates no context afterwards.
	 */
	@Override
	public void destroy() {
		this.destroyed = true;
		super.destroy();
		this.loadBalancers.clear();
		this.lifecycles.clear();
		this.beans.clear();
	}

	@SuppressWarnings("unchecked")
	private static <T> T cast(Object value) {
		return (T) value;
	}

	/**
	 * A provider that keeps the first bean its delegate provides, when allowed: decided
	 * once, at the first bean found.
	 */
	private static final class KeptProvider<T> implements ObjectProvider<T> {

		private final ObjectProvider<T> delegate;

		private final BooleanSupplier keepable;

		private volatile @Nullable T kept;

		/** {@code null} until decided. */
		private volatile @Nullable Boolean keep;

		KeptProvider(ObjectProvider<T> delegate, BooleanSupplier keepable) {
			this.delegate = delegate;
			this.keepable = keepable;
		}

		private @Nullable T keep(@Nullable T found) {
			if (found == null) {
				return null;
			}
			Boolean decided = this.keep;
			if (decided == null) {
				decided = this.keepable.getAsBoolean();
				this.keep = decided;
			}
			if (decided) {
				this.kept = found;
			}
			return found;
		}

		@Override
		public T getObject() {
			T bean = this.kept;
			return (bean != null) ? bean : Objects.requireNonNull(keep(this.delegate.getObject()), "getObject()");
		}

		@Override
		public T getObject(@Nullable Object... args) {
			return this.delegate.getObject(args);
		}

		@Override
		public @Nullable T getIfAvailable() {
			T bean = this.kept;
			return (bean != null) ? bean : keep(this.delegate.getIfAvailable());
		}

		@Override
		public T getIfAvailable(Supplier<T> defaultSupplier) {
			T bean = getIfAvailable();
			return (bean != null) ? bean : defaultSupplier.get();
		}

		@Override
		public @Nullable T getIfUnique() {
			T bean = this.kept;
			return (bean != null) ? bean : keep(this.delegate.getIfUnique());
		}

		@Override
		public T getIfUnique(Supplier<T> defaultSupplier) {
			T bean = getIfUnique();
			return (bean != null) ? bean : defaultSupplier.get();
		}

		@Override
		public Stream<T> stream() {
			return this.delegate.stream();
		}

		@Override
		public Stream<T> orderedStream() {
			return this.delegate.orderedStream();
		}

	}

	/** A context asked for after the factory was destroyed. */
	private static final class ClosedFactoryException extends IllegalStateException {

		private static final long serialVersionUID = 1L;

		ClosedFactoryException(String name) {
			super("No load balancer for service '" + name + "': the application context is closing");
		}

	}

}
