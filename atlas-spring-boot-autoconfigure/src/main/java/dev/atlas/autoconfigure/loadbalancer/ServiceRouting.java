package dev.atlas.autoconfigure.loadbalancer;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.atlas.autoconfigure.runtime.RuntimeRules;
import dev.atlas.autoconfigure.runtime.RuntimeStep;
import dev.atlas.autoconfigure.runtime.ServiceRules;
import dev.atlas.autoconfigure.settings.ServiceSettings;
import dev.atlas.loadbalancer.instance.InstanceAttributesParser;
import dev.atlas.loadbalancer.pipeline.Pipeline;
import dev.atlas.loadbalancer.pipeline.ServicePipeline;
import dev.atlas.loadbalancer.weighting.SlowStart;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

/**
 * The routing of one service in its load-balancer context: its {@link ServiceRules}
 * (registered with {@link RuntimeRules} for as long as the context lives, so that runtime
 * changes of the rules reach the service's {@link RuntimeStep}s) and what
 * {@code /actuator/atlas} reads of the version in force.
 *
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class ServiceRouting implements DisposableBean {

	private final ServicePipeline pipeline;

	private final ServiceRules rules;

	private final RuntimeRules runtime;

	/**
	 * Creates the routing of a service and registers it for runtime changes.
	 * @param serviceId the service
	 * @param pipeline the service's routing, shared by its stage and load balancer
	 * @param settings the settings the first version was built with
	 * @param steps the parts that take new rules, in order
	 * @param parser parses lists into snapshots (one cache per version)
	 * @param runtime where runtime changes come from
	 */
	ServiceRouting(String serviceId, ServicePipeline pipeline, ServiceSettings settings, List<RuntimeStep> steps,
			InstanceAttributesParser parser, RuntimeRules runtime) {
		this.pipeline = pipeline;
		this.rules = new ServiceRules(serviceId, pipeline, settings, steps, parser);
		this.runtime = runtime;
		runtime.register(this.rules);
	}

	/**
	 * The service.
	 * @return the service id
	 */
	public String serviceId() {
		return this.rules.serviceId();
	}

	/**
	 * The settings in force.
	 * @return never {@code null}
	 */
	public ServiceSettings settings() {
		return this.rules.settings();
	}

	/**
	 * The rules in force as plain values (see {@code /actuator/atlas}).
	 * @return an ordered map
	 */
	public Map<String, @Nullable Object> rulesView() {
		return this.rules.rulesView();
	}

	/**
	 * When the rules last changed at runtime.
	 * @return {@code null} when they are still those of startup
	 */
	public @Nullable Instant changedAt() {
		return this.rules.changedAt();
	}

	/**
	 * The first step of a type in the version in force: its weight adjusters, then its
	 * candidate filters, then its strategy ({@link Pipeline#step}).
	 * @param type the type
	 * @param <T> the type
	 * @return {@code null} when none
	 */
	public <T> @Nullable T step(Class<T> type) {
		return this.pipeline.current().step(type);
	}

	/**
	 * Warmup in the version in force.
	 * @return {@code null} when warmup is not in the pipeline
	 */
	public @Nullable SlowStart slowStart() {
		return step(SlowStart.class);
	}

	/**
	 * Unregisters from runtime changes when the child context closes.
	 */
	@Override
	public void destroy() {
		this.runtime.unregister(this.rules);
	}

	@Override
	public String toString() {
		return "ServiceRouting[" + serviceId() + ", " + this.pipeline.current() + ']';
	}

}
